"""Orchestration of hygma-train and hygma-eval: settings (the single source of defaults), prepare (every check
before a run dir exists), execute (one ``run.cached`` stage per algorithm and seed: checkpoint and resume).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core.errors import ConfigError, InputError, UsageError
from paperkit.core.resources import check_memory, resolve_jobs
from paperkit.methods.hygma.envs import PRESETS
from paperkit.methods.hygma.grouping import assignment_ari, specialisation
from paperkit.methods.hygma.train import ALGOS, GROUPINGS, TrainConfig

ENVS = tuple(PRESETS)
STATE_MODES = ("env", "obs-concat")
SUCCESS = {"pp": "catch", "group-capture": "catches", "lbf-lite": "collected"}   # what "success" measures


@dataclass(frozen=True)
class HygmaTrainSettings:
    """Every parameter of ``paperkit hygma-train`` and its default (laptop scale: pp medium, minutes per run)."""

    env: str = "pp"
    preset: str = "medium"
    algo: tuple[str, ...] = ("hygma-qmix",)
    steps: int = 200_000
    seeds: tuple[int, ...] = (0,)
    state: str = "env"
    grouping: str = "dynamic"
    k_range: tuple[int, int] | None = None      # None: [2, min(3, n_agents - 1)]
    stability: float = 0.6
    cluster_every: int = 20_000
    history: int = 500
    hgcn_mode: str = "paper"
    lambda_consistency: float = 1e-3
    lambda_attention: float = 1e-2
    batch_envs: int = 8
    batch_size: int = 32
    buffer_episodes: int = 5000
    target_every: int = 200
    lr: float = 5e-4
    gamma: float = 0.99
    epsilon_anneal: int = 100_000
    eval_every: int = 10_000
    eval_episodes: int = 32
    device: str = "auto"

    def config(self, algo: str, n_agents: int) -> TrainConfig:
        k_min, k_max = self.k_range if self.k_range is not None else (2, min(3, n_agents - 1))
        shared = {f.name for f in fields(TrainConfig)} & {f.name for f in fields(self)}
        return TrainConfig(algo=algo, k_min=k_min, k_max=k_max, **{k: getattr(self, k) for k in shared
                                                                    if k not in ("algo",)})


@dataclass
class HygmaTrainInputs:
    settings: HygmaTrainSettings
    n_agents: int
    horizon: int
    configs: dict[str, TrainConfig]
    jobs: list[tuple[str, int]] = field(default_factory=list)


def _check_settings(s: HygmaTrainSettings) -> None:
    if s.state not in STATE_MODES:
        raise UsageError(f"--state {s.state!r}; expected one of {', '.join(STATE_MODES)}")
    bad = [a for a in s.algo if a not in ALGOS]
    if bad or not s.algo:
        raise UsageError(f"unknown --algo {bad[0] if bad else ''!r}; expected one or more of {', '.join(ALGOS)}")
    if s.grouping not in GROUPINGS:
        raise UsageError(f"--grouping {s.grouping!r}; expected one of {', '.join(GROUPINGS)}")
    if not 0.0 <= s.stability <= 1.0:
        raise UsageError(f"--stability δ must be in [0, 1], got {s.stability}")
    if not s.seeds:
        raise UsageError("--seeds is empty")
    if s.batch_size > s.buffer_episodes:
        raise UsageError(f"--batch-size {s.batch_size} is more than --buffer-episodes {s.buffer_episodes}")


def make_envs(s: HygmaTrainSettings) -> tuple[Any, Any]:
    """The training and evaluation environments (B = --batch-envs copies each)."""
    from paperkit.methods.hygma.parallel import make_env

    return (make_env(s.env, s.preset, s.batch_envs, s.state), make_env(s.env, s.preset, s.batch_envs, s.state))


def prepare_hygma_train(s: HygmaTrainSettings) -> HygmaTrainInputs:
    """Check every setting against the environment before a run dir exists."""
    _check_settings(s)
    if ":" not in s.env and s.env not in ENVS:
        raise UsageError(f"unknown --env {s.env!r}; expected one of {', '.join(ENVS)} or module:factory")
    env, _ = make_envs(s)
    n = env.n_agents
    if s.k_range is not None:
        k_min, k_max = s.k_range
        if not 2 <= k_min <= k_max:
            raise UsageError(f"--k-range {k_min} {k_max}: need 2 ≤ k_min ≤ k_max")
        if k_max >= n:
            raise UsageError(f"--k-range {k_min} {k_max}: k_max must be below the number of agents ({n})")
    elif n < 3 and any(a.startswith("hygma") for a in s.algo) and s.grouping != "single":
        raise UsageError(f"{s.env} has {n} agents: spectral grouping needs ≥ 3 (use --grouping single)")
    one_batch = s.batch_envs * env.horizon
    if s.steps < one_batch:
        raise UsageError(f"--steps {s.steps} is less than one batch of episodes ({s.batch_envs} envs × "
                         f"{env.horizon} steps = {one_batch})")
    check_memory(replay_bytes(s, env), f"a replay of {s.buffer_episodes} episodes of {env.horizon} steps")
    configs = {a: s.config(a, n) for a in s.algo}
    jobs = [(a, seed) for seed in s.seeds for a in s.algo]   # seed-major: algorithms finish side by side
    return HygmaTrainInputs(s, n, env.horizon, configs, jobs)


def replay_bytes(s: HygmaTrainSettings, env: Any) -> float:
    """Replay memory from the options alone: per episode step, obs + masks + state + actions/reward (float32/bool)."""
    per_step = 4.0 * env.n_agents * env.obs_dim + env.n_agents * env.n_actions + 4.0 * env.state_dim + 8.0 * env.n_agents + 12
    return float(s.buffer_episodes) * (env.horizon + 1) * per_step * 2   # the sampled batch and tensors on top


def job_name(algo: str, seed: int) -> str:
    return f"{algo}_s{seed}"


def _plain_final(final: dict) -> dict:
    return {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v) for k, v in final.items()}


@dataclass
class HygmaTrainResult:
    curves: list[dict]
    groups: list[dict]
    summary: dict
    models: dict[str, dict]
    attention: np.ndarray
    timing: dict[str, dict]     # per job: seconds by phase and env steps/s (the manifest's, not a data file's)


def _fit_job(s: HygmaTrainSettings, config: TrainConfig, seed: int, on_steps: Callable[[int], None] | None = None) -> dict:
    """Train one (algorithm, seed) on one torch thread (the agent nets are small); a checkpointable dict."""
    import torch

    from paperkit.core.devices import resolve_device
    from paperkit.methods.hygma.train import train

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True, warn_only=True)
    env, eval_env = make_envs(s)
    out = train(env, config, seed, resolve_device(s.device), eval_env, on_steps=on_steps)
    return {"curves": out.curves, "groups": out.groups, "attention": torch.as_tensor(out.attention),
            "checkpoint": out.checkpoint, "timing": out.timing, "final": _plain_final(out.final)}


def _train_in_pool(inputs: HygmaTrainInputs, run: Any, pending: list[tuple[str, int]], workers: int,
                   bar: Any) -> None:
    """Train the pending jobs in ``workers`` spawned processes, checkpointing each stage as it finishes.

    Spawned, not forked: a fork after torch has started its thread pool can deadlock the child."""
    from concurrent.futures import as_completed

    from paperkit.core.resources import process_pool

    s = inputs.settings
    with process_pool(workers) as pool:
        futures = {pool.submit(_fit_job, s, inputs.configs[a], seed): job_name(a, seed) for a, seed in pending}
        for f in as_completed(futures):
            run.save_checkpoint(f"{futures[f]}.pt", f.result())
            bar.update(1)


def execute_hygma_train(inputs: HygmaTrainInputs, run: Any, progress: Callable[..., Any] | None = None,
                        jobs: int = 1, on_job: Callable[[str, list[dict]], None] | None = None) -> HygmaTrainResult:
    """One cached stage per (algorithm, seed), trained in ``jobs`` processes (0: one per core); the result
    gathers curves, groups, attention and summaries. ``on_job(name, curves)`` sees each job's evaluations.
    Results do not depend on ``jobs``."""
    if progress is None:
        from paperkit.core.progress import progress
    s = inputs.settings
    pending = [(a, seed) for a, seed in inputs.jobs if not run.has_checkpoint(f"{job_name(a, seed)}.pt")]
    workers = min(resolve_jobs(jobs), len(pending))
    curves, groups, rows, models, attention, timing = [], [], [], {}, [], {}
    with progress(total=len(inputs.jobs), desc="hygma-train", unit="run") as bar:
        if workers > 1:
            _train_in_pool(inputs, run, pending, workers, bar)
        for algo, seed in inputs.jobs:
            name = job_name(algo, seed)
            bar.set_postfix_str(name)
            done = run.cached(name, lambda a=algo, sd=seed: _fit_job(s, inputs.configs[a], sd), fmt="pt")
            if workers <= 1:
                bar.update(1)
            if on_job is not None:
                on_job(name, done["curves"])
            curves += [{"algo": algo, "seed": seed, **c} for c in done["curves"]]
            groups += [{"algo": algo, "seed": seed, **g} for g in done["groups"]]
            models[name] = done["checkpoint"]
            attention.append(done["attention"].numpy())
            rows.append(_run_row(algo, seed, done))
            timing[name] = _job_timing(done["timing"])
    summary = {"env": s.env, "preset": s.preset, "steps": s.steps, "n_agents": inputs.n_agents,
               "success_metric": SUCCESS.get(s.env, "return"),
               "runs": rows, "mean": summarize(rows)}
    width = max((a.shape[-1] for a in attention if a.size), default=1)
    kept = [np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])]) for a in attention if a.size]
    att = np.concatenate(kept, 0) if kept else np.zeros((0,), np.float32)
    return HygmaTrainResult(curves, groups, summary, models, att.astype(np.float32), timing)


def _job_timing(timing: dict) -> dict:
    """One job's timings, with clustering's share of its wall time (the issue's < 5 % target)."""
    return {**timing, "cluster_share": timing["cluster_s"] / max(timing["wall_s"], 1e-9)}


def _run_row(algo: str, seed: int, done: dict) -> dict:
    final = done["final"]
    row = {"algo": algo, "seed": seed, "return": final["return"], "success": final["success"],
           "k": done["groups"][-1]["k"],
           "regroupings": sum(g["kind"] == "dynamic" and g["accepted"] for g in done["groups"])}
    if "helped" in final:   # group-capture: catches each agent helped with, per prey, in the final evaluation
        row["helped"] = np.asarray(final["helped"]).tolist()
        row["specialisation"] = specialisation(final["helped"])
        if algo.startswith("hygma"):
            row["group_ari"] = assignment_ari(done["groups"][-1]["groups"], final["helped"])
    return row


def summarize(rows: list[dict]) -> list[dict]:
    """Mean and standard error over seeds of return and success, per algorithm."""
    out = []
    for algo in dict.fromkeys(r["algo"] for r in rows):
        rs = [r for r in rows if r["algo"] == algo]
        entry: dict[str, Any] = {"algo": algo, "n_seeds": len(rs)}
        for key in ("return", "success", "group_ari"):
            v = np.array([r[key] for r in rs if r.get(key) is not None], dtype=np.float64)
            if v.size:
                entry[f"{key}_mean"] = float(v.mean())
                entry[f"{key}_se"] = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0
        out.append(entry)
    return out


# ------------------------------------------------------------------------------------------- eval
@dataclass(frozen=True)
class HygmaEvalSettings:
    """Every parameter of ``paperkit hygma-eval`` and its default."""

    job: str | None = None
    env: str | None = None
    episodes: int = 32
    ascii: bool = False
    seed: int = 0
    device: str = "auto"


def load_model(path: str, job: str | None) -> tuple[dict, dict, str]:
    """A hygma-train ``model.pt``: its run settings, one job's checkpoint and the job's name."""
    from paperkit.core import io
    from paperkit.core.validate import check_finite_weights

    blob = io.load_torch(path)
    name_of = io.display_name(path)
    if not isinstance(blob, dict) or blob.get("kind") != "paperkit.hygma.model":
        raise InputError(f"{name_of}: not a hygma-train model.pt")
    jobs, settings = blob.get("jobs"), blob.get("settings")
    if not isinstance(jobs, dict) or not jobs or not isinstance(settings, dict):
        raise InputError(f"{name_of}: 'jobs' or 'settings' is missing or not a mapping; not a hygma-train model.pt")
    name = job or next(iter(jobs))
    if name not in jobs:
        raise UsageError(f"--job {name!r} is not in {name_of}; it holds {', '.join(jobs)}")
    check_finite_weights(jobs[name], name_of, f"jobs.{name}")
    return settings, jobs[name], name


def model_blob(settings: HygmaTrainSettings, models: dict[str, dict]) -> dict:
    from dataclasses import asdict

    return {"kind": "paperkit.hygma.model", "settings": {k: (list(v) if isinstance(v, tuple) else v)
                                                         for k, v in asdict(settings).items()}, "jobs": models}


def check_model_env(trained_on: Any, named: str | None, model: str) -> None:
    """A model file is data: its env names a built-in env, or a module:factory that the user names again
    with --env. Importing a module that a file names would run that module's code (and then call its
    factory), a way around the weights-only load."""
    if not isinstance(trained_on, str) or not trained_on:
        raise InputError(f"{model}: settings.env is {trained_on!r}; not a hygma-train model.pt")
    if ":" not in trained_on:
        if trained_on not in ENVS:
            raise InputError(f"{model}: settings.env {trained_on!r} is not a built-in env ({', '.join(ENVS)})")
        if named is not None and named != trained_on:
            raise UsageError(f"--env {named}: the model was trained on {trained_on}")
        return
    if named is None:
        raise UsageError(f"{model} was trained on the user env {trained_on}; to import and run that code, "
                         f"name it yourself: --env {trained_on}")
    if named != trained_on:
        raise UsageError(f"--env {named}: the model was trained on {trained_on}")


def settings_from_blob(blob: dict) -> HygmaTrainSettings:
    known = {f.name for f in fields(HygmaTrainSettings)}
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in blob.items() if k in known}
    try:
        return HygmaTrainSettings(**values)
    except TypeError as e:
        raise ConfigError(f"model.pt settings are not readable: {e}") from None


@dataclass
class HygmaEvalInputs:
    settings: HygmaEvalSettings
    train_settings: HygmaTrainSettings
    checkpoint: dict
    job: str


@dataclass
class HygmaEvalResult:
    summary: dict
    frames: list[str]


def prepare_hygma_eval(s: HygmaEvalSettings, model: str) -> HygmaEvalInputs:
    train_blob, ckpt, name = load_model(model, s.job)
    ts = settings_from_blob(train_blob)
    check_model_env(ts.env, s.env, model)
    env, _ = make_envs(ts)
    if (env.obs_dim, env.n_agents, env.n_actions) != (ckpt["obs_dim"], ckpt["n_agents"], ckpt["n_actions"]):
        raise InputError(f"{model}: the model was trained on a different environment than {ts.env} {ts.preset}")
    if s.ascii and ":" in ts.env:
        raise UsageError("--ascii renders the built-in grid envs only")
    return HygmaEvalInputs(s, ts, ckpt, name)


def execute_hygma_eval(inputs: HygmaEvalInputs) -> HygmaEvalResult:
    """Greedy rollouts (sampled for hygma-ac) of one trained job; optional ASCII frames of the first episode."""
    import torch

    from paperkit.core.devices import resolve_device
    from paperkit.methods.hygma.train import evaluate, load_learner

    s, ts = inputs.settings, inputs.train_settings
    learner = load_learner(inputs.checkpoint, resolve_device(s.device))
    env, _ = make_envs(ts)
    gen = torch.Generator().manual_seed(s.seed)
    torch.manual_seed(s.seed)
    ev = evaluate(env, learner, s.episodes, 3 * 10**9 + s.seed * 1_000_003, gen, ts.batch_envs)
    summary = {"job": inputs.job, "algo": learner.cfg.algo, "env": ts.env, "preset": ts.preset,
               "episodes": s.episodes, "return": ev["return"], "success": ev["success"],
               "groups": learner.incidence.argmax(0).tolist()}
    if "helped" in ev:
        summary["helped"] = ev["helped"].tolist()
        summary["specialisation"] = specialisation(ev["helped"])
        summary["group_ari"] = assignment_ari(summary["groups"], ev["helped"].tolist())
    frames = ascii_episode(env, learner, s.seed, gen) if s.ascii else []
    return HygmaEvalResult(summary, frames)


def ascii_episode(env: Any, learner: Any, seed: int, gen: Any) -> list[str]:
    """One greedy episode of copy 0 as text frames: digits are agents (their id mod 10), P prey, F food."""
    import torch

    from paperkit.methods.hygma.train import agent_inputs

    step = env.reset([3 * 10**9 + seed])
    last = np.full((1, env.n_agents), -1)
    hidden = torch.zeros(1, env.n_agents, learner.cfg.hidden, device=learner.device)
    frames = [_frame(env, 0)]
    for t in range(env.horizon):
        acts, hidden, _ = learner.act(agent_inputs(step.obs, last, learner.n_actions), hidden, step.mask, 0.0, gen)
        step, last = env.step(acts), acts
        frames.append(_frame(env, t + 1, float(step.reward[0])))
        if step.done[0]:
            break
    return frames


def _frame(env: Any, t: int, reward: float = 0.0) -> str:
    grid = [["." for _ in range(env.size)] for _ in range(env.size)]
    targets = getattr(env, "prey", None)
    if targets is None:
        targets = env.food[0][env.alive[0]]
        mark = "F"
    else:
        targets = targets[0].reshape(-1, 2)
        mark = "P"
    for r, c in targets:
        grid[r][c] = mark
    for i, (r, c) in enumerate(env.pos[0]):
        grid[r][c] = str(i % 10)
    return f"t={t} reward={reward:+.2f}\n" + "\n".join(" ".join(row) for row in grid)


def read_run_curves(run_dir: str | Path) -> tuple[str, list[dict], list, list[Path]]:
    """A hygma-train run's curves.csv rows and groups.jsonl, checked: (name, curves, groups, files read)."""
    from paperkit.core import io, tables

    curves_path, groups_path = Path(run_dir) / "curves.csv", Path(run_dir) / "groups.jsonl"
    table = tables.read_table(curves_path)
    needed = {"algo", "seed", "step", "return", "success"}
    missing = needed - set(table.columns)
    if missing:
        raise InputError(f"{curves_path}: missing columns {', '.join(sorted(missing))}; expected hygma-train's curves.csv")
    if not table.records():
        raise InputError(f"{curves_path}: no rows")
    # NaN or text would be drawn as gaps or break the mean ± s.e. silently
    table.numeric(["seed", "step", "return", "success"], finite=True)
    return Path(run_dir).name, table.records(), io.read_jsonl(groups_path), [curves_path, groups_path]
