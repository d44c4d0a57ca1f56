"""The training loop shared by every Dreamer variant: B env copies collect with the deployment policy, a
replay of per-copy streams feeds (batch × sequence) updates at a fixed train ratio, and evaluation runs the
deployed policy (observations only) on held-out seeds. The whole state fits in one dict, so a run can stop
after any chunk and continue bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from paperkit.methods.pigdreamer.agent import Agent, AgentConfig, DeployedPolicy
from paperkit.methods.pigdreamer.envs import StepBatch, make_core

EVAL_SEED = 10**9


@dataclass(frozen=True)
class TrainConfig:
    env: str = "hazardnav"
    obs: str = "vector"
    moving: bool = False
    goal_compass: bool = True
    steps: int = 20_000
    envs: int = 8
    batch_size: int = 16
    seq_len: int = 32
    train_ratio: float = 32.0
    prefill: int = 1000
    eval_every: int = 2000
    eval_episodes: int = 10
    eval_policy: str = "sample"
    agent: AgentConfig = field(default_factory=AgentConfig)


class Replay:
    """Per-copy streams of (obs, privileged vector, previous action, reward, cost, flags), all copies in step."""

    def __init__(self, n: int, capacity: int, obs_shape: tuple[int, ...], priv_dim: int, action_dim: int):
        self.data = {"obs": torch.zeros(n, capacity, *obs_shape), "privileged": torch.zeros(n, capacity, priv_dim),
                     "action": torch.zeros(n, capacity, action_dim), "reward": torch.zeros(n, capacity),
                     "cost": torch.zeros(n, capacity), "is_first": torch.zeros(n, capacity, dtype=torch.bool),
                     "is_terminal": torch.zeros(n, capacity)}
        self.n, self.capacity, self.filled = n, capacity, 0

    def add(self, b: StepBatch, prev_action: torch.Tensor) -> None:
        t = self.filled % self.capacity
        for key, value in (("obs", b.obs), ("privileged", b.privileged), ("reward", b.reward), ("cost", b.cost),
                           ("is_first", b.is_first), ("is_terminal", b.is_terminal.astype(np.float32))):
            self.data[key][:, t] = torch.as_tensor(value)
        self.data["action"][:, t] = prev_action
        self.filled += 1

    def sample(self, batch_size: int, seq_len: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
        size = min(self.filled, self.capacity)
        copy = torch.randint(0, self.n, (batch_size,), generator=gen)
        start = torch.randint(0, size - seq_len + 1, (batch_size,), generator=gen)
        idx = start[:, None] + torch.arange(seq_len)
        out = {k: v[copy[:, None], idx] for k, v in self.data.items()}
        out["is_first"][:, 0] = True          # each sequence starts from a zero state
        return out

    def state(self) -> dict:
        return {"data": self.data, "filled": self.filled}

    def load_state(self, s: dict) -> None:
        self.data = {k: v.clone() for k, v in s["data"].items()}
        self.filled = int(s["filled"])


def run_core(cfg: Any, copies: int, need_privileged: bool) -> Any:
    """The batched env core of a run's config (env, observation kind, moving hazards, goal compass) with
    ``copies`` copies: training, evaluation and pigdreamer-eval all build it here, so they see the same env."""
    return make_core(cfg.env, copies, obs=cfg.obs, moving=cfg.moving, goal_compass=cfg.goal_compass,
                     need_privileged=need_privileged)


def env_action(action: torch.Tensor, discrete: bool) -> np.ndarray:
    return action.argmax(-1).numpy() if discrete else action.numpy()


def evaluate(policy: DeployedPolicy, core: Any, episodes: int, seed: int, greedy: bool = False,
             record: Replay | None = None) -> list[dict]:
    """One episode per copy of ``core`` (``episodes`` copies, fixed seeds) with the deployed policy, its actions
    sampled (as DreamerV3 and SafeDreamer evaluate: the argmax of a still-wide actor is one fixed action, not
    what it learned) or, with ``greedy``, the most likely one; the privileged vector the env returns is never
    shown to the policy. ``record``, if given, receives every step until the last episode ends."""
    gen = torch.Generator().manual_seed(seed)
    b = core.reset(EVAL_SEED + seed * 10_007 + np.arange(episodes))
    if record is not None:
        record.add(b, torch.zeros(episodes, core.n_actions))
    state = policy.initial(episodes)
    ret, cost = np.zeros(episodes), np.zeros(episodes)
    live = np.ones(episodes, bool)
    while live.any():
        action, state = policy.act(torch.as_tensor(b.obs), torch.as_tensor(b.is_first), state, gen, greedy=greedy)
        b = core.step(env_action(action, policy.discrete))
        if record is not None:
            record.add(b, action)
        ret += np.where(live, b.reward, 0.0)
        cost += np.where(live, b.cost, 0.0)
        live &= ~b.is_last
    return [{"episode": i, "return": float(ret[i]), "cost": float(cost[i])} for i in range(episodes)]


class RandomPolicy:
    """Uniform random actions with :class:`DeployedPolicy`'s interface: the baseline a learned policy must beat
    before comparing two of them means anything."""

    def __init__(self, core: Any):
        self.n_actions, self.discrete = core.n_actions, core.discrete

    def initial(self, n: int) -> tuple:
        return ()

    def act(self, obs: torch.Tensor, is_first: torch.Tensor, state: tuple, gen: torch.Generator,
            greedy: bool = False) -> tuple[torch.Tensor, tuple]:
        n = obs.shape[0]
        if self.discrete:
            pick = torch.randint(0, self.n_actions, (n,), generator=gen)
            return torch.nn.functional.one_hot(pick, self.n_actions).float(), state
        return torch.rand(n, self.n_actions, generator=gen) * 2 - 1, state


def random_policy_score(env: str, episodes: int, seed: int, **env_options: Any) -> tuple[float, float]:
    """Mean return and cost per episode of uniform random actions over ``episodes`` evaluation episodes of
    ``make_core(env, episodes, **env_options)`` (the evaluation seeds of :func:`evaluate`)."""
    core = make_core(env, episodes, **env_options)
    rows = evaluate(RandomPolicy(core), core, episodes, seed)
    return float(np.mean([r["return"] for r in rows])), float(np.mean([r["cost"] for r in rows]))


def random_replay(core: Any, steps: int, seed: int) -> Replay:
    """``steps`` env steps per copy of ``core`` under uniform random actions (world-model diagnostics)."""
    gen = torch.Generator().manual_seed(seed)
    replay = Replay(core.n, steps + 1, core.obs_shape, core.priv_dim, core.n_actions)
    b = core.reset(seed * 1_000_003 + np.arange(core.n))
    replay.add(b, torch.zeros(core.n, core.n_actions))
    policy = RandomPolicy(core)
    for _ in range(steps):
        action, _ = policy.act(torch.as_tensor(b.obs), torch.as_tensor(b.is_first), (), gen)
        b = core.step(env_action(action, core.discrete))
        replay.add(b, action)
    return replay


@torch.no_grad()
def cost_auroc(agent: Agent, replay: Replay, seed: int = 0) -> float:
    """AUROC of the cost head's prediction (posterior features of whole held-out streams) for cost > 0."""
    from sklearn.metrics import roc_auc_score

    data = {k: v[:, : replay.filled] for k, v in replay.data.items()}
    _, _, _, feat = agent.world_model_loss(data, torch.Generator().manual_seed(seed))
    predicted = agent.predicted_cost(feat)
    keep = ~data["is_first"]
    return float(roc_auc_score((data["cost"][keep] > 0).numpy(), predicted[keep].numpy()))


class Trainer:
    """One (variant, seed) run: ``run_until(step)`` advances it, ``state()``/``load_state()`` checkpoint it."""

    def __init__(self, cfg: TrainConfig, seed: int, device: str = "cpu"):
        self.cfg, self.seed = cfg, seed
        need_priv = cfg.agent.variant != "unprivileged"
        self.core = run_core(cfg, cfg.envs, need_priv)
        self.eval_core = run_core(cfg, cfg.eval_episodes, need_priv)
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)
        c = self.core
        # the per-episode cost estimate needs the episode length; where the env does not tell it, the discount's
        # horizon 1 / (1 − γ) stands in (100 at γ = 0.99)
        episode_length = c.horizon or round(1 / (1 - cfg.agent.gamma))
        self.agent = Agent(cfg.agent, c.obs_shape, c.priv_dim, c.n_actions, c.discrete, episode_length=episode_length)
        self.policy = DeployedPolicy(self.agent)
        self.replay = Replay(cfg.envs, cfg.steps // cfg.envs + 2, c.obs_shape, c.priv_dim, c.n_actions)
        self.last = c.reset(seed * 1_000_003 + np.arange(cfg.envs))
        self.pstate = self.policy.initial(cfg.envs)
        self.replay.add(self.last, self.pstate[2])
        self.step, self.credit, self.updates = 0, 0.0, 0
        self.ep_return, self.ep_cost = np.zeros(cfg.envs), np.zeros(cfg.envs)
        self.recent: tuple[float | None, float | None] = (None, None)
        self.rows: list[dict] = []
        self.evals: list[dict] = []
        self.timing = {"env_s": 0.0, "update_s": 0.0, "eval_s": 0.0}

    # --------------------------------------------------------------------------------- stepping
    def _collect(self) -> None:
        cfg, c = self.cfg, self.core
        t0 = time.perf_counter()
        action, self.pstate = self.policy.act(torch.as_tensor(self.last.obs), torch.as_tensor(self.last.is_first),
                                              self.pstate, self.gen, greedy=False)
        if self.step < cfg.prefill:      # uniform random actions fill the replay first
            if c.discrete:
                action = torch.nn.functional.one_hot(torch.randint(0, c.n_actions, (cfg.envs,), generator=self.gen),
                                                     c.n_actions).float()
            else:
                action = torch.rand(cfg.envs, c.n_actions, generator=self.gen) * 2 - 1
            self.pstate = (*self.pstate[:2], action)
        b = c.step(env_action(action, c.discrete))
        self.replay.add(b, action)
        self.ep_return += b.reward
        self.ep_cost += b.cost
        if b.is_last.any():
            self.recent = (float(self.ep_return[b.is_last].mean()), float(self.ep_cost[b.is_last].mean()))
        self.ep_return[b.is_last | b.is_first] = 0.0
        self.ep_cost[b.is_last | b.is_first] = 0.0
        self.last, self.step = b, self.step + cfg.envs
        self.timing["env_s"] += time.perf_counter() - t0

    def _train(self) -> None:
        cfg = self.cfg
        if self.step < cfg.prefill or self.replay.filled < cfg.seq_len:
            return
        self.credit += cfg.envs * cfg.train_ratio / (cfg.batch_size * cfg.seq_len)
        t0 = time.perf_counter()
        while self.credit >= 1.0:
            self.credit -= 1.0
            row = self.agent.update(self.replay.sample(cfg.batch_size, cfg.seq_len, self.gen), self.gen)
            self.updates += 1
            self.rows.append({"step": self.step, "update": self.updates, "episode_return": self.recent[0],
                              "episode_cost": self.recent[1], **row})
        self.timing["update_s"] += time.perf_counter() - t0

    def _evaluate(self) -> None:
        t0 = time.perf_counter()
        for row in evaluate(self.policy, self.eval_core, self.cfg.eval_episodes, self.seed,
                            greedy=self.cfg.eval_policy == "greedy"):
            self.evals.append({"step": self.step, **row})
        self.timing["eval_s"] += time.perf_counter() - t0

    def run_until(self, end: int, on_steps: Callable[[int], None] | None = None) -> None:
        cfg = self.cfg
        while self.step < end:
            before = self.step
            self._collect()
            self._train()
            if self.step // cfg.eval_every > before // cfg.eval_every or self.step >= cfg.steps > before:
                self._evaluate()
            if on_steps is not None:
                on_steps(self.step - before)

    # ----------------------------------------------------------------------------- checkpoints
    def state(self) -> dict:
        b = self.last
        return {"agent": self.agent.state_dict(), "wm_opt": self.agent.wm_opt.state_dict(),
                "actor_opt": self.agent.actor_opt.state_dict(), "critic_opt": self.agent.critic_opt.state_dict(),
                "extra": self.agent.extra_state(), "replay": self.replay.state(),
                "core": {k: torch.as_tensor(v) for k, v in self.core.state().items()},
                "last": {k: torch.as_tensor(getattr(b, k)) for k in b.__dataclass_fields__},
                "pstate": list(self.pstate), "gen": self.gen.get_state(), "step": self.step, "credit": self.credit,
                "updates": self.updates, "ep_return": torch.as_tensor(self.ep_return),
                "ep_cost": torch.as_tensor(self.ep_cost), "recent": list(self.recent), "rows": self.rows,
                "evals": self.evals, "timing": dict(self.timing)}

    def load_state(self, s: dict) -> None:
        a = self.agent
        a.load_state_dict(s["agent"])
        a.wm_opt.load_state_dict(s["wm_opt"])
        a.actor_opt.load_state_dict(s["actor_opt"])
        a.critic_opt.load_state_dict(s["critic_opt"])
        a.load_extra_state(s["extra"])
        self.replay.load_state(s["replay"])
        self.core.load_state({k: v.numpy() for k, v in s["core"].items()})
        self.last = StepBatch(**{k: v.numpy().copy() for k, v in s["last"].items()})
        self.pstate = tuple(t.clone() for t in s["pstate"])
        self.gen.set_state(s["gen"])
        self.step, self.credit, self.updates = int(s["step"]), float(s["credit"]), int(s["updates"])
        self.ep_return, self.ep_cost = s["ep_return"].numpy().copy(), s["ep_cost"].numpy().copy()
        self.recent = tuple(s["recent"])
        self.rows, self.evals, self.timing = list(s["rows"]), list(s["evals"]), dict(s["timing"])

    def model_blob(self) -> dict:
        """``model.pt``: the config, shapes and weights (the deployed policy needs the naive parts only)."""
        c = self.core
        return {"kind": "paperkit.pigdreamer.model", "config": config_dict(self.cfg), "seed": self.seed,
                "obs_shape": list(c.obs_shape), "priv_dim": c.priv_dim, "n_actions": c.n_actions,
                "discrete": c.discrete, "weights": self.agent.state_dict()}


def config_dict(cfg: TrainConfig) -> dict:
    return asdict(cfg)


def config_from_dict(d: dict) -> TrainConfig:
    # model.pt files written before --eval-policy existed were evaluated greedily, before --goal-compass without it
    return TrainConfig(**{"eval_policy": "greedy", "goal_compass": False, **d, "agent": AgentConfig(**d["agent"])})


def load_agent(blob: dict) -> tuple[Agent, TrainConfig]:
    """The whole trained agent of a ``model.pt`` (world model included), in eval mode."""
    cfg = config_from_dict(blob["config"])
    agent = Agent(cfg.agent, tuple(blob["obs_shape"]), blob["priv_dim"], blob["n_actions"], blob["discrete"])
    agent.load_state_dict(blob["weights"])
    return agent.eval(), cfg
