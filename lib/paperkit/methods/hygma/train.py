"""HYGMA training: agents, episode replay, ε-greedy rollouts, value and actor-critic learners, regrouping.

Algorithms (``ALGOS``): ``hygma-qmix`` (HGCN features ⊕ raw input → GRU agent → Q_i, QMIX mixer, double-Q
targets), ``hygma-ac`` (the same features in an A2C with GAE: shared actor, per-agent value head), and the
baselines ``qmix``, ``vdn``, ``iql`` (the same GRU agent without the HGCN). The per-agent input is
[o_i, last action one-hot, agent-id one-hot]. Unlike the official code, every parameter (HGCN included)
is optimised, the consistency loss is on HGCN features, the attention loss keeps its gradient, and the
groups are recomputed every ``cluster_every`` env steps for the whole run (``grouping="dynamic"``;
``"static"`` clusters once, ``"single"`` keeps one hyperedge of all agents).
"""

from __future__ import annotations

import copy
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from paperkit.core.errors import ConvergenceError
from paperkit.methods.hygma.grouping import assignment_ari, choose_groups, incidence_matrix
from paperkit.methods.hygma.hgcn import HGCN, Incidence, attention_loss, consistency_loss
from paperkit.methods.hygma.mixers import QMixer, VDNMixer

ALGOS = ("hygma-qmix", "hygma-ac", "qmix", "vdn", "iql")
GROUPINGS = ("dynamic", "static", "single")


@dataclass(frozen=True)
class TrainConfig:
    """Everything one training run needs (the command's settings map onto it)."""

    algo: str = "hygma-qmix"
    steps: int = 200_000
    batch_envs: int = 8
    batch_size: int = 32               # official code 128 (CPU time: see the command's --batch-size help)
    buffer_episodes: int = 5000
    target_every: int = 200            # episodes
    lr: float = 5e-4
    weight_decay: float = 0.01
    gamma: float = 0.99
    grad_clip: float = 10.0
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_anneal: int = 100_000      # env steps (the official hygma.yaml)
    gae_lambda: float = 0.95
    entropy: float = 0.01
    hidden: int = 64
    hgcn_hidden: int = 64
    hgcn_out: int = 48
    heads: int = 4
    hgcn_mode: str = "paper"
    mixer_embed: int = 32
    grouping: str = "dynamic"
    k_min: int = 2
    k_max: int = 3
    stability: float = 0.6
    cluster_every: int = 20_000        # env steps (official code 100k, at 5M steps)
    history: int = 500                 # rollout steps kept for the per-agent features
    lambda_consistency: float = 1e-3
    lambda_attention: float = 1e-2
    eval_every: int = 10_000
    eval_episodes: int = 32

    @property
    def uses_hgcn(self) -> bool:
        return self.algo.startswith("hygma")


class Agent(nn.Module):
    """Shared per-agent network: [HGCN(x, H) ⊕] x → ReLU(Linear) → GRUCell → Q (or policy logits and value)."""

    def __init__(self, in_dim: int, n_actions: int, cfg: TrainConfig):
        super().__init__()
        self.hgcn = HGCN(in_dim, cfg.hgcn_hidden, cfg.hgcn_out, cfg.heads, cfg.hgcn_mode) if cfg.uses_hgcn else None
        feat = in_dim + (cfg.hgcn_out if self.hgcn is not None else 0)
        self.fc = nn.Linear(feat, cfg.hidden)
        self.gru = nn.GRU(cfg.hidden, cfg.hidden, batch_first=True)   # fused over time in training
        self.head = nn.Linear(cfg.hidden, n_actions)
        self.value = nn.Linear(cfg.hidden, 1) if cfg.algo == "hygma-ac" else None

    def encode(self, x: torch.Tensor, h: torch.Tensor | Incidence, valid: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor | None, list]:
        """x (..., n, d) → per-agent input of the GRU, the HGCN features and attentions (None/[] without HGCN).

        With ``valid`` (x's leading shape, bool) the HGCN runs on the valid rows only (padded steps after an
        episode's end get zero features: their outputs are masked and a GRU does not look back), and the
        features and attentions returned are those rows'."""
        if self.hgcn is None:
            return torch.relu(self.fc(x)), None, []
        lead = x.shape[:-2]
        flat = x.reshape(-1, *x.shape[-2:])
        keep = None if valid is None or bool(valid.all()) else valid.reshape(-1)
        feats, atts = self.hgcn(flat if keep is None else flat[keep], h)
        full = feats if keep is None else feats.new_zeros(flat.shape[0], *feats.shape[1:]).index_put((keep,), feats)
        z = torch.relu(self.fc(torch.cat([full, flat], -1)))
        return z.view(*lead, *z.shape[-2:]), feats, atts

    def recur(self, z: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """One GRU step over (B, n, hidden) → outputs, new hidden, value (or None)."""
        b, n, d = z.shape
        hid = self.gru(z.reshape(b * n, 1, d), hidden.reshape(1, b * n, -1))[0].view(b, n, -1)
        value = self.value(hid)[..., 0] if self.value is not None else None
        return self.head(hid), hid, value

    def unroll(self, x: torch.Tensor, h: torch.Tensor | Incidence, valid: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, list]:
        """x (B, T, n, d) → outputs (B, T, n, A), values (B, T, n) or None, HGCN features (rows, n, out), attentions."""
        z, feats, atts = self.encode(x, h, valid)
        b, t, n, d = z.shape
        hid = self.gru(z.permute(0, 2, 1, 3).reshape(b * n, t, d))[0].view(b, n, t, -1).permute(0, 2, 1, 3)
        vals = self.value(hid)[..., 0] if self.value is not None else None
        return self.head(hid), vals, feats, atts


def agent_inputs(obs: np.ndarray, last_actions: np.ndarray, n_actions: int) -> np.ndarray:
    """[o_i, last action one-hot (zeros at t = 0: pass -1), agent-id one-hot] for (..., n, d) observations."""
    n = obs.shape[-2]
    last = np.zeros((*last_actions.shape, n_actions), np.float32)
    valid = last_actions >= 0
    np.put_along_axis(last, np.where(valid, last_actions, 0)[..., None], valid[..., None].astype(np.float32), -1)
    ids = np.broadcast_to(np.eye(n, dtype=np.float32), (*obs.shape[:-2], n, n))
    return np.concatenate([obs, last, ids], -1)


@dataclass
class Episodes:
    """B episodes padded to the horizon: obs/state/mask have T+1 steps, the rest T."""

    obs: np.ndarray        # (B, T+1, n, d)
    state: np.ndarray      # (B, T+1, S)
    mask: np.ndarray       # (B, T+1, n, A)
    actions: np.ndarray    # (B, T, n)
    reward: np.ndarray     # (B, T)
    terminated: np.ndarray  # (B, T)
    filled: np.ndarray     # (B, T)
    stats: dict[str, np.ndarray]
    steps: int             # env steps taken (alive copies summed over time)


class Replay:
    """A ring buffer of padded episodes, sampled uniformly with a seeded generator."""

    FIELDS = ("obs", "state", "mask", "actions", "reward", "terminated", "filled")

    def __init__(self, capacity: int):
        self.capacity, self.size, self.next, self.data = capacity, 0, 0, None

    def add(self, ep: Episodes) -> None:
        b = ep.obs.shape[0]
        if self.data is None:
            self.data = {f: np.zeros((self.capacity, *getattr(ep, f).shape[1:]), getattr(ep, f).dtype) for f in self.FIELDS}
        idx = (self.next + np.arange(b)) % self.capacity
        for f in self.FIELDS:
            self.data[f][idx] = getattr(ep, f)
        self.next = int((self.next + b) % self.capacity)
        self.size = min(self.capacity, self.size + b)

    def sample(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        idx = rng.choice(self.size, size=n, replace=False)
        return {f: v[idx] for f, v in self.data.items()}


class Learner:
    """One algorithm's networks, optimiser and losses; ``act`` for rollouts and ``update`` for training."""

    def __init__(self, cfg: TrainConfig, obs_dim: int, state_dim: int, n_agents: int, n_actions: int, device: Any):
        self.cfg, self.n, self.n_actions, self.device = cfg, n_agents, n_actions, device
        in_dim = obs_dim + n_actions + n_agents
        self.agent = Agent(in_dim, n_actions, cfg).to(device)
        if cfg.algo in ("hygma-qmix", "qmix"):
            self.mixer: nn.Module | None = QMixer(n_agents, state_dim, cfg.mixer_embed).to(device)
        elif cfg.algo == "vdn":
            self.mixer = VDNMixer()
        else:
            self.mixer = None
        self.params = list(self.agent.parameters()) + (list(self.mixer.parameters()) if self.mixer is not None else [])
        # foreach: one multi-tensor step instead of ~10 ops per parameter tensor (bitwise the same as the per-tensor
        # loop on CPU, where it is not the default; the HGCN adds 12 small tensors)
        self.opt = torch.optim.AdamW(self.params, lr=cfg.lr, betas=(0.9, 0.999), weight_decay=cfg.weight_decay,
                                     foreach=True)
        self.value_based = cfg.algo != "hygma-ac"
        if self.value_based:
            self.target_agent = copy.deepcopy(self.agent)
            self.target_mixer = copy.deepcopy(self.mixer)
        self.set_incidence(torch.ones(1, n_agents, device=device))

    def set_incidence(self, h: torch.Tensor) -> None:
        """The hyperedges in force (E, n), and their terms that every HGCN call reuses."""
        self.incidence, self.hypergraph = h, Incidence.of(h)

    def set_groups(self, labels: np.ndarray) -> None:
        self.set_incidence(torch.as_tensor(incidence_matrix(labels), device=self.device))

    def update_targets(self) -> None:
        if self.value_based:
            self.target_agent.load_state_dict(self.agent.state_dict())
            if self.mixer is not None and self.target_mixer is not None:
                self.target_mixer.load_state_dict(self.mixer.state_dict())

    @torch.inference_mode()
    def act(self, x: np.ndarray, hidden: torch.Tensor, mask: np.ndarray, epsilon: float,
            gen: torch.Generator) -> tuple[np.ndarray, torch.Tensor, list]:
        """Masked ε-greedy (value) or sampled (policy) actions for (B, n, d) inputs."""
        z, _, atts = self.agent.encode(torch.as_tensor(x, device=self.device), self.hypergraph)
        out, hidden, _ = self.agent.recur(z, hidden)
        avail = torch.as_tensor(mask, device=self.device)
        out = out.masked_fill(~avail, -1e9)
        if not self.value_based:
            probs = torch.softmax(out, -1) * avail
            flat = probs.view(-1, probs.shape[-1]).cpu()
            actions = torch.multinomial(flat, 1, generator=gen).view(probs.shape[:-1])
            return actions.numpy(), hidden, atts
        greedy = out.argmax(-1).cpu()
        explore = torch.rand(greedy.shape, generator=gen) < epsilon
        random_pick = torch.multinomial(avail.float().view(-1, avail.shape[-1]).cpu(), 1, generator=gen).view(greedy.shape)
        return torch.where(explore, random_pick, greedy).numpy(), hidden, atts

    def _aux(self, feats: torch.Tensor | None, atts: list) -> tuple[torch.Tensor, torch.Tensor]:
        """Consistency and attention losses before their λ weights (zero without the HGCN)."""
        zero = torch.zeros((), device=self.device)
        if feats is None:
            return zero, zero
        h = self.incidence
        cons = consistency_loss(feats, h)
        att = sum(attention_loss(a, h) for a in atts) / len(atts)
        return cons, att

    def update(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        cfg = self.cfg
        tb = {k: torch.as_tensor(v, device=self.device) for k, v in batch.items()}
        last = np.concatenate([np.full_like(batch["actions"][:, :1], -1), batch["actions"]], 1)
        x = torch.as_tensor(agent_inputs(batch["obs"], last, self.n_actions), device=self.device)
        filled = tb["filled"].float()
        valid = torch.cat([torch.ones_like(tb["filled"][:, :1]), tb["filled"]], 1)   # obs steps up to each end
        out, values, feats, atts = self.agent.unroll(x, self.hypergraph, valid)
        cons, att = self._aux(feats, atts)
        if self.value_based:
            task = self._td_loss(tb, x, out, filled, valid)
        else:
            task = self._ac_loss(tb, out, values, filled)
        loss = task + cfg.lambda_consistency * cons + cfg.lambda_attention * att
        if not torch.isfinite(loss):
            raise ConvergenceError(f"{cfg.algo}: the loss became {loss.item()}; try a smaller --lr")
        self.opt.zero_grad()
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.params, cfg.grad_clip)
        self.opt.step()
        return {"loss": loss.item(), "task_loss": task.item(), "consistency": cons.item(), "attention_kl": att.item(),
                "grad_norm": grad_norm.item()}

    def _td_loss(self, tb: dict, x: torch.Tensor, out: torch.Tensor, filled: torch.Tensor,
                 valid: torch.Tensor) -> torch.Tensor:
        """Double-Q: the online net picks argmax a' (masked), the target nets value it; Q_tot via the mixer."""
        avail = tb["mask"].bool()
        chosen = out[:, :-1].gather(-1, tb["actions"][..., None]).squeeze(-1)
        with torch.no_grad():
            target_out, _, _, _ = self.target_agent.unroll(x, self.hypergraph, valid)
            best = out[:, 1:].detach().masked_fill(~avail[:, 1:], -1e9).argmax(-1, keepdim=True)
            target_q = target_out[:, 1:].gather(-1, best).squeeze(-1)
        if self.mixer is not None:
            q_tot = self.mixer(chosen, tb["state"][:, :-1])
            with torch.no_grad():
                target_tot = self.target_mixer(target_q, tb["state"][:, 1:])
            reward, term, weight = tb["reward"], tb["terminated"].float(), filled
        else:   # IQL: every agent regresses on the team reward
            q_tot, target_tot = chosen, target_q
            reward, term = tb["reward"][..., None], tb["terminated"].float()[..., None]
            weight = filled[..., None].expand_as(chosen)
        y = reward + self.cfg.gamma * (1 - term) * target_tot
        return (((q_tot - y) ** 2) * weight).sum() / weight.sum().clamp(min=1)

    def _ac_loss(self, tb: dict, out: torch.Tensor, values: torch.Tensor, filled: torch.Tensor) -> torch.Tensor:
        """A2C with GAE(γ, λ) on the team reward, per-agent values; masked softmax policy with an entropy bonus."""
        cfg = self.cfg
        logits = out[:, :-1].masked_fill(~tb["mask"][:, :-1].bool(), -1e9)
        logp = torch.log_softmax(logits, -1)
        chosen = logp.gather(-1, tb["actions"][..., None]).squeeze(-1)
        probs = logp.exp()
        entropy = -(probs * logp.clamp(min=-1e4)).sum(-1)
        v = values.detach()
        reward, term = tb["reward"][..., None], tb["terminated"].float()[..., None]
        live = filled[..., None]
        adv = torch.zeros_like(v[:, 0])
        advs = []
        for t in reversed(range(reward.shape[1])):
            delta = reward[:, t] + cfg.gamma * (1 - term[:, t]) * v[:, t + 1] * live[:, t] - v[:, t]
            adv = delta + cfg.gamma * cfg.gae_lambda * (1 - term[:, t]) * adv
            adv = adv * live[:, t]
            advs.append(adv)
        advantage = torch.stack(advs[::-1], 1)
        returns = advantage + v[:, :-1]
        w = live.expand_as(chosen)
        denom = w.sum().clamp(min=1)
        policy = -(chosen * advantage * w).sum() / denom
        value = ((values[:, :-1] - returns) ** 2 * w).sum() / denom
        return policy + 0.5 * value - cfg.entropy * (entropy * w).sum() / denom

    def checkpoint(self) -> dict[str, Any]:
        return {"agent": {k: v.detach().cpu() for k, v in self.agent.state_dict().items()},
                "mixer": ({k: v.detach().cpu() for k, v in self.mixer.state_dict().items()} if self.mixer is not None
                          else {}),
                "incidence": self.incidence.cpu()}


def rollout(env: Any, learner: Learner, seeds: list[int], epsilon: float, gen: torch.Generator,
            history: deque | None = None, attention_out: list | None = None) -> Episodes:
    """B episodes in lockstep (ε-greedy or sampled), padded to the horizon; appends per-agent mean obs to ``history``."""
    step = env.reset(seeds)
    b, n, horizon = len(seeds), env.n_agents, env.horizon
    obs, states, masks = [step.obs], [step.state], [step.mask]
    actions_t, rewards, terms, filled = [], [], [], []
    alive = np.ones(b, bool)
    last = np.full((b, n), -1)
    hidden = torch.zeros(b, n, learner.cfg.hidden, device=learner.device)
    taken = 0
    stats = step.stats
    for t in range(horizon):
        x = agent_inputs(step.obs, last, learner.n_actions)
        acts, hidden, atts = learner.act(x, hidden, step.mask, epsilon, gen)
        if history is not None:
            history.append(step.obs[alive].mean(0))
        if attention_out is not None and atts and t == 0:
            attention_out.append(atts[-1][0].cpu().numpy())   # (heads, n, E) of copy 0, last layer
        step = env.step(acts)
        taken += int(alive.sum())
        actions_t.append(acts)
        rewards.append(step.reward * alive)
        terms.append(step.done & alive & (env.t < horizon))
        filled.append(alive.copy())
        stats = {k: np.where(alive.reshape((-1,) + (1,) * (v.ndim - 1)), v, stats[k]) for k, v in step.stats.items()}
        alive = alive & ~step.done
        obs.append(step.obs)
        states.append(step.state)
        masks.append(step.mask)
        last = acts
        if not alive.any():
            break
    pad = horizon - len(actions_t)
    obs_a, state_a, mask_a = (np.stack(v, 1) for v in (obs, states, masks))
    if pad:
        obs_a = np.concatenate([obs_a, np.zeros((b, pad, *obs_a.shape[2:]), obs_a.dtype)], 1)
        state_a = np.concatenate([state_a, np.zeros((b, pad, state_a.shape[2]), state_a.dtype)], 1)
        mask_a = np.concatenate([mask_a, np.ones((b, pad, *mask_a.shape[2:]), bool)], 1)

    def padded(seq: list, dtype: Any) -> np.ndarray:
        arr = np.stack(seq, 1).astype(dtype)
        return np.concatenate([arr, np.zeros((b, pad, *arr.shape[2:]), dtype)], 1) if pad else arr

    return Episodes(obs_a, state_a, mask_a, padded(actions_t, np.int64), padded(rewards, np.float32),
                    padded(terms, bool), padded(filled, bool), stats, taken)


def agent_features(history: deque | list) -> np.ndarray:
    """Per-agent mean observation over the history, centred across agents and divided per feature by its spread
    over the whole history (all steps and agents; constant features → 0).

    The pooled spread puts features in comparable units without amplifying the small between-agent differences
    of uninformative features (z-scoring the n agent means did: with 6 agents, 18 near-constant occupancy cells
    outweighed the 8 position and prey-offset features that separate the teams)."""
    steps = np.stack(list(history)).astype(np.float64)                      # (T, n, d)
    mean = steps.mean(0)
    spread = steps.reshape(-1, steps.shape[-1]).std(0)
    return np.where(spread > 1e-8, (mean - mean.mean(0)) / np.where(spread > 1e-8, spread, 1.0), 0.0)


@dataclass
class RunOutput:
    curves: list[dict]
    groups: list[dict]
    attention: np.ndarray
    checkpoint: dict
    timing: dict
    final: dict


def epsilon_at(cfg: TrainConfig, t_env: int) -> float:
    frac = min(1.0, t_env / max(1, cfg.epsilon_anneal))
    return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)


def evaluate(env: Any, learner: Learner, episodes: int, seed_base: int, gen: torch.Generator,
             batch: int) -> dict[str, Any]:
    """Greedy (value) or sampled (policy) episodes in batches of B: mean return and success, plus raw stats."""
    returns, success, helped = [], [], []
    done = 0
    while done < episodes:
        seeds = [seed_base + done + i for i in range(batch)]
        ep = rollout(env, learner, seeds, 0.0, gen)
        keep = min(batch, episodes - done)
        returns.extend(ep.reward.sum(1)[:keep].tolist())
        success.extend(ep.stats[env.success_key][:keep].tolist())
        if "helped" in ep.stats:
            helped.append(ep.stats["helped"][:keep].sum(0))
        done += keep
    out = {"return": float(np.mean(returns)), "success": float(np.mean(success))}
    if helped:
        out["helped"] = np.sum(helped, 0)
    return out


def train(env: Any, cfg: TrainConfig, seed: int, device: Any = "cpu", eval_env: Any = None,
          on_steps: Callable[[int], None] | None = None) -> RunOutput:
    """Train one algorithm on one seed; returns curves, grouping log, attention samples, weights and timings."""
    import sklearn.cluster  # noqa: F401  (imported before the clock starts: its import is not clustering time)

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    eval_env = eval_env or env
    learner = Learner(cfg, env.obs_dim, env.state_dim, env.n_agents, env.n_actions, device)
    replay = Replay(cfg.buffer_episodes) if learner.value_based else None
    history: deque = deque(maxlen=cfg.history)
    attention: deque = deque(maxlen=64)
    curves: list[dict] = []
    groups = [{"step": 0, "k": 1, "groups": [0] * env.n_agents, "silhouette": None, "moved_fraction": None,
               "accepted": True, "kind": "initial"}]
    labels: np.ndarray | None = None
    proposal: np.ndarray | None = None
    t_env, episodes, last_target, next_cluster, next_eval = 0, 0, 0, cfg.cluster_every, 0
    losses: dict[str, float] = {}
    timing = {"cluster_s": 0.0, "rollout_s": 0.0, "update_s": 0.0, "eval_s": 0.0}
    start = time.perf_counter()
    seed_base = seed * 1_000_003
    while True:
        if t_env >= next_eval:
            t0 = time.perf_counter()
            ev = evaluate(eval_env, learner, cfg.eval_episodes, 10**9 + seed_base, gen, cfg.batch_envs)
            timing["eval_s"] += time.perf_counter() - t0
            curves.append({"step": t_env, "episodes": episodes, "return": ev["return"], "success": ev["success"],
                           "epsilon": epsilon_at(cfg, t_env) if learner.value_based else 0.0,
                           "k": int(learner.incidence.shape[0]),
                           "group_ari": (assignment_ari(learner.incidence.argmax(0).cpu().numpy(), ev["helped"])
                                         if cfg.uses_hgcn and "helped" in ev else None),
                           **{k: losses.get(k) for k in ("loss", "task_loss", "consistency", "attention_kl")}})
            next_eval += cfg.eval_every
        if t_env >= cfg.steps:
            break
        t0 = time.perf_counter()
        seeds = [seed_base + episodes + i for i in range(cfg.batch_envs)]
        eps = epsilon_at(cfg, t_env)
        ep = rollout(env, learner, seeds, eps, gen, history if cfg.uses_hgcn else None, attention)
        timing["rollout_s"] += time.perf_counter() - t0
        t_env += ep.steps
        episodes += cfg.batch_envs
        if on_steps is not None:
            on_steps(ep.steps)
        t0 = time.perf_counter()
        if replay is not None:
            replay.add(ep)
            if replay.size >= cfg.batch_size:
                losses = learner.update(replay.sample(cfg.batch_size, rng))
            if episodes - last_target >= cfg.target_every:
                learner.update_targets()
                last_target = episodes
        else:
            losses = learner.update({f: getattr(ep, f) for f in Replay.FIELDS})
        timing["update_s"] += time.perf_counter() - t0
        if cfg.uses_hgcn and cfg.grouping != "single" and t_env >= next_cluster and len(history) >= 2:
            if cfg.grouping == "dynamic" or labels is None:
                t0 = time.perf_counter()
                g = choose_groups(labels, agent_features(history), cfg.k_min, cfg.k_max, cfg.stability, seed, proposal)
                timing["cluster_s"] += time.perf_counter() - t0
                labels, proposal = g.labels, g.proposal
                learner.set_groups(labels)
                groups.append({"step": t_env, "k": g.k, "groups": labels.tolist(), "proposed": g.proposal.tolist(),
                               "silhouette": None if np.isnan(g.silhouette) else g.silhouette,
                               "moved_fraction": g.moved_fraction, "accepted": g.accepted, "kind": cfg.grouping})
            next_cluster += cfg.cluster_every
    timing["wall_s"] = time.perf_counter() - start
    timing["env_steps_per_s"] = t_env / max(timing["wall_s"], 1e-9)
    final = evaluate(eval_env, learner, cfg.eval_episodes, 2 * 10**9 + seed_base, gen, cfg.batch_envs)
    att = np.zeros((len(attention), cfg.heads, env.n_agents, max(cfg.k_max, 1)), np.float32)
    for i, a in enumerate(attention):   # the last 64 rollouts' first-step attention, hyperedges zero-padded to k_max
        att[i, ..., :a.shape[-1]] = a
    ckpt = {"config": asdict(cfg), "obs_dim": env.obs_dim, "state_dim": env.state_dim, "n_agents": env.n_agents,
            "n_actions": env.n_actions, **learner.checkpoint()}
    return RunOutput(curves, groups, att, ckpt, timing, final)


def load_learner(ckpt: dict, device: Any = "cpu") -> Learner:
    """Rebuild a trained learner from ``RunOutput.checkpoint``."""
    cfg = TrainConfig(**ckpt["config"])
    learner = Learner(cfg, ckpt["obs_dim"], ckpt["state_dim"], ckpt["n_agents"], ckpt["n_actions"], device)
    learner.agent.load_state_dict(ckpt["agent"])
    if learner.mixer is not None and ckpt["mixer"]:
        learner.mixer.load_state_dict(ckpt["mixer"])
    learner.set_incidence(ckpt["incidence"].to(device))
    return learner
