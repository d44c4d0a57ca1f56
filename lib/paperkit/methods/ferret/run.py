"""Orchestration of ferret-train, ferret-server and ferret-recon: settings (every default), input checks
(``prepare_*``: the task data and model are read and every option validated before a run dir exists)
and the runs (``execute_*``).

ferret-train's rounds are ``run.cached`` stages: stage ``round-NNNN`` holds what decides the rest of the
run after round NNNN (global weights, momentum, the round's messages for the next downlink count, the
deterministic history rows). Only the newest stage is kept (a stage holds the whole model, so keeping
every round would cost rounds × model size on disk); ``--resume`` continues from it and ends with the
same bytes as an uninterrupted run. Seconds never enter a stage: they go to ``timing.csv``.

A stage is written with SIGINT held back (see :class:`paperkit.methods.ferret.checkpoint.DeferredInterrupt`),
so Ctrl-C during the write stops the run right after it, with a whole stage.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperkit.core.progress import progress as default_progress
from paperkit.methods.ferret.federated import FedConfig as _FED


# ------------------------------------------------------------------------------------- ferret-train
@dataclass(frozen=True)
class FerretTrainSettings:
    """Every parameter of ``paperkit ferret-train`` (the federated run) and its default."""

    # the task every party must agree on
    task: str = "digits"
    model: str | None = None
    clients: int = 20
    dirichlet: float = 0.5
    iid: bool = False
    d_model: int = 64
    layers: int = 2
    # the algorithm: defaults are the library's FedConfig (one source)
    algo: str = _FED.algo
    fraction: float = _FED.fraction
    rounds: int = _FED.rounds
    local_steps: int = _FED.local_steps
    lr: float = _FED.lr
    batch_size: int = _FED.batch_size
    optimizer: str = _FED.optimizer
    server_lr: float = _FED.server_lr
    momentum: float = _FED.momentum
    k: int = _FED.k
    blocks: str = _FED.blocks
    alloc: str = _FED.alloc
    seed_pool: str = _FED.seed_pool
    clip: float | None = _FED.clip
    zo_eps: float = _FED.zo_eps
    kseed_pool: int = _FED.kseed_pool
    seed: int = _FED.seed
    device: str = "auto"

    def fed_config(self) -> Any:
        """The library's :class:`FedConfig` (validated: a bad value is a ConfigError, exit 2)."""
        from paperkit.methods.ferret.federated import FedConfig

        return FedConfig(algo=self.algo, n_clients=self.clients, fraction=self.fraction, rounds=self.rounds,
                         local_steps=self.local_steps, lr=self.lr, batch_size=self.batch_size,
                         optimizer=self.optimizer, server_lr=self.server_lr, momentum=self.momentum, k=self.k,
                         blocks=self.blocks, alloc=self.alloc, seed_pool=self.seed_pool, clip=self.clip, zo_eps=self.zo_eps,
                         kseed_pool=self.kseed_pool, seed=self.seed, device=self.device).validate()

    @property
    def data_path(self) -> str | None:
        """The JSONL file of a ``jsonl:PATH`` task (None for the built-in tasks)."""
        return None if self.task in ("digits", "instruct") else self.task.removeprefix("jsonl:")

    def build_task(self) -> Any:
        from paperkit.methods.ferret.tasks import build_task

        return build_task(self.task, n_clients=self.clients, alpha=None if self.iid else self.dirichlet,
                          seed=self.seed, model_dir=self.model, d_model=self.d_model, n_layers=self.layers)


@dataclass(frozen=True)
class FerretServerSettings(FerretTrainSettings):
    """Every parameter of ``paperkit ferret-server``: the federated run's, and how long to wait for clients."""

    min_clients: int = 2
    wait_timeout: float = 120.0
    round_timeout: float = 600.0


@dataclass
class FerretTrainInputs:
    settings: FerretTrainSettings
    fed: Any                           # paperkit.methods.ferret.Federation (task built, options checked)
    inputs: list[str] = field(default_factory=list)
    data_sha256: str | None = None


@dataclass
class FerretTrainResult:
    state: Any                         # ServerState after the last round
    rows: list[dict]                   # one per round, with seconds (rejoined from timing.csv on resume)


def prepare_ferret_train(settings: FerretTrainSettings) -> FerretTrainInputs:
    """Validate the options, read the task's data (and model folder) and build the federation."""
    from paperkit.core.io import sha256_file
    from paperkit.methods.ferret.federated import Federation

    cfg = settings.fed_config()        # option errors first, before any data is read
    fed = Federation(settings.build_task(), cfg)
    path = settings.data_path
    return FerretTrainInputs(settings, fed, [path] if path else [], sha256_file(path) if path else None)


def round_stage(r: int) -> str:
    return f"round-{r:04d}"


_STAGE = re.compile(r"round-(\d{4,})\.pt")


def newest_round(folder: Path, rounds: int) -> int:
    """The newest round (at most ``rounds``) whose stage file is in ``folder``; 0 when there is none."""
    if not folder.is_dir():
        return 0
    found = [int(m.group(1)) for f in folder.iterdir() if (m := _STAGE.fullmatch(f.name))]
    # only the names round_stage writes (round-00002.pt is not round 2's stage)
    return max((r for r in found if 1 <= r <= rounds and (folder / f"{round_stage(r)}.pt").is_file()), default=0)


def execute_ferret_train(inputs: FerretTrainInputs, run: Any, progress: Callable[..., Any] = default_progress,
                         on_round: Callable[[dict], None] | None = None) -> FerretTrainResult:
    """Rounds 1..rounds as ``run.cached`` stages (from the newest saved one when resumed); ``on_round(row)``
    after each round computed here."""
    from paperkit.core import tables
    from paperkit.core.errors import PaperkitError
    from paperkit.methods.ferret.checkpoint import DeferredInterrupt, join_timings, split_timings

    fed, cfg = inputs.fed, inputs.fed.cfg
    state, rows, prev = fed.initial_state(), [], []
    # the newest finished round of an interrupted run (older stages are removed when a newer one is saved);
    # the stage files are listed, not probed round by round (one stat per round took hours at 10^12 rounds)
    done = newest_round(run.checkpoint_path(f"{round_stage(1)}.pt").parent, cfg.rounds)
    if done:
        state, rows, prev = _from_stage(fed, run.load_checkpoint(f"{round_stage(done)}.pt"))
        if run.file("timing.csv").exists():
            rows = join_timings(rows, tables.read_table(run.file("timing.csv")).records())
    with progress(total=cfg.rounds, initial=done, desc=f"ferret-train {cfg.algo}", unit="round") as bar:
        for r in range(done + 1, cfg.rounds + 1):
            with DeferredInterrupt() as guard:
                live: dict[str, Any] = {}

                def compute(state=state, rows=rows, prev=prev, live=live):
                    new, row, msgs = fed.run_round(state, prev)
                    live.update(state=new, rows=[*rows, row], prev=msgs)
                    return guard.hold(_to_stage(cfg.algo, new, live["rows"], msgs))

                value = run.cached(round_stage(r), compute, fmt="pt")
                if live:
                    state, rows, prev = live["state"], live["rows"], live["prev"]
                else:  # saved by an earlier start of this run
                    state, rows, prev = _from_stage(fed, value)
                guard.hold()
                if r > 1:
                    run.checkpoint_path(f"{round_stage(r - 1)}.pt").unlink(missing_ok=True)
                tables.write_table(run.file("timing.csv"), split_timings(rows)[1])
            bar.update(1)
            if on_round is not None and live:
                on_round(rows[-1])
    if not rows:
        raise PaperkitError("no rounds were run")
    return FerretTrainResult(state, rows)


def _to_stage(algo: str, state: Any, rows: list[dict], msgs: list) -> dict[str, Any]:
    import torch

    from paperkit.methods.ferret.checkpoint import split_timings
    from paperkit.methods.ferret.flower import encode_rounds

    header, payload = encode_rounds([(state.round - 1, msgs)], algo)
    return {"state": state.to_checkpoint(), "rows": json.dumps(split_timings(rows)[0]),
            "prev_header": torch.from_numpy(header), "prev_payload": torch.from_numpy(payload)}


def _from_stage(fed: Any, saved: dict[str, Any]) -> tuple[Any, list[dict], list]:
    from paperkit.methods.ferret.federated import ServerState
    from paperkit.methods.ferret.flower import decode_rounds

    decoded = decode_rounds([saved["prev_header"].numpy(), saved["prev_payload"].numpy()], fed.cfg.algo)
    return (ServerState.from_checkpoint(saved["state"], fed.device), json.loads(saved["rows"]),
            decoded[0][1] if decoded else [])


def summarize(fed: Any, state: Any, rows: list[dict], extra: dict | None = None) -> dict[str, Any]:
    """summary.json of a federated run (deterministic: no seconds) from its final state and rows."""
    from paperkit.methods.ferret.federated import add_cumulative

    rows = add_cumulative(rows)
    last = rows[-1]
    per_round = sum(r["uplink_floats"] for r in rows) / len(rows)
    return {"algo": fed.cfg.algo, "task": fed.task.name, "params": fed.dim, "blocks": fed.blocks.n_blocks,
            "rounds": len(rows), "config": fed.cfg.to_dict(),
            "final": {"test_loss": last["test_loss"], "test_acc": last["test_acc"], **fed.final_metrics(state.weights)},
            "totals": {"uplink_bytes": last["cum_uplink_bytes"], "uplink_floats_per_client_round": per_round,
                       "uplink_fraction_of_d": per_round / fed.dim},
            **(extra or {})}


def server_task(settings: FerretTrainSettings) -> dict[str, Any]:
    """The task as the Flower run carries it (absolute paths: the ServerApp runs in another process)."""
    path = settings.data_path
    return {"task": f"jsonl:{os.path.abspath(path)}" if path else settings.task,
            "model_dir": os.path.abspath(settings.model) if settings.model else None, "clients": settings.clients,
            "dirichlet": None if settings.iid else settings.dirichlet, "d_model": settings.d_model,
            "layers": settings.layers}


# ------------------------------------------------------------------------------------- ferret-recon
@dataclass(frozen=True)
class FerretReconSettings:
    """Every parameter of ``paperkit ferret-recon`` (the reconstruction study) and its default."""

    d: int = 100_000
    k: tuple[int, ...] = (50, 100, 200, 350, 700, 1400)
    blocks: int = 1
    alloc: str = "norm"
    trials: int = 5
    steps: int = 1
    lr: float = 0.01                   # step size of the local gradient steps making the update
    zo_eps: float = 1e-3
    no_zo: bool = False
    zo_max_k: int = 2000               # the zeroth-order estimate is skipped above this K (it costs K·d per step)
    cubic: float = 0.0                 # objective Σ x² + (c/3) Σ x³ (c ≠ 0: ZO's finite differences are biased)
    seed: int = 0
    device: str = "auto"
    max_memory_gb: float | None = None


@dataclass
class FerretReconInputs:
    settings: FerretReconSettings
    device: Any


@dataclass
class FerretReconResult:
    rows: list[dict]


def prepare_ferret_recon(settings: FerretReconSettings) -> FerretReconInputs:
    """Check K, the blocks, the trials and steps, the memory the study needs (from the options alone) and that
    the update does not overflow, and pick the device."""
    from paperkit.core.devices import resolve_device
    from paperkit.core.errors import ConfigError
    from paperkit.core.resources import MEMORY_FLAG, check_memory
    from paperkit.methods.ferret.recon import (
        MAX_STEPS,
        MAX_TRIALS,
        check_update,
        exact_update,
        memory_estimate,
        start_point,
    )

    s = settings
    if not s.k or min(s.k) < 1:
        raise ConfigError(f"--k {','.join(map(str, s.k))}: every K must be a positive integer")
    if s.blocks > s.d:
        raise ConfigError(f"--blocks {s.blocks} is out of range; expected 1..{s.d}")
    if s.blocks > min(s.k):
        raise ConfigError(f"every K must be at least the number of blocks ({s.blocks})")
    if not 1 <= s.trials <= MAX_TRIALS:
        raise ConfigError(f"--trials {s.trials} is out of range; expected 1 to {MAX_TRIALS}")
    if not 1 <= s.steps <= MAX_STEPS:
        raise ConfigError(f"--steps {s.steps} is out of range; expected 1 to {MAX_STEPS}")
    check_memory(memory_estimate(s.d, s.blocks), f"--d {s.d}", limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)
    if s.cubic:  # only the cubic term can overflow the exact update: find out before the run dir exists
        check_update(exact_update(start_point(s.d, s.seed), s.lr, s.steps, s.cubic), s.cubic, s.steps)
    return FerretReconInputs(s, resolve_device(s.device))


def execute_ferret_recon(inputs: FerretReconInputs, run: Any = None,
                         progress: Callable[..., Any] = default_progress) -> FerretReconResult:
    from paperkit.methods.ferret.recon import recon_study

    s = inputs.settings
    rows = recon_study(s.d, list(s.k), trials=s.trials, n_blocks=s.blocks, alloc=s.alloc, zo=not s.no_zo,
                       zo_eps=s.zo_eps, steps=s.steps, lr=s.lr, seed=s.seed, zo_max_k=s.zo_max_k,
                       device=inputs.device, check=False, cubic=s.cubic)
    return FerretReconResult(rows)


__all__ = ["FerretReconInputs", "FerretReconResult", "FerretReconSettings", "FerretServerSettings",
           "FerretTrainInputs", "FerretTrainResult", "FerretTrainSettings", "execute_ferret_recon",
           "execute_ferret_train", "prepare_ferret_recon", "prepare_ferret_train", "round_stage", "server_task",
           "summarize"]
