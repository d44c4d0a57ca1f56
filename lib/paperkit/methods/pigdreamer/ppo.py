"""Model-free baseline: PPO-Lagrangian (Ray et al. 2019, as in OmniSafe) sharing SafeDreamer's augmented
Lagrangian module. A memoryless policy on the current observation (no privileged input); reward and cost
value heads with GAE(γ, 0.95); the clipped surrogate on (A_r − w·A_c)/(1 + w), w the Lagrangian's slope; the
Lagrangian is fed the mean episode cost of each rollout.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from paperkit.core.errors import InputError
from paperkit.methods.pigdreamer.agent import Actor
from paperkit.methods.pigdreamer.envs import StepBatch
from paperkit.methods.pigdreamer.lagrangian import AugmentedLagrangian
from paperkit.methods.pigdreamer.nets import mlp, symlog
from paperkit.methods.pigdreamer.train import config_dict, config_from_dict, evaluate, run_core


class PPOPolicy(nn.Module):
    """The deployed PPO policy: the same ``act`` interface as the Dreamer one, observations only."""

    def __init__(self, obs_shape: tuple[int, ...], n_actions: int, discrete: bool, hidden: int = 128):
        super().__init__()
        self.obs_shape, self.n_actions, self.discrete = tuple(obs_shape), n_actions, discrete
        obs_dim = int(np.prod(obs_shape))
        self.actor = Actor(obs_dim, n_actions, discrete, hidden)
        self.values = mlp(obs_dim, 2, hidden)                  # reward and cost values

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        return symlog(obs.flatten(1))

    def initial(self, n: int) -> tuple:
        return ()

    @torch.no_grad()
    def act(self, obs: torch.Tensor, is_first: torch.Tensor, state: tuple, gen: torch.Generator,
            greedy: bool = True, **extra: object) -> tuple[torch.Tensor, tuple]:
        if extra:
            raise InputError(f"the deployed policy takes observations only; it refuses {', '.join(sorted(extra))}")
        if tuple(obs.shape[1:]) != self.obs_shape:
            raise InputError(f"observation shape {tuple(obs.shape[1:])} is not the policy's {self.obs_shape}")
        return self.actor.sample(self.features(obs), gen, greedy=greedy), state


def gae(reward: torch.Tensor, value: torch.Tensor, last: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """Generalised advantages over (T, N) rollouts; ``last`` marks the final step of an episode."""
    adv, running = torch.zeros_like(reward), torch.zeros_like(reward[0])
    for t in reversed(range(reward.shape[0])):
        keep = 1.0 - last[t]
        delta = reward[t] + gamma * value[t + 1] * keep - value[t]
        running = delta + gamma * lam * keep * running
        adv[t] = running
    return adv


class PPOLagTrainer:
    """Same interface as ``train.Trainer``: ``run_until``, ``state``/``load_state``, rows, evals, ``model_blob``."""

    rollout, epochs, minibatch, clip, lam_gae = 128, 4, 256, 0.2, 0.95

    def __init__(self, cfg: Any, seed: int):
        self.cfg, self.seed = cfg, seed
        self.core = run_core(cfg, cfg.envs, False)
        self.eval_core = run_core(cfg, cfg.eval_episodes, False)
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)
        c = self.core
        self.policy = PPOPolicy(c.obs_shape, c.n_actions, c.discrete)
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4, eps=1e-5)
        a = cfg.agent
        self.lagrangian = AugmentedLagrangian(a.cost_limit, a.lagrange_init, a.penalty_init, a.penalty_growth)
        self.last: StepBatch = c.reset(seed * 1_000_003 + np.arange(cfg.envs))
        self.step, self.updates = 0, 0
        self.ep_return, self.ep_cost = np.zeros(cfg.envs), np.zeros(cfg.envs)
        self.rows: list[dict] = []
        self.evals: list[dict] = []
        self.timing = {"env_s": 0.0, "update_s": 0.0, "eval_s": 0.0}

    def _rollout(self) -> tuple[dict, list[tuple[float, float]]]:
        c, n = self.core, self.cfg.envs
        buf: dict[str, list] = {k: [] for k in ("obs", "action", "reward", "cost", "last", "valid")}
        done = []
        for _ in range(self.rollout):
            obs = torch.as_tensor(self.last.obs)
            action, _ = self.policy.act(obs, torch.as_tensor(self.last.is_first), (), self.gen, greedy=False)
            b = c.step(action.argmax(-1).numpy() if c.discrete else action.numpy())
            self.ep_return += b.reward
            self.ep_cost += b.cost
            done += [(float(self.ep_return[i]), float(self.ep_cost[i])) for i in np.flatnonzero(b.is_last)]
            self.ep_return[b.is_last] = 0.0
            self.ep_cost[b.is_last] = 0.0
            # a reset step (is_first) is not a decision: its action is ignored, so it carries no gradient
            for k, v in (("obs", obs), ("action", action), ("reward", b.reward), ("cost", b.cost),
                         ("last", b.is_last.astype(np.float32)), ("valid", (~self.last.is_last).astype(np.float32))):
                buf[k].append(torch.as_tensor(v))
            self.last = b
            self.step += n
        out = {k: torch.stack(v) for k, v in buf.items()}
        out["next_obs"] = torch.as_tensor(self.last.obs)
        return out, done

    def _update(self, buf: dict, episodes: list[tuple[float, float]]) -> None:
        p, cfg = self.policy, self.cfg
        with torch.no_grad():
            feats = p.features(torch.cat([buf["obs"].flatten(0, 1), buf["next_obs"]]))
            values = p.values(feats).reshape(-1, self.cfg.envs, 2)
            adv_r = gae(buf["reward"], values[..., 0], buf["last"], cfg.agent.gamma, self.lam_gae)
            adv_c = gae(buf["cost"], values[..., 1], buf["last"], cfg.agent.gamma, self.lam_gae)
            ret = torch.stack([adv_r + values[:-1, :, 0], adv_c + values[:-1, :, 1]], -1)
            old_logp, _ = p.actor.log_prob(p.features(buf["obs"].flatten(0, 1)), buf["action"].flatten(0, 1))
        cost_estimate = float(np.mean([e[1] for e in episodes])) if episodes else float(self.lagrangian.cost_limit)
        lag = self.lagrangian.update(cost_estimate)
        w = lag["penalty_weight"]
        adv = (adv_r - w * adv_c) / (1.0 + w)
        adv = ((adv - adv.mean()) / (adv.std() + 1e-8)).flatten()
        obs, act, ret, valid = buf["obs"].flatten(0, 1), buf["action"].flatten(0, 1), ret.flatten(0, 1), buf["valid"].flatten()
        losses = []
        for _ in range(self.epochs):
            for idx in torch.randperm(obs.shape[0], generator=self.gen).split(self.minibatch):
                f = p.features(obs[idx])
                logp, ent = p.actor.log_prob(f, act[idx])
                ratio = torch.exp(logp - old_logp[idx])
                surr = torch.min(ratio * adv[idx], ratio.clamp(1 - self.clip, 1 + self.clip) * adv[idx])
                v_loss = ((p.values(f) - ret[idx]) ** 2).sum(-1)
                loss = (-(surr + 0.01 * ent) * valid[idx] + 0.5 * v_loss * valid[idx]).sum() / valid[idx].sum().clamp(min=1)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(p.parameters(), 0.5)
                self.opt.step()
                losses.append(loss.item())
        self.updates += 1
        ret, cost = (np.mean(episodes, 0).tolist() if episodes else (None, None))
        self.rows.append({"step": self.step, "update": self.updates, "episode_return": ret, "episode_cost": cost,
                          **lag, "actor_loss": float(np.mean(losses))})

    def run_until(self, end: int, on_steps: Callable[[int], None] | None = None) -> None:
        cfg = self.cfg
        while self.step < end:
            before = self.step
            t0 = time.perf_counter()
            buf, episodes = self._rollout()
            t1 = time.perf_counter()
            self._update(buf, episodes)
            t2 = time.perf_counter()
            self.timing["env_s"] += t1 - t0
            self.timing["update_s"] += t2 - t1
            if self.step // cfg.eval_every > before // cfg.eval_every or self.step >= cfg.steps > before:
                for row in evaluate(self.policy, self.eval_core, cfg.eval_episodes, self.seed,
                                    greedy=cfg.eval_policy == "greedy"):
                    self.evals.append({"step": self.step, **row})
                self.timing["eval_s"] += time.perf_counter() - t2
            if on_steps is not None:
                on_steps(self.step - before)

    def state(self) -> dict:
        b = self.last
        return {"policy": self.policy.state_dict(), "opt": self.opt.state_dict(), "lagrangian": self.lagrangian.state(),
                "core": {k: torch.as_tensor(v) for k, v in self.core.state().items()},
                "last": {k: torch.as_tensor(getattr(b, k)) for k in b.__dataclass_fields__}, "gen": self.gen.get_state(),
                "step": self.step, "updates": self.updates, "ep_return": torch.as_tensor(self.ep_return),
                "ep_cost": torch.as_tensor(self.ep_cost), "rows": self.rows, "evals": self.evals,
                "timing": dict(self.timing)}

    def load_state(self, s: dict) -> None:
        self.policy.load_state_dict(s["policy"])
        self.opt.load_state_dict(s["opt"])
        lag = s["lagrangian"]
        self.lagrangian = AugmentedLagrangian(lag["cost_limit"], lag["lam"], lag["c"], lag["growth"])
        self.core.load_state({k: v.numpy() for k, v in s["core"].items()})
        self.last = StepBatch(**{k: v.numpy().copy() for k, v in s["last"].items()})
        self.gen.set_state(s["gen"])
        self.step, self.updates = int(s["step"]), int(s["updates"])
        self.ep_return, self.ep_cost = s["ep_return"].numpy().copy(), s["ep_cost"].numpy().copy()
        self.rows, self.evals, self.timing = list(s["rows"]), list(s["evals"]), dict(s["timing"])

    def model_blob(self) -> dict:
        c = self.core
        return {"kind": "paperkit.pigdreamer.ppo", "config": config_dict(self.cfg), "seed": self.seed,
                "obs_shape": list(c.obs_shape), "n_actions": c.n_actions, "discrete": c.discrete,
                "weights": self.policy.state_dict()}


def load_ppo_policy(blob: dict) -> tuple[PPOPolicy, Any]:
    policy = PPOPolicy(tuple(blob["obs_shape"]), blob["n_actions"], blob["discrete"])
    policy.load_state_dict(blob["weights"])
    return policy.eval(), config_from_dict(blob["config"])
