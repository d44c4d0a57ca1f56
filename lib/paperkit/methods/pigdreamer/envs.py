"""CPU stand-ins for the paper's Safety-Gymnasium vision tasks (spec, "Data"), on the gymnasium API.

* HazardNav-PO: a 9×9 grid, one goal, 3 hazards resampled per episode, 100-step episodes. The agent sees
  an egocentric 5×5 patch (wall, goal, hazard channels); a hazard shows only when adjacent, and then with
  probability 0.5. The goal shows as 1 inside the patch; outside it, the goal compass (on by default) marks
  0.5 on the patch cell the goal's offset clips to, as Safety-Gymnasium's goal tasks always sense the goal
  (goal lidar or camera). Without it the goal is out of sight ~3/4 of the time and the task is a search.
  Privileged vector (in cells): agent and goal coordinates, hazard offsets from the agent, nearest first.
  Reward: minus the change in Manhattan goal distance, +1 at the goal (which respawns); cost 1 per step on a
  hazard (the agent's new cell against the hazards before they move, so cost is a function of the
  privileged vector and action).
* PointGoal-PO: a 2-D point robot in [-1, 1]² among circular hazards, seen through a short-range noisy lidar.
  Privileged vector: robot and goal positions, hazard offsets from the robot, nearest first.

Each task has a batched core stepping B copies at once (one numba kernel per task) and a
single-copy gymnasium ``Env`` over the same core. Every copy draws from its own MINSTD stream (int64, the same
numbers in numba and Python), so a copy's trajectory does not depend on B. Autoreset follows gymnasium's
next-step mode: the call after an episode ends resets that copy (its action is ignored, reward and cost 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from numba import njit

from paperkit.core.errors import InputError

MINSTD = 2147483647
MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)   # stay, up, down, left, right


def stream_seed(seed: int, copy: int = 0) -> int:
    """An independent MINSTD start for (seed, copy): splitmix64 of both, folded into [1, 2^31 - 2]."""
    mask = (1 << 64) - 1
    z = (int(seed) * 0x9E3779B97F4A7C15 + (copy + 1) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return int(z % (MINSTD - 2)) + 1


@njit(cache=True)
def _uniform(rng: np.ndarray, i: int) -> float:
    x = rng[i] * 48271                      # < 2^47; x mod (2^31 − 1) by folding the high bits (no division)
    x = (x & MINSTD) + (x >> 31)
    rng[i] = x - MINSTD if x >= MINSTD else x
    return rng[i] * (1.0 / MINSTD)


@njit(cache=True)
def _randint(rng: np.ndarray, i: int, n: int) -> int:
    return min(int(_uniform(rng, i) * n), n - 1)


@dataclass
class StepBatch:
    """One step of B copies: what the agent sees, what only training sees, and episode flags."""

    obs: np.ndarray          # (B, *obs_shape) float32
    privileged: np.ndarray   # (B, priv_dim) float32
    reward: np.ndarray       # (B,) float32
    cost: np.ndarray         # (B,) float32
    is_first: np.ndarray     # (B,) bool: this observation starts an episode
    is_last: np.ndarray      # (B,) bool: the episode ended (terminated or truncated)
    is_terminal: np.ndarray  # (B,) bool: ended by termination (no bootstrap)


# --------------------------------------------------------------------------------------- HazardNav
@njit(cache=True)
def _occupied(r: int, c: int, i: int, agent: np.ndarray, goal: np.ndarray, haz: np.ndarray, upto: int) -> bool:
    if agent[i, 0] == r and agent[i, 1] == c:
        return True
    if goal[i, 0] == r and goal[i, 1] == c:
        return True
    for k in range(upto):
        if haz[i, k, 0] == r and haz[i, k, 1] == c:
            return True
    return False


@njit(cache=True)
def _free_cell(i: int, size: int, rng: np.ndarray, agent: np.ndarray, goal: np.ndarray, haz: np.ndarray,
               upto: int) -> tuple:
    while True:
        r, c = _randint(rng, i, size), _randint(rng, i, size)
        if not _occupied(r, c, i, agent, goal, haz, upto):
            return r, c


@njit(cache=True)
def _hn_reset_one(i, size, rng, agent, goal, haz, t):
    agent[i, 0], agent[i, 1] = _randint(rng, i, size), _randint(rng, i, size)
    goal[i, 0], goal[i, 1] = -9, -9
    goal[i, 0], goal[i, 1] = _free_cell(i, size, rng, agent, goal, haz, 0)
    for k in range(haz.shape[1]):
        haz[i, k, 0], haz[i, k, 1] = -9, -9
    for k in range(haz.shape[1]):
        haz[i, k, 0], haz[i, k, 1] = _free_cell(i, size, rng, agent, goal, haz, k)
    t[i] = 0


@njit(cache=True)
def _hn_observe_one(i, size, rng, agent, goal, haz, reveal, compass, obs, priv):
    obs[i] = 0.0
    ar, ac = agent[i, 0], agent[i, 1]
    gr, gc = goal[i, 0] - ar, goal[i, 1] - ac
    if compass and (abs(gr) > 2 or abs(gc) > 2):
        # the goal's direction: its offset clipped to the patch (a cell between agent and goal, so on the grid);
        # stepping towards the mark always shortens the goal distance
        obs[i, 1, min(max(gr, -2), 2) + 2, min(max(gc, -2), 2) + 2] = 0.5
    for dr in range(-2, 3):
        for dc in range(-2, 3):
            r, c = ar + dr, ac + dc
            if r < 0 or c < 0 or r >= size or c >= size:
                obs[i, 0, dr + 2, dc + 2] = 1.0
                continue
            if goal[i, 0] == r and goal[i, 1] == c:
                obs[i, 1, dr + 2, dc + 2] = 1.0
            if abs(dr) <= 1 and abs(dc) <= 1:
                for k in range(haz.shape[1]):
                    if haz[i, k, 0] == r and haz[i, k, 1] == c:
                        if _uniform(rng, i) < reveal:
                            obs[i, 2, dr + 2, dc + 2] = 1.0
                        break
    # in cells (the models symlog their inputs): a hazard under the agent is a clean 0 against ±1 for a neighbour
    priv[i, 0], priv[i, 1] = ar, ac
    priv[i, 2], priv[i, 3] = goal[i, 0], goal[i, 1]
    # The hazards are a set: nearest first (Chebyshev, then Manhattan distance, then row and column offset), as a
    # simulator's hazard sensor orders them by distance, not by identity. In slot order the rule "a hazard at
    # offset (0, 0)" has to be learned once per slot, from a third of the cost events each.
    for k in range(haz.shape[1]):
        _insert_nearest(priv, i, k, haz[i, k, 0] - ar, haz[i, k, 1] - ac, False)


@njit(cache=True)
def _insert_nearest(priv, i, k, dx, dy, euclidean):
    """Insertion-sort step: put hazard k's offset (dx, dy) into priv[i, 4:], whose first k offsets are sorted,
    nearest first. Grid order (``euclidean`` False): Chebyshev, then Manhattan distance; plane order: Euclidean
    distance. Ties go by the offset itself, so the order is total and equal keys are equal offsets."""
    j = k
    while j > 0 and _sorts_before(dx, dy, priv[i, 2 + 2 * j], priv[i, 3 + 2 * j], euclidean):
        priv[i, 4 + 2 * j], priv[i, 5 + 2 * j] = priv[i, 2 + 2 * j], priv[i, 3 + 2 * j]
        j -= 1
    priv[i, 4 + 2 * j], priv[i, 5 + 2 * j] = dx, dy


@njit(cache=True)
def _sorts_before(dx, dy, ex, ey, euclidean) -> bool:
    if euclidean:
        a, b = dx * dx + dy * dy, ex * ex + ey * ey
        if a != b:
            return a < b
    else:
        a, b = max(abs(dx), abs(dy)), max(abs(ex), abs(ey))
        if a != b:
            return a < b
        a, b = abs(dx) + abs(dy), abs(ex) + abs(ey)
        if a != b:
            return a < b
    return dx < ex or (dx == ex and dy < ey)


@njit(cache=True)
def _hn_move_one(i, a, size, rng, agent, goal, haz, moving, move_prob, moves):
    """Move the agent; reward (distance shaping, +1 at the goal) and cost (agent on a hazard)."""
    old = abs(agent[i, 0] - goal[i, 0]) + abs(agent[i, 1] - goal[i, 1])
    agent[i, 0] = min(max(agent[i, 0] + moves[a, 0], 0), size - 1)
    agent[i, 1] = min(max(agent[i, 1] + moves[a, 1], 0), size - 1)
    new = abs(agent[i, 0] - goal[i, 0]) + abs(agent[i, 1] - goal[i, 1])
    reward = float(old - new)
    cost = 0.0
    for k in range(haz.shape[1]):
        if haz[i, k, 0] == agent[i, 0] and haz[i, k, 1] == agent[i, 1]:
            cost = 1.0
    if new == 0:
        reward += 1.0
        goal[i, 0], goal[i, 1] = -9, -9
        goal[i, 0], goal[i, 1] = _free_cell(i, size, rng, agent, goal, haz, haz.shape[1])
    if moving:
        for k in range(haz.shape[1]):
            if _uniform(rng, i) < move_prob:
                d = 1 + _randint(rng, i, 4)
                r = min(max(haz[i, k, 0] + moves[d, 0], 0), size - 1)
                c = min(max(haz[i, k, 1] + moves[d, 1], 0), size - 1)
                if not (goal[i, 0] == r and goal[i, 1] == c):
                    haz[i, k, 0], haz[i, k, 1] = r, c
    return reward, cost


@njit(cache=True)
def _hn_step_batch(actions, size, horizon, reveal, compass, moving, move_prob, moves, rng, agent, goal, haz, t,
                   done, obs, priv, values, flags):
    """One step of every copy; ``values`` rows are (reward, cost), ``flags`` rows (is_first, is_last)."""
    for i in range(actions.shape[0]):
        if done[i]:
            _hn_reset_one(i, size, rng, agent, goal, haz, t)
            values[0, i], values[1, i], flags[0, i], flags[1, i] = 0.0, 0.0, True, False
        else:
            values[0, i], values[1, i] = _hn_move_one(i, actions[i], size, rng, agent, goal, haz, moving, move_prob,
                                                      moves)
            t[i] += 1
            flags[0, i], flags[1, i] = False, t[i] >= horizon
        done[i] = flags[1, i]
        _hn_observe_one(i, size, rng, agent, goal, haz, reveal, compass, obs, priv)


@njit(cache=True)
def _hn_reset_batch(size, reveal, compass, rng, agent, goal, haz, t, done, obs, priv):
    for i in range(agent.shape[0]):
        _hn_reset_one(i, size, rng, agent, goal, haz, t)
        done[i] = False
        _hn_observe_one(i, size, rng, agent, goal, haz, reveal, compass, obs, priv)


class BatchCore:
    """Shared interface of the batched cores: ``reset(seeds)``, ``step(actions)``, ``state()``/``load_state``."""

    n: int
    obs_shape: tuple[int, ...]
    priv_dim: int
    discrete: bool
    n_actions: int          # discrete: number of actions; continuous: action dimensions
    horizon: int
    _state_keys: tuple[str, ...] = ()

    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """Fresh arrays a step kernel fills: rows (reward, cost) and rows (is_first, is_last)."""
        return np.empty((2, self.n), np.float32), np.empty((2, self.n), np.bool_)

    def _stepped(self, values: np.ndarray, flags: np.ndarray) -> StepBatch:
        return self._batch(values[0], values[1], flags[0], flags[1])

    def _seed_streams(self, seeds: Any) -> None:
        if seeds is not None:
            seeds = np.broadcast_to(np.asarray(seeds, dtype=np.int64), (self.n,))
            self.rng[:] = [stream_seed(int(s)) for s in seeds]

    def state(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k).copy() for k in self._state_keys}

    def load_state(self, state: dict[str, Any]) -> None:
        for k in self._state_keys:
            getattr(self, k)[...] = np.asarray(state[k])


class HazardNavCore(BatchCore):
    """B copies of HazardNav-PO stepped by one numba kernel."""

    _state_keys = ("rng", "agent", "goal", "haz", "t", "done")

    def __init__(self, n: int, *, obs: str = "vector", moving: bool = False, size: int = 9, n_hazards: int = 3,
                 horizon: int = 100, reveal: float = 0.5, move_prob: float = 0.25, goal_compass: bool = True):
        self.n, self.size, self.horizon, self.reveal, self.goal_compass = n, size, horizon, reveal, goal_compass
        self.moving, self.move_prob, self.image = moving, move_prob, obs == "image"
        self.obs_shape = (3, 5, 5) if self.image else (75,)
        self.priv_dim, self.discrete, self.n_actions = 4 + 2 * n_hazards, True, 5
        self.rng = np.array([stream_seed(0, i) for i in range(n)], dtype=np.int64)
        self.agent = np.zeros((n, 2), np.int64)
        self.goal = np.zeros((n, 2), np.int64)
        self.haz = np.zeros((n, n_hazards, 2), np.int64)
        self.t = np.zeros(n, np.int64)
        self.done = np.zeros(n, np.bool_)
        self._obs = np.zeros((n, 3, 5, 5), np.float32)
        self._priv = np.zeros((n, self.priv_dim), np.float32)

    def _batch(self, reward, cost, is_first, is_last) -> StepBatch:
        obs = self._obs.copy() if self.image else self._obs.reshape(self.n, -1).copy()
        return StepBatch(obs, self._priv.copy(), reward, cost, is_first, is_last, np.zeros(self.n, np.bool_))

    def reset(self, seeds: Any = None) -> StepBatch:
        self._seed_streams(seeds)
        _hn_reset_batch(self.size, self.reveal, self.goal_compass, self.rng, self.agent, self.goal, self.haz,
                        self.t, self.done, self._obs, self._priv)
        z = np.zeros(self.n, np.float32)
        return self._batch(z, z.copy(), np.ones(self.n, np.bool_), np.zeros(self.n, np.bool_))

    def step(self, actions: Any) -> StepBatch:
        actions = np.asarray(actions, dtype=np.int64).reshape(self.n)
        values, flags = self._outputs()
        _hn_step_batch(actions, self.size, self.horizon, self.reveal, self.goal_compass, self.moving,
                       self.move_prob, MOVES, self.rng, self.agent, self.goal, self.haz, self.t, self.done,
                       self._obs, self._priv, values, flags)
        return self._stepped(values, flags)


# -------------------------------------------------------------------------------------- PointGoal
@njit(cache=True)
def _pg_place_one(i, rng, pos, vel, goal, haz, t):
    """Uniform robot, goal and hazard positions in [-0.9, 0.9]² for copy i (a new episode)."""
    pos[i, 0], pos[i, 1] = _uniform(rng, i) * 1.8 - 0.9, _uniform(rng, i) * 1.8 - 0.9
    goal[i, 0], goal[i, 1] = _uniform(rng, i) * 1.8 - 0.9, _uniform(rng, i) * 1.8 - 0.9
    for k in range(haz.shape[1]):
        haz[i, k, 0], haz[i, k, 1] = _uniform(rng, i) * 1.8 - 0.9, _uniform(rng, i) * 1.8 - 0.9
    vel[i, 0], vel[i, 1] = 0.0, 0.0
    t[i] = 0


@njit(cache=True)
def _pg_lidar_one(i, pos, points, m, bins, lidar_range, out):
    """Proximity 1 − d/range (clipped to [0, 1]) of the nearest of ``m`` objects in each of ``bins`` sectors."""
    for b in range(bins):
        out[b] = 0.0
    for j in range(m):
        rx, ry = points[j, 0] - pos[i, 0], points[j, 1] - pos[i, 1]
        reading = min(max(1.0 - np.sqrt(rx * rx + ry * ry) / lidar_range, 0.0), 1.0)
        if reading > 0.0:                   # out of range reads 0 in every sector: no angle needed
            sector = int((np.arctan2(ry, rx) + np.pi) / (2 * np.pi) * bins) % bins
            out[sector] = max(out[sector], reading)


@njit(cache=True)
def _pg_observe_one(i, rng, pos, vel, goal, haz, bins, lidar_range, noise, obs, priv, scratch):
    """Noisy hazard lidar (N(0, 1) by Marsaglia's polar method: one accepted pair of uniforms gives the noise
    of two bins), goal lidar, velocity; and the privileged vector (robot, goal, hazard offsets nearest first)."""
    _pg_lidar_one(i, pos, haz[i], haz.shape[1], bins, lidar_range, scratch)
    spare = 0.0
    for b in range(bins):
        if b % 2 == 0:
            while True:
                x, y = 2.0 * _uniform(rng, i) - 1.0, 2.0 * _uniform(rng, i) - 1.0
                r2 = x * x + y * y
                if 0.0 < r2 < 1.0:
                    break
            scale = np.sqrt(-2.0 * np.log(r2) / r2)
            gauss, spare = x * scale, y * scale
        else:
            gauss = spare
        obs[i, b] = min(max(scratch[b] + noise * gauss, 0.0), 1.0)
    _pg_lidar_one(i, pos, goal[i:i + 1], 1, bins, lidar_range, scratch)
    for b in range(bins):
        obs[i, bins + b] = scratch[b]
    obs[i, 2 * bins], obs[i, 2 * bins + 1] = vel[i, 0], vel[i, 1]
    priv[i, 0], priv[i, 1], priv[i, 2], priv[i, 3] = pos[i, 0], pos[i, 1], goal[i, 0], goal[i, 1]
    # The hazards as a set, as HazardNav's: offsets from the robot, nearest first (Euclidean distance, then the
    # offset), so "a hazard within the radius" is a rule on the first offset rather than one per slot.
    for k in range(haz.shape[1]):
        _insert_nearest(priv, i, k, haz[i, k, 0] - pos[i, 0], haz[i, k, 1] - pos[i, 1], True)


@njit(cache=True)
def _pg_reset_batch(rng, pos, vel, goal, haz, t, done, bins, lidar_range, noise, obs, priv):
    scratch = np.empty(bins)
    for i in range(pos.shape[0]):
        _pg_place_one(i, rng, pos, vel, goal, haz, t)
        done[i] = False
        _pg_observe_one(i, rng, pos, vel, goal, haz, bins, lidar_range, noise, obs, priv, scratch)


@njit(cache=True)
def _pg_step_batch(actions, horizon, moving, radius, goal_radius, bins, lidar_range, noise, rng, pos, vel, goal,
                   haz, t, done, obs, priv, values, flags):
    """Velocity control (dt 0.1); reward 10 × progress to the goal (+1 on reaching it, which respawns), cost
    1 inside a hazard's radius; moving hazards jitter by U(−0.02, 0.02). A finished copy resets instead."""
    scratch = np.empty(bins)
    for i in range(actions.shape[0]):
        restart = done[i]
        old = np.sqrt((goal[i, 0] - pos[i, 0]) ** 2 + (goal[i, 1] - pos[i, 1]) ** 2)
        for d in range(2):
            vel[i, d] = 0.0 if restart else min(max(actions[i, d], -1.0), 1.0)
            pos[i, d] = min(max(pos[i, d] + 0.1 * vel[i, d], -1.0), 1.0)
        new = np.sqrt((goal[i, 0] - pos[i, 0]) ** 2 + (goal[i, 1] - pos[i, 1]) ** 2)
        hit = 0.0
        for k in range(haz.shape[1]):
            if np.sqrt((haz[i, k, 0] - pos[i, 0]) ** 2 + (haz[i, k, 1] - pos[i, 1]) ** 2) < radius:
                hit = 1.0
        reached = new < goal_radius
        if reached and not restart:
            goal[i, 0], goal[i, 1] = _uniform(rng, i) * 1.8 - 0.9, _uniform(rng, i) * 1.8 - 0.9
        if moving and not restart:
            for k in range(haz.shape[1]):
                for d in range(2):
                    haz[i, k, d] = min(max(haz[i, k, d] + _uniform(rng, i) * 0.04 - 0.02, -0.95), 0.95)
        t[i] += 1
        if restart:
            _pg_place_one(i, rng, pos, vel, goal, haz, t)
        done[i] = not restart and t[i] >= horizon
        values[0, i] = 0.0 if restart else 10.0 * (old - new) + reached
        values[1, i] = 0.0 if restart else hit
        flags[0, i], flags[1, i] = restart, done[i]
        _pg_observe_one(i, rng, pos, vel, goal, haz, bins, lidar_range, noise, obs, priv, scratch)


class PointGoalCore(BatchCore):
    """B point robots in [-1, 1]² (velocity control, dt 0.1) among circular hazards, stepped by one numba kernel.

    Observation: a hazard lidar and a goal lidar (``bins`` sectors each, range 0.5, value 1 − d/range of the
    nearest object in the sector, plus N(0, 0.05²) noise on hazard bins) and the robot's velocity."""

    _state_keys = ("rng", "pos", "vel", "goal", "haz", "t", "done")

    def __init__(self, n: int, *, obs: str = "vector", moving: bool = False, n_hazards: int = 4, bins: int = 12,
                 horizon: int = 100, lidar_range: float = 0.5, noise: float = 0.05, radius: float = 0.15,
                 goal_radius: float = 0.1):
        if obs != "vector":
            raise InputError("PointGoal-PO has lidar (vector) observations only; use --obs vector")
        self.n, self.k, self.bins, self.horizon, self.moving = n, n_hazards, bins, horizon, moving
        self.range, self.noise, self.radius, self.goal_radius = lidar_range, noise, radius, goal_radius
        self.obs_shape, self.priv_dim, self.discrete, self.n_actions = (2 * bins + 2,), 4 + 2 * n_hazards, False, 2
        self.rng = np.array([stream_seed(0, i) for i in range(n)], dtype=np.int64)
        self.pos, self.vel, self.goal = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 2))
        self.haz = np.zeros((n, n_hazards, 2))
        self.t, self.done = np.zeros(n, np.int64), np.zeros(n, np.bool_)
        self._obs = np.zeros((n, 2 * bins + 2), np.float32)
        self._priv = np.zeros((n, self.priv_dim), np.float32)

    def _batch(self, reward, cost, is_first, is_last) -> StepBatch:
        return StepBatch(self._obs.copy(), self._priv.copy(), reward, cost, is_first, is_last,
                         np.zeros(self.n, np.bool_))

    def reset(self, seeds: Any = None) -> StepBatch:
        self._seed_streams(seeds)
        _pg_reset_batch(self.rng, self.pos, self.vel, self.goal, self.haz, self.t, self.done, self.bins, self.range,
                        self.noise, self._obs, self._priv)
        z = np.zeros(self.n, np.float32)
        return self._batch(z, z.copy(), np.ones(self.n, np.bool_), np.zeros(self.n, np.bool_))

    def step(self, actions: Any) -> StepBatch:
        actions = np.asarray(actions)
        if actions.dtype not in (np.float32, np.float64):     # float32 (a policy's) and float64 go in as they are
            actions = actions.astype(np.float64)
        actions = actions.reshape(self.n, 2)
        values, flags = self._outputs()
        _pg_step_batch(actions, self.horizon, self.moving, self.radius, self.goal_radius, self.bins, self.range,
                       self.noise, self.rng, self.pos, self.vel, self.goal, self.haz, self.t, self.done, self._obs,
                       self._priv, values, flags)
        return self._stepped(values, flags)


# ---------------------------------------------------------------------------------- gymnasium API
CORES = {"hazardnav": HazardNavCore, "pointgoal": PointGoalCore}


class CoreEnv(gym.Env):
    """One copy of a batched core as a gymnasium ``Env``: cost and privileged vector in ``info``."""

    metadata = {"render_modes": []}

    def __init__(self, task: str = "hazardnav", obs: str = "vector", moving: bool = False,
                 goal_compass: bool = True):
        self.core = make_core(task, 1, obs=obs, moving=moving, goal_compass=goal_compass)
        shape = self.core.obs_shape
        self.observation_space = gym.spaces.Box(0.0 if task == "hazardnav" else -1.0, 1.0, shape, np.float32)
        self.action_space = (gym.spaces.Discrete(self.core.n_actions) if self.core.discrete
                             else gym.spaces.Box(-1.0, 1.0, (self.core.n_actions,), np.float32))

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is None and not hasattr(self, "_seeded"):
            seed = int(self.np_random.integers(2**31))
        self._seeded = True
        b = self.core.reset(None if seed is None else [seed])
        return b.obs[0], {"cost": 0.0, "privileged": b.privileged[0]}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        b = self.core.step(np.asarray(action)[None])
        self.core.done[:] = False   # gymnasium's caller resets; the core must not autoreset on its own
        info = {"cost": float(b.cost[0]), "privileged": b.privileged[0]}
        return b.obs[0], float(b.reward[0]), False, bool(b.is_last[0]), info


def register_envs() -> None:
    """Register ``paperkit/HazardNav-v0`` (static hazards), ``paperkit/HazardNavMoving-v0`` and ``paperkit/PointGoalPO-v0``."""
    ids = {"paperkit/HazardNav-v0": {"task": "hazardnav"},
           "paperkit/HazardNavMoving-v0": {"task": "hazardnav", "moving": True},
           "paperkit/PointGoalPO-v0": {"task": "pointgoal"}}
    for env_id, kwargs in ids.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="paperkit.methods.pigdreamer.envs:CoreEnv", kwargs=kwargs)


# ------------------------------------------------------------------------------- Safety-Gymnasium
class SafetyGymnasiumAdapter(gym.Wrapper):
    """Reads Safety-Gymnasium's 6-tuple ``step`` (obs, reward, cost, terminated, truncated, info) and returns
    gymnasium's 5-tuple with ``info["cost"]``; ``privileged(env)`` (optional) fills ``info["privileged"]``."""

    def __init__(self, env: Any, privileged: Any = None):
        super().__init__(env)
        self._privileged = privileged

    def _info(self, info: dict, cost: float) -> dict:
        info = dict(info, cost=float(cost))
        if self._privileged is not None:
            info["privileged"] = np.asarray(self._privileged(self.env), np.float32)
        return info

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        return obs, self._info(info, 0.0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        out = self.env.step(action)
        if len(out) != 6:
            raise InputError(f"expected Safety-Gymnasium's 6-tuple from step(), got {len(out)} values")
        obs, reward, cost, terminated, truncated, info = out
        return obs, float(reward), bool(terminated), bool(truncated), self._info(info, cost)


class GymBatch(BatchCore):
    """B gymnasium envs (any registered id) behind the batched-core interface, stepped one by one."""

    def __init__(self, envs: list[Any], *, need_privileged: bool):
        self.envs, self.n, self.need_privileged = envs, len(envs), need_privileged
        space = envs[0].action_space
        self.discrete = isinstance(space, gym.spaces.Discrete)
        self.n_actions = int(space.n) if self.discrete else int(np.prod(space.shape))
        self.obs_shape = tuple(envs[0].observation_space.shape)
        spec = getattr(envs[0], "spec", None)
        self.horizon = int(spec.max_episode_steps or 0) if spec is not None else 0     # 0: episode length unknown
        self._done = np.zeros(self.n, np.bool_)
        _, info = envs[0].reset(seed=0)
        self.priv_dim = int(np.asarray(info.get("privileged", np.zeros(0))).size)

    def _read(self, info: dict) -> tuple[float, np.ndarray]:
        if "cost" not in info:
            raise InputError("the environment's info has no 'cost' key (expected info['cost'], the step's cost)")
        if self.need_privileged and "privileged" not in info:
            raise InputError("the environment's info has no 'privileged' key, which this variant needs "
                             "(the simulator's state vector)")
        priv = np.asarray(info.get("privileged", np.zeros(self.priv_dim)), np.float32).reshape(-1)
        return float(info["cost"]), priv

    def reset(self, seeds: Any = None) -> StepBatch:
        seeds = [None] * self.n if seeds is None else np.broadcast_to(np.asarray(seeds), (self.n,)).tolist()
        rows = [e.reset(seed=s) for e, s in zip(self.envs, seeds, strict=True)]
        privs = [self._read(dict(info, cost=0.0))[1] for _, info in rows]
        self._done[:] = False
        z = np.zeros(self.n, np.float32)
        return StepBatch(np.stack([o for o, _ in rows]).astype(np.float32), np.stack(privs), z, z.copy(),
                         np.ones(self.n, np.bool_), np.zeros(self.n, np.bool_), np.zeros(self.n, np.bool_))

    def step(self, actions: Any) -> StepBatch:
        obs, priv, reward, cost = [], [], np.zeros(self.n, np.float32), np.zeros(self.n, np.float32)
        first, last, term = np.zeros(self.n, np.bool_), np.zeros(self.n, np.bool_), np.zeros(self.n, np.bool_)
        for i, env in enumerate(self.envs):
            if self._done[i]:
                o, info = env.reset()
                info = dict(info, cost=0.0)
                first[i] = True
            else:
                o, r, te, tr, info = env.step(actions[i])
                reward[i], last[i], term[i] = r, te or tr, te
            cost[i], p = self._read(info)
            obs.append(o)
            priv.append(p)
        self._done = last.copy()
        return StepBatch(np.stack(obs).astype(np.float32), np.stack(priv), reward, cost, first, last, term)


def make_core(env: str, n: int, *, obs: str = "vector", moving: bool = False, need_privileged: bool = True,
              goal_compass: bool = True) -> BatchCore:
    """A batched core for ``hazardnav``/``pointgoal``, or B copies of a registered gymnasium id; ``goal_compass``
    is HazardNav's (the others sense the goal their own way)."""
    if env == "hazardnav":
        return HazardNavCore(n, obs=obs, moving=moving, goal_compass=goal_compass)
    if env in CORES:
        return CORES[env](n, obs=obs, moving=moving)
    register_envs()
    return GymBatch([gym.make(env) for _ in range(n)], need_privileged=need_privileged)
