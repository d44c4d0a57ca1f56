"""Orchestration of pigdreamer-train, -eval, -bound and -compare: settings (the single source of defaults),
prepare (every check before a run dir exists), execute (training in ``run.cached`` chunks: checkpoint and
resume, bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.resources import check_memory
from paperkit.methods.pigdreamer.agent import COST_ESTIMATES, PRIVILEGED, VARIANTS, AgentConfig

ALL_VARIANTS = (*VARIANTS, "ppo-lag")
EVAL_POLICIES = ("sample", "greedy")   # how evaluation picks actions: train.evaluate(greedy=...)
BUILTIN_ENVS = ("hazardnav", "pointgoal")


@dataclass(frozen=True)
class PigdreamerTrainSettings:
    """Every parameter of ``paperkit pigdreamer-train`` and its default (laptop scale: HazardNav-PO, 20k steps)."""

    env: str = "hazardnav"
    obs: str = "vector"
    moving_hazard: bool = False
    goal_compass: bool = True
    variant: str = "pig"
    steps: int = 20_000
    cost_limit: float = 2.0
    horizon: int = 15
    seed: int = 0
    envs: int = 8
    batch_size: int = 16
    seq_len: int = 32
    train_ratio: float = 32.0
    prefill: int = 1000
    imag_starts: int = 256
    eval_every: int = 2000
    eval_episodes: int = 10
    eval_policy: str = "sample"
    checkpoint_every: int = 5000
    lagrange_init: float = 1e-6
    penalty_init: float = 0.01
    penalty_growth: float = 1e-5
    entropy: float = 3e-4
    cost_estimate: str = "episode"
    cost_weight: float = 10.0
    cost_debias: bool = False
    device: str = "auto"

    def train_config(self) -> Any:
        from paperkit.methods.pigdreamer.train import TrainConfig

        variant = "unprivileged" if self.variant == "ppo-lag" else self.variant
        agent = AgentConfig(variant=variant, horizon=self.horizon, imag_starts=self.imag_starts,
                            cost_limit=self.cost_limit, lagrange_init=self.lagrange_init,
                            penalty_init=self.penalty_init, penalty_growth=self.penalty_growth, entropy=self.entropy,
                            cost_estimate=self.cost_estimate, cost_weight=self.cost_weight,
                            cost_debias=self.cost_debias)
        return TrainConfig(env=self.env, obs=self.obs, moving=self.moving_hazard, goal_compass=self.goal_compass,
                           steps=self.steps, envs=self.envs,
                           batch_size=self.batch_size, seq_len=self.seq_len, train_ratio=self.train_ratio,
                           prefill=self.prefill, eval_every=self.eval_every, eval_episodes=self.eval_episodes,
                           eval_policy=self.eval_policy,
                           agent=agent)


@dataclass
class PigdreamerTrainInputs:
    settings: PigdreamerTrainSettings
    config: Any
    obs_shape: tuple[int, ...]
    priv_dim: int


def _check_ranges(s: PigdreamerTrainSettings) -> None:
    if s.variant not in ALL_VARIANTS:
        raise UsageError(f"unknown --variant {s.variant!r}; expected one of {', '.join(ALL_VARIANTS)}")
    if not np.isfinite(s.cost_limit) or s.cost_limit < 0:
        raise UsageError(f"--cost-limit must be a finite number ≥ 0, got {s.cost_limit}")
    if s.eval_policy not in EVAL_POLICIES:
        raise UsageError(f"unknown --eval-policy {s.eval_policy!r}; expected one of {', '.join(EVAL_POLICIES)}")
    if s.cost_estimate not in COST_ESTIMATES:
        raise UsageError(f"unknown --cost-estimate {s.cost_estimate!r}; expected one of {', '.join(COST_ESTIMATES)}")
    if not np.isfinite(s.cost_weight) or s.cost_weight <= 0:
        raise UsageError(f"--cost-weight must be a finite number > 0, got {s.cost_weight}")
    if s.horizon < 1:
        raise UsageError(f"--horizon must be ≥ 1 imagination step, got {s.horizon}")
    one_batch = s.batch_size * s.seq_len
    if s.steps < max(one_batch, s.envs):
        raise UsageError(f"--steps {s.steps} is fewer than one training batch ({s.batch_size} sequences × "
                         f"{s.seq_len} steps = {one_batch} steps)")
    if s.prefill > s.steps:
        raise UsageError(f"--prefill {s.prefill} is more than --steps {s.steps}")
    if s.device == "cuda":
        raise UsageError("pigdreamer-train runs on the CPU (its nets are small); use --device cpu or auto")
    if not s.goal_compass and s.env != "hazardnav":
        raise UsageError(f"--no-goal-compass is HazardNav's; --env {s.env} senses the goal its own way")



def probe_env(s: PigdreamerTrainSettings) -> Any:
    """Build one copy of the env, reset and step it once: an unknown id, a missing ``info['cost']`` or (for
    privileged variants) ``info['privileged']`` is reported here, before any run dir exists."""
    import gymnasium as gym

    from paperkit.methods.pigdreamer.envs import make_core, register_envs

    if s.env not in BUILTIN_ENVS:
        register_envs()
        if s.env not in gym.registry:
            raise UsageError(f"unknown --env {s.env!r}: not {' or '.join(BUILTIN_ENVS)} and not a registered "
                             "gymnasium id (import the package that registers it, e.g. via PYTHONSTARTUP)")
    need_priv = s.variant in PRIVILEGED or s.variant == "informed"
    core = make_core(s.env, 1, obs=s.obs, moving=s.moving_hazard, need_privileged=need_priv,
                     goal_compass=s.goal_compass)
    core.reset([s.seed])
    action = (np.zeros(1, np.int64) if core.discrete else np.zeros((1, core.n_actions), np.float32))
    core.step(action)
    if need_priv and core.priv_dim == 0:
        raise InputError(f"{s.env}: info['privileged'] is empty; variant {s.variant!r} needs the state vector")
    return core


def prepare_pigdreamer_train(s: PigdreamerTrainSettings) -> PigdreamerTrainInputs:
    _check_ranges(s)
    core = probe_env(s)
    per_step = 4.0 * (int(np.prod(core.obs_shape)) + core.priv_dim + core.n_actions + 4)
    check_memory(per_step * (s.steps + 2 * s.envs) * 2, f"a replay of {s.steps} steps")
    return PigdreamerTrainInputs(s, s.train_config(), tuple(core.obs_shape), core.priv_dim)


@dataclass
class PigdreamerTrainResult:
    metrics: list[dict]
    evals: list[dict]
    model: dict
    summary: dict
    timing: dict


def chunk_ends(steps: int, every: int) -> list[int]:
    return [*range(every, steps, every), steps]


def _make_trainer(inputs: PigdreamerTrainInputs) -> Any:
    import torch

    torch.set_num_threads(1)
    s = inputs.settings
    if s.variant == "ppo-lag":
        from paperkit.methods.pigdreamer.ppo import PPOLagTrainer

        return PPOLagTrainer(inputs.config, s.seed)
    from paperkit.methods.pigdreamer.train import Trainer

    return Trainer(inputs.config, s.seed)


def execute_pigdreamer_train(inputs: PigdreamerTrainInputs, run: Any,
                             progress: Callable[..., Any] | None = None) -> PigdreamerTrainResult:
    """Train in chunks of ``checkpoint_every`` env steps; each chunk is a ``run.cached`` stage holding the
    whole training state, so ``--resume`` continues from the last finished chunk and ends where an
    uninterrupted run ends."""
    if progress is None:
        from paperkit.core.progress import progress
    s = inputs.settings
    trainer = _make_trainer(inputs)

    def advance(end: int, bar: Any) -> dict:
        trainer.run_until(end, on_steps=bar.update)
        return trainer.state()

    with progress(total=s.steps, desc=f"pigdreamer-train {s.variant}", unit="step") as bar:
        for end in chunk_ends(s.steps, s.checkpoint_every):
            state = run.cached(f"train-{end:09d}", lambda e=end: advance(e, bar), fmt="pt")
            trainer.load_state(state)
            bar.n = trainer.step
            bar.refresh()
    return PigdreamerTrainResult(trainer.rows, trainer.evals, trainer.model_blob(),
                                 summarize_run(s, trainer.evals), dict(trainer.timing))


def summarize_run(s: PigdreamerTrainSettings, evals: list[dict]) -> dict:
    """The last evaluation's episodes: mean return and cost, share of episodes within the cost limit."""
    last = max((e["step"] for e in evals), default=None)
    final = [e for e in evals if e["step"] == last]
    ret = np.array([e["return"] for e in final])
    cost = np.array([e["cost"] for e in final])
    return {"variant": s.variant, "env": s.env, "obs": s.obs, "moving_hazard": s.moving_hazard,
            "goal_compass": s.goal_compass if s.env == "hazardnav" else None, "seed": s.seed,
            "steps": s.steps, "cost_limit": s.cost_limit, "eval_policy": s.eval_policy, "eval_step": last, "episodes": int(ret.size),
            "return_mean": float(ret.mean()) if ret.size else None,
            "cost_mean": float(cost.mean()) if cost.size else None,
            "within_limit": float((cost <= s.cost_limit).mean()) if cost.size else None}


# ------------------------------------------------------------------------------------------- eval
@dataclass(frozen=True)
class PigdreamerEvalSettings:
    """Every parameter of ``paperkit pigdreamer-eval`` and its default."""

    episodes: int = 20
    seed: int = 0
    policy: str = "model"   # "model": as the run was evaluated during training; "sample" / "greedy"; or "random"
    device: str = "auto"
    cost_calibration: bool = False   # also read the world model's cost over the same episodes (calibration.py)


def read_model(run_dir: str | Path) -> dict:
    """A pigdreamer-train run's ``model.pt`` (naive encoder, RSSM and actor are what evaluation uses)."""
    from paperkit.core import io

    path = Path(run_dir) / "model.pt"
    if not Path(run_dir).is_dir():
        raise InputError(f"{run_dir}: not a directory (expected a pigdreamer-train --run-dir)")
    if not path.is_file():
        raise InputError(f"{run_dir}: no model.pt (is it a finished pigdreamer-train run?)")
    blob = io.load_torch(path)
    if not isinstance(blob, dict) or blob.get("kind") not in ("paperkit.pigdreamer.model", "paperkit.pigdreamer.ppo"):
        raise InputError(f"{path}: not a pigdreamer-train model.pt")
    config = blob.get("config")
    env = config.get("env") if isinstance(config, dict) else None
    if not isinstance(env, str) or not _known_env(env):
        # gymnasium.make("pkg:Id") imports pkg: a model file must not decide what code runs
        raise InputError(f"{path}: config.env {env!r} is neither {' nor '.join(BUILTIN_ENVS)} nor a registered "
                         "gymnasium id (import the package that registers it first)")
    return blob


def _known_env(env: str) -> bool:
    if env in BUILTIN_ENVS:
        return True
    import gymnasium as gym

    from paperkit.methods.pigdreamer.envs import register_envs

    register_envs()
    return ":" not in env and env in gym.registry


def prepare_pigdreamer_eval(s: PigdreamerEvalSettings, run_dir: str | Path) -> dict:
    if s.device == "cuda":
        raise UsageError("pigdreamer-eval runs on the CPU; use --device cpu or auto")
    if s.policy not in ("model", *EVAL_POLICIES, "random"):
        raise UsageError(f"unknown --policy {s.policy!r}; expected model, sample, greedy or random")
    blob = read_model(run_dir)
    if s.cost_calibration:
        if blob["kind"] == "paperkit.pigdreamer.ppo":
            raise UsageError(f"{run_dir}: --cost-calibration reads a world model, and a ppo-lag run has none")
        # the calibration keeps every step of the episodes (the analysis itself runs in bounded chunks)
        from paperkit.methods.pigdreamer.train import config_from_dict, run_core

        cfg = config_from_dict(blob["config"])
        length = run_core(cfg, 1, need_privileged=False).horizon or 0
        if length < 1:
            raise InputError(f"{run_dir}: --cost-calibration needs an env with a known episode length "
                             f"(gymnasium max_episode_steps); {cfg.env} has none")
        if length <= cfg.agent.horizon:
            raise InputError(f"{run_dir}: --cost-calibration reads windows of the imagination horizon "
                             f"({cfg.agent.horizon} steps), and {cfg.env}'s episodes have only {length}")
        per_step = 4 * (int(np.prod(blob["obs_shape"])) + int(blob["priv_dim"]) + int(blob["n_actions"]) + 4)
        check_memory(float(s.episodes) * (length + 1) * per_step, f"--cost-calibration over {s.episodes} episodes")
    return blob


def execute_pigdreamer_eval(s: PigdreamerEvalSettings, blob: dict) -> dict:
    """``episodes`` episodes of the deployed policy (actions sampled or greedy, as ``s.policy`` says), or of a
    uniform random policy (``random``: the baseline, and with the calibration a behaviour that does not read
    the model); the env's privileged vector is never passed on."""
    import torch

    from paperkit.methods.pigdreamer.agent import DeployedPolicy
    from paperkit.methods.pigdreamer.train import RandomPolicy, evaluate, load_agent, run_core

    torch.set_num_threads(1)
    ppo = blob["kind"] == "paperkit.pigdreamer.ppo"
    if ppo:
        from paperkit.methods.pigdreamer.ppo import load_ppo_policy

        policy, cfg = load_ppo_policy(blob)
    else:
        agent, cfg = load_agent(blob)
        policy = DeployedPolicy(agent).eval()
    mode = cfg.eval_policy if s.policy == "model" else s.policy
    calibration = None
    if s.cost_calibration:      # the world model reads the privileged vector as in training; the policy does not
        from paperkit.methods.pigdreamer.calibration import cost_calibration

        core = run_core(cfg, s.episodes, need_privileged=cfg.agent.variant != "unprivileged")
        rows, calibration = cost_calibration(agent, core, s.episodes, 7919 + s.seed, greedy=mode == "greedy",
                                             behaviour=RandomPolicy(core) if mode == "random" else None)
    else:
        core = run_core(cfg, s.episodes, need_privileged=False)
        if mode == "random":
            policy = RandomPolicy(core)
        rows = evaluate(policy, core, s.episodes, 7919 + s.seed, greedy=mode == "greedy")
    ret = np.array([r["return"] for r in rows])
    cost = np.array([r["cost"] for r in rows])
    return {"variant": "ppo-lag" if ppo else cfg.agent.variant,
            "env": cfg.env, "episodes": s.episodes, "policy": mode, "return_mean": float(ret.mean()),
            "return_se": float(ret.std(ddof=1) / np.sqrt(ret.size)) if ret.size > 1 else 0.0,
            "cost_mean": float(cost.mean()), "cost_limit": cfg.agent.cost_limit,
            "within_limit": float((cost <= cfg.agent.cost_limit).mean()), "per_episode": rows,
            **({"cost_calibration": calibration} if calibration is not None else {})}


# ------------------------------------------------------------------------------------------ bound
@dataclass(frozen=True)
class PigdreamerBoundSettings:
    """Every parameter of ``paperkit pigdreamer-bound`` (the tiger-style CPOMDP of check 1)."""

    accuracy: float = 0.85
    gamma: float = 0.95
    listen_cost: float = 0.05
    right_cost: float = 0.1
    belief_step: float = 0.01


def execute_pigdreamer_bound(s: PigdreamerBoundSettings) -> dict:
    from paperkit.methods.pigdreamer.bound import TigerCPOMDP, tabular_bound

    if not 0.5 <= s.accuracy <= 1.0:
        raise UsageError(f"--accuracy must be in [0.5, 1], got {s.accuracy}")
    if not 0.0 < s.gamma < 1.0:
        raise UsageError(f"--gamma must be in (0, 1), got {s.gamma}")
    if not 1e-4 <= s.belief_step <= 0.5:
        raise UsageError(f"--belief-step must be in [0.0001, 0.5], got {s.belief_step}")
    return tabular_bound(TigerCPOMDP(s.accuracy, s.gamma, s.listen_cost, s.right_cost), s.belief_step)


# ---------------------------------------------------------------------------------------- compare
def read_summary(run_dir: str | Path) -> tuple[dict, list[dict]]:
    """A finished run's summary.json and eval.jsonl."""
    from paperkit.core import io

    d = Path(run_dir)
    for name in ("summary.json", "eval.jsonl"):
        if not (d / name).is_file():
            raise InputError(f"{run_dir}: no {name} (is it a finished pigdreamer-train run?)")
    summary = io.read_json(d / "summary.json")
    if not isinstance(summary, dict) or not isinstance(summary.get("variant"), str):
        raise InputError(f"{d / 'summary.json'}: not a pigdreamer-train summary")
    # the table and plot average these over seeds: a NaN or a string would pass into them silently
    for key, optional in (("steps", False), ("cost_limit", False), ("return_mean", True), ("cost_mean", True),
                          ("within_limit", True)):
        _check_number(summary.get(key), f"{d / 'summary.json'}: {key}", optional=optional)
    evals = io.read_jsonl(d / "eval.jsonl")
    for n, row in enumerate(evals, start=1):
        if not isinstance(row, dict):
            raise InputError(f"{d / 'eval.jsonl'}: entry {n} is not a JSON object")
        for key in ("step", "return", "cost"):
            _check_number(row.get(key), f"{d / 'eval.jsonl'}: entry {n}: {key}", optional=False)
    return summary, evals


def _check_number(value: Any, where: str, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise InputError(f"{where} = {value!r}; expected a finite number")


def compare_runs(summaries: list[dict]) -> list[dict]:
    """Mean ± standard error over seeds of the final return and cost, per variant, in the order first seen."""
    out = []
    for variant in dict.fromkeys(s["variant"] for s in summaries):
        rs = [s for s in summaries if s["variant"] == variant]
        row: dict[str, Any] = {"variant": variant, "n_seeds": len(rs), "steps": rs[0]["steps"],
                               "cost_limit": rs[0]["cost_limit"]}
        for key in ("return_mean", "cost_mean", "within_limit"):
            v = np.array([r[key] for r in rs if r.get(key) is not None], dtype=np.float64)
            name = key.replace("_mean", "")
            row[name] = float(v.mean()) if v.size else None
            row[f"{name}_se"] = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0
        out.append(row)
    return out
