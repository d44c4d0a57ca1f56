"""Federated rounds: Ferret (Alg. 1 of Shu et al. ICML 2025) and the baselines FedAvg, FedZO, FedKSeed.

One round: sample clients; each runs T local steps from the global weights and sends a message;
the server decodes every message into an update Delta_i, averages them and steps
w ← w − server_lr · (momentum-smoothed) mean Delta_i. Messages per algorithm:

* ferret   — (seed, K_l per block, gamma): Delta_i is reconstructed from the shared-seed bases;
* fedavg   — the full first-order update (d floats);
* fedzo    — the full update after T zeroth-order steps (two-point estimates, private directions);
* fedkseed — T (candidate-seed index, projected-gradient scalar) pairs; directions come from a pool of
  candidate seeds fixed at the start and known to everyone (Qin et al. 2024).

Everything random is drawn from generators seeded by (run seed, round, client), so a round can be
replayed anywhere (another process, a Flower client) and a resumed run ends where an uninterrupted one
ends. Messages are aggregated in client order so the float sums do not depend on arrival order.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from paperkit.core.errors import ConfigError, ConvergenceError
from paperkit.methods.ferret.projection import (
    ALLOCATIONS,
    SEED_POOLS,
    UPDATE_ALLOCATIONS,
    Blocks,
    allocate,
    derive_seed,
    iter_bases,
    pool_subsets,
    project,
    project_pool,
    reconstruct,
    reconstruct_pool,
    seed_pool,
)
from paperkit.methods.ferret.tasks import Task

ALGOS = ("ferret", "fedavg", "fedzo", "fedkseed")
OPTIMIZERS = ("sgd", "adam")
FLOAT_BYTES, SEED_BYTES, INDEX_BYTES = 4, 8, 4
FLOAT32_MAX = 3.4028234663852886e38
# Rounds of one run: a round takes a second or more, so this is days; the papers run a few thousand.
MAX_ROUNDS = 100_000
# stream tags for derive_seed
_SAMPLE, _BATCH, _PROJ, _ZO, _POOL = 0xC1, 0xBA, 0x9A, 0x20, 0x900


@dataclass
class FedConfig:
    algo: str = "ferret"
    n_clients: int = 20
    fraction: float = 0.25
    rounds: int = 30
    local_steps: int = 10
    lr: float = 0.5
    batch_size: int = 32
    optimizer: str = "sgd"
    server_lr: float = 1.0
    momentum: float = 0.0
    k: int = 100
    blocks: str = "auto"
    alloc: str = "norm"
    seed_pool: str = "run"
    clip: float | None = None
    zo_eps: float = 1e-3
    kseed_pool: int = 4096
    seed: int = 0
    device: str = "cpu"

    def validate(self) -> FedConfig:
        # messages name the command-line options (ferret-train/-server) that set each field
        if self.algo not in ALGOS:
            raise ConfigError(f"--algo '{self.algo}' is unknown; expected one of {', '.join(ALGOS)}")
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"--optimizer '{self.optimizer}' is unknown; expected sgd or adam")
        if self.alloc not in ALLOCATIONS:
            raise ConfigError(f"--alloc '{self.alloc}' is unknown; expected one of {', '.join(ALLOCATIONS)}")
        if self.seed_pool not in SEED_POOLS:
            raise ConfigError(f"--seed-pool '{self.seed_pool}' is unknown; expected one of {', '.join(SEED_POOLS)}")
        if not (0.0 < self.fraction <= 1.0):  # also false for NaN
            raise ConfigError(f"--fraction {self.fraction} is out of range; expected a value in (0, 1]")
        checks = [("--k", self.k, 1), ("--clients", self.n_clients, 1), ("--local-steps", self.local_steps, 1),
                  ("--batch-size", self.batch_size, 1), ("--kseed-pool", self.kseed_pool, 1)]
        for name, v, lo in checks:
            if v < lo:
                raise ConfigError(f"{name} {v} is out of range; expected at least {lo}")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise ConfigError(f"--rounds {self.rounds} is out of range; expected 1 to {MAX_ROUNDS}")
        for name, v in (("--lr", self.lr), ("--server-lr", self.server_lr), ("--zo-eps", self.zo_eps)):
            if not (v > 0 and math.isfinite(v)):
                raise ConfigError(f"{name} {v} is out of range; expected a positive number")
            if v > FLOAT32_MAX:  # the weights are float32: the step itself would overflow
                raise ConfigError(f"{name} {v:g} is out of range; expected at most {FLOAT32_MAX:.3g} (float32)")
        if not 0.0 <= self.momentum < 1.0:  # also false for NaN
            raise ConfigError(f"--momentum {self.momentum} is out of range; expected [0, 1)")
        if self.clip is not None and not (self.clip > 0 and math.isfinite(self.clip)):
            raise ConfigError(f"--clip {self.clip} is out of range; expected a positive norm")
        if self.blocks not in ("auto", "tensor") and not str(self.blocks).isdigit():
            raise ConfigError(f"--blocks '{self.blocks}' is invalid; expected auto, tensor or a number of blocks")
        return self

    @property
    def clients_per_round(self) -> int:
        return max(1, int(round(self.fraction * self.n_clients)))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ClientMessage:
    """What one client sends after a round. ``payload``: gamma, full update, or FedKSeed scalars."""

    client: int
    round: int
    algo: str
    payload: torch.Tensor
    seed: int = 0
    counts: list[int] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)
    train_loss: float = float("nan")
    local_s: float = 0.0
    proj_s: float = 0.0

    @property
    def uplink_floats(self) -> int:
        return int(self.payload.numel())

    def uplink_bytes(self, alloc: str = "norm") -> int:
        n = FLOAT_BYTES * self.uplink_floats
        if self.algo == "ferret":
            # one seed; the per-block counts travel only when they depend on the update (norm/prop2
            # allocation, per-block seed pools: the pool subsets follow from the seed and the counts)
            n += SEED_BYTES + (INDEX_BYTES * len(self.counts) if alloc in UPDATE_ALLOCATIONS or self.indices else 0)
        elif self.algo == "fedkseed":
            n += INDEX_BYTES * len(self.indices)
        return n


@dataclass
class ServerState:
    weights: torch.Tensor
    momentum: torch.Tensor | None = None
    round: int = 0

    def to_checkpoint(self) -> dict[str, Any]:
        return {"weights": self.weights.cpu(), "momentum": None if self.momentum is None else self.momentum.cpu(),
                "round": self.round}

    @classmethod
    def from_checkpoint(cls, d: dict[str, Any], device: torch.device | str = "cpu") -> ServerState:
        m = d.get("momentum")
        return cls(d["weights"].to(device), None if m is None else m.to(device), int(d["round"]))


def _one_thread(method):
    """Run a numeric step with one torch intra-op thread. Multi-threaded CPU kernels round differently
    from single-threaded ones, and the same seeds must give the same model bit for bit whatever
    ``--jobs`` is and wherever the step runs (ferret-train, a Flower ServerApp or a ClientApp)."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before = torch.get_num_threads()
        if before == 1:
            return method(*args, **kwargs)
        torch.set_num_threads(1)
        try:
            return method(*args, **kwargs)
        finally:
            torch.set_num_threads(before)

    return wrapper


class Federation:
    """A task, a config, and the client/server halves of one algorithm."""

    def __init__(self, task: Task, cfg: FedConfig):
        self.task = task
        self.cfg = cfg.validate()
        if cfg.n_clients != task.n_clients:
            raise ConfigError(f"the task has {task.n_clients} client shards but the config says {cfg.n_clients}")
        from paperkit.core.devices import resolve_device

        self.device = resolve_device(cfg.device)
        self.model = task.make_model().to(self.device)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.dim = sum(p.numel() for p in self.params)
        self._initial = self.get_vector().clone()
        b = cfg.blocks
        self.blocks = (Blocks.equal(self.dim, int(b)) if str(b).isdigit()
                       else Blocks.from_tensor_sizes([p.numel() for p in self.params], b))
        if cfg.algo == "ferret" and cfg.k < self.blocks.n_blocks:
            raise ConfigError(f"--k {cfg.k} is smaller than the number of blocks ({self.blocks.n_blocks}); raise "
                              "--k or use fewer --blocks")
        if cfg.algo == "ferret" and cfg.k > self.dim:
            # K bases of a d-dimensional space: beyond d they add work (K·d random numbers per client and
            # round) and nothing else
            raise ConfigError(f"--k {cfg.k} exceeds the number of trainable parameters ({self.dim}) of the "
                              f"{task.name} model; use --k {self.dim} or less")
        self.pool = [derive_seed(cfg.seed, _POOL, j) for j in range(cfg.kseed_pool)]
        # Ferret's per-block seed pool (official code): K candidate seeds fixed at the start
        self.ferret_pool = seed_pool(cfg.seed, cfg.k) if cfg.seed_pool == "per-block" else []

    # -- weights -----------------------------------------------------------------------------------
    def initial_state(self) -> ServerState:
        # the weights the model was built with (not its current ones: local training reuses the model)
        return ServerState(self._initial.clone())

    def get_vector(self) -> torch.Tensor:
        return nn.utils.parameters_to_vector(self.params).detach()

    def set_vector(self, vec: torch.Tensor) -> None:
        # copy, not torch's vector_to_parameters: that one makes the parameters views of ``vec``, so local
        # training would silently edit the caller's global weights
        vec = vec.to(self.device)
        with torch.no_grad():
            pos = 0
            for p in self.params:
                n = p.numel()
                p.copy_(vec[pos:pos + n].view_as(p))
                pos += n

    def sample_clients(self, rnd: int) -> list[int]:
        rng = np.random.default_rng(derive_seed(self.cfg.seed, _SAMPLE, rnd))
        return sorted(int(c) for c in rng.choice(self.cfg.n_clients, self.cfg.clients_per_round, replace=False))

    # -- client side -------------------------------------------------------------------------------
    def _loss_at(self, vec: torch.Tensor, batch: Any) -> float:
        self.set_vector(vec)
        with torch.no_grad():
            return float(self.task.loss(self.model, batch))

    @_one_thread
    def client_update(self, weights: torch.Tensor, rnd: int, client: int) -> ClientMessage:
        cfg = self.cfg
        gen = torch.Generator().manual_seed(derive_seed(cfg.seed, _BATCH, rnd, client))
        t0 = time.perf_counter()
        w0 = weights.to(self.device).clone()
        if cfg.algo in ("ferret", "fedavg"):
            delta, loss = self._first_order(w0, client, gen)
        else:
            delta, loss, scalars, idx = self._zeroth_order(w0, rnd, client, gen)
        local_s = time.perf_counter() - t0
        msg = ClientMessage(client, rnd, cfg.algo, delta, train_loss=loss, local_s=local_s)
        if cfg.algo == "ferret":
            t1 = time.perf_counter()
            msg.seed = derive_seed(cfg.seed, _PROJ, rnd, client)
            if cfg.seed_pool == "per-block":
                msg.counts, msg.indices = pool_subsets(cfg.k, self.blocks, delta, msg.seed)
                msg.payload = project_pool(delta, self.ferret_pool, self.blocks, msg.counts, msg.indices)
            else:
                msg.counts = allocate(cfg.k, self.blocks, delta, cfg.alloc)
                msg.payload = project(delta, msg.seed, self.blocks, msg.counts)
            msg.proj_s = time.perf_counter() - t1
        elif cfg.algo == "fedkseed":
            msg.payload, msg.indices = scalars, idx
        return msg

    def _first_order(self, w0: torch.Tensor, client: int, gen: torch.Generator) -> tuple[torch.Tensor, float]:
        cfg = self.cfg
        self.set_vector(w0)
        opt = (torch.optim.SGD(self.params, lr=cfg.lr) if cfg.optimizer == "sgd"
               else torch.optim.Adam(self.params, lr=cfg.lr))
        first = float("nan")
        self.model.train()
        for t in range(cfg.local_steps):
            batch = self.task.sample_batch(client, cfg.batch_size, gen)
            opt.zero_grad(set_to_none=True)
            loss = self.task.loss(self.model, batch)
            loss.backward()
            opt.step()
            if t == 0:
                first = float(loss.detach())
        return w0 - self.get_vector(), first

    def _direction(self, seed: int) -> torch.Tensor:
        return next(iter_bases(seed, 0, self.dim, 1, device=self.device, kind="gaussian"))[1][0]

    def _zeroth_order(self, w0: torch.Tensor, rnd: int, client: int, gen: torch.Generator):
        """Two-point ZO-SGD: g = (f(w+eps z) − f(w−eps z)) / (2 eps), w ← w − lr g z."""
        cfg = self.cfg
        w = w0.clone()
        scalars, idx, losses = [], [], []
        pick = np.random.default_rng(derive_seed(cfg.seed, _ZO, rnd, client))
        self.model.eval()
        for t in range(cfg.local_steps):
            batch = self.task.sample_batch(client, cfg.batch_size, gen)
            if cfg.algo == "fedkseed":
                j = int(pick.integers(len(self.pool)))
                z = self._direction(self.pool[j])
                idx.append(j)
            else:
                z = self._direction(derive_seed(cfg.seed, _ZO, rnd, client, t))
            lp = self._loss_at(w + cfg.zo_eps * z, batch)
            lm = self._loss_at(w - cfg.zo_eps * z, batch)
            g = (lp - lm) / (2 * cfg.zo_eps)
            losses.append(0.5 * (lp + lm))
            scalars.append(g)
            w.add_(z, alpha=-cfg.lr * g)
        self.model.train()
        return w0 - w, losses[0], torch.tensor(scalars, dtype=torch.float32), idx

    # -- server side -------------------------------------------------------------------------------
    def decode(self, msg: ClientMessage) -> torch.Tensor:
        """The update a message stands for, rebuilt from what travelled (seeds regenerate the bases)."""
        if msg.algo == "ferret" and msg.indices:
            return reconstruct_pool(msg.payload, self.ferret_pool, self.blocks, msg.counts, msg.indices,
                                    device=self.device)
        if msg.algo == "ferret":
            return reconstruct(msg.payload, msg.seed, self.blocks, msg.counts, device=self.device)
        if msg.algo == "fedkseed":
            out = torch.zeros(self.dim, device=self.device)
            for j, g in zip(msg.indices, msg.payload.tolist(), strict=False):
                out.add_(self._direction(self.pool[j]), alpha=self.cfg.lr * g)
            return out
        return msg.payload.to(self.device)

    @_one_thread
    def aggregate(self, state: ServerState, messages: list[ClientMessage]) -> ServerState:
        """w ← w − server_lr · step, step = mean of decoded (optionally clipped) updates, with momentum."""
        cfg = self.cfg
        if not messages:
            return ServerState(state.weights, state.momentum, state.round + 1)
        total = torch.zeros(self.dim, device=self.device)
        for msg in sorted(messages, key=lambda m: m.client):
            d = self.decode(msg)
            if cfg.clip is not None:
                n = float(torch.linalg.vector_norm(d))
                if n > cfg.clip:
                    d = d * (cfg.clip / n)
            total.add_(d)
        step = total / len(messages)
        mom = state.momentum
        if cfg.momentum > 0:
            mom = step if mom is None else cfg.momentum * mom + step
            step = mom
        new = state.weights.to(self.device) - cfg.server_lr * step
        if not bool(torch.isfinite(new).all()):
            raise ConvergenceError(f"round {state.round + 1}: the global model has non-finite weights (overflow); "
                                   f"lower --lr ({cfg.lr:g}) or --server-lr ({cfg.server_lr:g})")
        return ServerState(new, mom, state.round + 1)

    def downlink_floats(self, previous: list[ClientMessage]) -> int:
        """Floats a client receives to sync the global model: the full weights for FedAvg/FedZO; for the
        seed-based methods the previous round's messages, replayed locally (the initial model comes from
        the shared seed)."""
        if self.cfg.algo in ("fedavg", "fedzo"):
            return self.dim
        return sum(m.uplink_floats for m in previous)

    def downlink_bytes(self, previous: list[ClientMessage]) -> int:
        if self.cfg.algo in ("fedavg", "fedzo"):
            return FLOAT_BYTES * self.dim
        return sum(m.uplink_bytes(self.cfg.alloc) for m in previous)

    @_one_thread
    def evaluate(self, weights: torch.Tensor) -> dict[str, float]:
        self.set_vector(weights)
        self.model.eval()
        out = self.task.evaluate(self.model)
        self.model.train()
        return out

    def check_finite(self, row: dict[str, Any]) -> None:
        """ConvergenceError when a round's losses are NaN/inf: weights can stay finite float32 yet so large
        that the loss overflows (--server-lr 1e30 gave NaN test losses, exit 0 and bare NaN in the JSON)."""
        for key in ("train_loss", "test_loss"):
            v = row.get(key)
            if v is not None and not math.isfinite(v) and not (key == "train_loss" and not row.get("clients")):
                raise ConvergenceError(f"round {row['round']}: the {key.replace('_', ' ')} is {v} (the model "
                                       f"diverged); lower --lr ({self.cfg.lr:g}) or --server-lr "
                                       f"({self.cfg.server_lr:g})")

    @_one_thread
    def final_metrics(self, weights: torch.Tensor) -> dict[str, float]:
        self.set_vector(weights)
        self.model.eval()
        return self.task.final_metrics(self.model)

    # -- one simulated round -----------------------------------------------------------------------
    def run_round(self, state: ServerState, previous: list[ClientMessage]) -> tuple[ServerState, dict, list]:
        rnd = state.round
        t0 = time.perf_counter()
        chosen = self.sample_clients(rnd)
        msgs = [self.client_update(state.weights, rnd, c) for c in chosen]
        t1 = time.perf_counter()
        new = self.aggregate(state, msgs)
        aggr_s = time.perf_counter() - t1
        wall = time.perf_counter() - t0
        metrics = self.evaluate(new.weights)
        m = len(msgs)
        up_f = sum(x.uplink_floats for x in msgs)
        up_b = sum(x.uplink_bytes(self.cfg.alloc) for x in msgs)
        row = {"round": rnd + 1, "algo": self.cfg.algo, "clients": m,
               "train_loss": float(np.mean([x.train_loss for x in msgs])),
               "test_loss": metrics["test_loss"], "test_acc": metrics["test_acc"],
               "uplink_floats": up_f / m, "uplink_bytes": up_b / m,
               "downlink_floats": self.downlink_floats(previous), "downlink_bytes": self.downlink_bytes(previous),
               "local_s": float(np.mean([x.local_s for x in msgs])),
               "proj_s": float(np.mean([x.proj_s for x in msgs])),
               "aggr_s": aggr_s, "wall_s": wall}
        self.check_finite(row)
        return new, row, msgs


def add_cumulative(rows: list[dict]) -> list[dict]:
    """Cumulative uplink bytes over all clients (the x axis of the communication plots)."""
    total = 0.0
    out = []
    for r in rows:
        total += r["uplink_bytes"] * r["clients"]
        out.append({**r, "cum_uplink_bytes": total})
    return out


def run_federated(task: Task, cfg: FedConfig, *, state: ServerState | None = None,
                  previous: list[ClientMessage] | None = None, on_round: Any = None) -> tuple[ServerState, list[dict]]:
    """Rounds from ``state.round`` to ``cfg.rounds``; ``on_round(state, row, messages)`` after each."""
    fed = Federation(task, cfg)
    state = state or fed.initial_state()
    prev = previous or []
    rows = []
    while state.round < cfg.rounds:
        state, row, prev = fed.run_round(state, prev)
        rows.append(row)
        if on_round is not None:
            on_round(state, row, prev)
    return state, rows
