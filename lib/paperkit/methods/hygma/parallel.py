"""PettingZoo views: one copy of a batched core as a ``ParallelEnv``, and B user ``ParallelEnv`` copies as a core.

``GridParallelEnv`` passes ``pettingzoo.test.parallel_api_test`` (``possible_agents``, per-agent Box/Discrete
spaces, ``state()`` for the mixer, ``action_mask`` in infos). ``ParallelBatch`` steps B copies of any
user ``ParallelEnv`` with discrete actions (``module:factory``) behind the core's interface, so the trainer
never sees the difference.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import numpy as np

from paperkit.core.errors import ConfigError, InputError
from paperkit.methods.hygma.envs import GridCore, Step, make_core


def _pz():
    try:
        from gymnasium import spaces
        from pettingzoo import ParallelEnv
    except ImportError as e:   # pragma: no cover - the marl extra is missing
        raise ConfigError("hygma needs pettingzoo and gymnasium: pip install 'paperkit-icml25[marl]'") from e
    return ParallelEnv, spaces


def grid_parallel_env(env: str = "pp", preset: str = "easy") -> Any:
    """A PettingZoo ``ParallelEnv`` over one copy of a built-in core."""
    parallel_env, spaces = _pz()

    class GridParallelEnv(parallel_env):
        metadata = {"name": f"paperkit_{env.replace('-', '_')}_{preset}", "render_modes": []}

        def __init__(self) -> None:
            self.core: GridCore = make_core(env, preset)
            self.possible_agents = [f"agent_{i}" for i in range(self.core.n_agents)]
            self.agents: list[str] = []
            box = spaces.Box(-1.0, 1.0, (self.core.obs_dim,), np.float32)
            self.observation_spaces = {a: box for a in self.possible_agents}
            self.action_spaces = {a: spaces.Discrete(self.core.n_actions) for a in self.possible_agents}
            self.state_space = spaces.Box(-1.0, 1.0, (self.core.state_dim,), np.float32)
            self._last: Step | None = None

        def observation_space(self, agent: str) -> Any:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.action_spaces[agent]

        def _split(self, step: Step) -> tuple[dict, dict]:
            obs = {a: step.obs[0, i] for i, a in enumerate(self.possible_agents)}
            infos = {a: {"action_mask": step.mask[0, i].astype(np.int8)} for i, a in enumerate(self.possible_agents)}
            return obs, infos

        def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
            seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed
            self._last = self.core.reset([seed])
            self.agents = list(self.possible_agents)
            return self._split(self._last)

        def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
            acts = np.array([[actions.get(a, 0) for a in self.possible_agents]])
            self._last = self.core.step(acts)
            obs, infos = self._split(self._last)
            reward = float(self._last.reward[0])
            done = bool(self._last.done[0])
            terminated = done and self.core.t < self.core.horizon
            truncated = done and not terminated
            agents = list(self.agents)
            self.agents = [] if done else agents
            return (obs, {a: reward for a in agents}, {a: terminated for a in agents},
                    {a: truncated for a in agents}, infos)

        def state(self) -> np.ndarray:
            return self._last.state[0]

    return GridParallelEnv()


def load_factory(spec: str) -> Any:
    """``module:factory`` → the callable, checked before use (a module path and a public callable name)."""
    module, _, name = spec.partition(":")
    if not module or not name.isidentifier() or name.startswith("_"):
        raise ConfigError(f"--env {spec!r}: expected a built-in env or module:factory (a public callable)")
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"--env {spec!r}: cannot import module {module!r} ({e})") from None
    factory = getattr(mod, name, None)
    parallel_env, _ = _pz()
    is_env_class = isinstance(factory, type) and issubclass(factory, parallel_env)
    is_own_function = inspect.isfunction(factory) and factory.__module__ == mod.__name__
    if not (is_env_class or is_own_function):
        raise ConfigError(f"--env {spec!r}: expected a pettingzoo ParallelEnv class or a factory function defined "
                          f"in {module}")
    return factory


def build_env(factory: Any, name: str) -> Any:
    """Call a checked factory; its result must be a ParallelEnv."""
    parallel_env, _ = _pz()
    try:
        env = factory()
    except Exception as e:   # a user factory may fail in any way: one line naming it
        raise InputError(f"{name}: the factory failed: {type(e).__name__}: {e}") from None
    if not isinstance(env, parallel_env):
        raise InputError(f"{name}: the factory returned {type(env).__name__}, not a pettingzoo ParallelEnv")
    return env


class ParallelBatch:
    """B copies of a user ``ParallelEnv`` behind the batched-core interface (team reward = mean over agents)."""

    success_key = "return"

    def __init__(self, factory: Any, batch: int, state_mode: str = "env", name: str = "user"):
        _, spaces = _pz()
        self.envs = [build_env(factory, name) for _ in range(batch)]
        first = self.envs[0]
        self.name = name
        self.agents = list(first.possible_agents)
        self.n_agents = len(self.agents)
        if self.n_agents < 2:
            raise InputError(f"{name}: needs at least 2 agents, found {self.n_agents}")
        acts = [first.action_space(a) for a in self.agents]
        if not all(isinstance(s, spaces.Discrete) for s in acts) or len({int(s.n) for s in acts}) != 1:
            raise InputError(f"{name}: every agent needs the same Discrete action space; got "
                             + ", ".join(f"{a}: {s}" for a, s in zip(self.agents, acts, strict=True)))
        self.n_actions = int(acts[0].n)
        dims = {int(np.prod(first.observation_space(a).shape)) for a in self.agents}
        if len(dims) != 1:
            raise InputError(f"{name}: agents have observations of different sizes {sorted(dims)}")
        self.obs_dim = dims.pop()
        self.state_mode = state_mode
        if state_mode == "env" and not callable(getattr(first, "state", None)):
            raise InputError(f"{name}: the env has no state() for the mixer; pass --state obs-concat")
        self.horizon = int(getattr(first, "max_cycles", 0) or getattr(first, "horizon", 0) or 100)
        self.rngs: list[Any] = []
        self.reset(range(batch))   # learns the state size (and checks state() works)

    @property
    def batch(self) -> int:
        return len(self.envs)

    def _state(self, env: Any, obs: np.ndarray) -> np.ndarray:
        if self.state_mode == "obs-concat":
            return obs.reshape(-1)
        try:
            return np.asarray(env.state(), np.float32).reshape(-1)
        except NotImplementedError:
            raise InputError(f"{self.name}: state() is not implemented; pass --state obs-concat") from None

    def _collect(self, outs: list[tuple[dict, dict, float, bool]]) -> Step:
        obs = np.zeros((self.batch, self.n_agents, self.obs_dim), np.float32)
        mask = np.ones((self.batch, self.n_agents, self.n_actions), bool)
        states, reward, done = [], np.zeros(self.batch, np.float32), np.zeros(self.batch, bool)
        for b, (o, info, r, d) in enumerate(outs):
            for i, a in enumerate(self.agents):
                if a in o:
                    obs[b, i] = np.asarray(o[a], np.float32).reshape(-1)
                if "action_mask" in info.get(a, {}):
                    mask[b, i] = np.asarray(info[a]["action_mask"], bool)
            states.append(self._state(self.envs[b], obs[b]))
            reward[b], done[b] = r, d
        self.returns += reward
        return Step(obs, np.stack(states), mask, reward, done, {"return": self.returns.copy()})

    def reset(self, seeds: Any) -> Step:
        self.rngs = list(seeds)
        self.t = 0
        self.returns = np.zeros(self.batch, np.float32)
        self.finished = np.zeros(self.batch, bool)
        outs = [(*env.reset(seed=int(s)), 0.0, False) for env, s in zip(self.envs, seeds, strict=True)]
        step = self._collect(outs)
        self.state_dim = step.state.shape[1]
        return step

    def step(self, actions: np.ndarray) -> Step:
        self.t += 1
        outs = []
        for b, env in enumerate(self.envs):
            if self.finished[b] or not env.agents:
                outs.append(({}, {}, 0.0, True))
                continue
            live = {a: int(actions[b, i]) for i, a in enumerate(self.agents) if a in env.agents}
            o, r, term, trunc, info = env.step(live)
            done = not env.agents or all(term.get(a, False) or trunc.get(a, False) for a in live)
            outs.append((o, info, float(np.mean(list(r.values()))) if r else 0.0, done))
        step = self._collect(outs)
        step.done |= self.t >= self.horizon
        self.finished |= step.done
        return step


def make_env(env: str, preset: str, batch: int, state_mode: str = "env") -> Any:
    """A batched environment: a built-in core, or B copies of a user ``module:factory`` ParallelEnv."""
    if ":" in env:
        return ParallelBatch(load_factory(env), batch, state_mode, name=env)
    core = make_core(env, preset)
    if state_mode == "obs-concat":
        raise ConfigError("--state obs-concat is for user envs; the built-in envs have a global state()")
    return core
