"""PIGDreamer's learner (spec, Method 1–5) and its ablations, on one DreamerV3 code path.

Variants (``VARIANTS``):
* ``pig``: naive RSSM on observations + privileged RSSM on the simulator vector; an oracle posterior
  q(s* | h⁻, e⁻, e⁺) inside the naive model, trained to reconstruct the observation and the privileged vector,
  and L_align = L_rep(s*, s⁻) pulling the naive posterior towards it; reward, cost and continue heads and the
  critics on (s⁻, s⁺); Twisted Imagination (one action stream, π(·|s⁻), steps both priors).
* ``no-rep``: ``pig`` without the oracle posterior and L_align.
* ``unprivileged``: SafeDreamer, the naive model only (heads and critics on s⁻).
* ``informed``: Informed-Dreamer, the naive model decodes the privileged vector from s⁻ (auxiliary target).
* ``nli``: Scaffolder's nested latent imagination: the privileged prior steps, its state decodes a target
  observation that the naive posterior encodes into the actor's next latent; critics on (s⁻, s⁺).
Every variant uses SafeDreamer's augmented Lagrangian (``lagrangian.py``) on the imagined cost return.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from paperkit.core.errors import InputError
from paperkit.methods.pigdreamer.lagrangian import AugmentedLagrangian
from paperkit.methods.pigdreamer.nets import (
    RSSM,
    Encoder,
    TwoHot,
    bernoulli_loss,
    free_bits_kl,
    mlp,
    symexp,
    symlog,
)

VARIANTS = ("pig", "no-rep", "unprivileged", "informed", "nli")
# "episode": the imagined per-step cost, averaged over the H imagined steps and the starts, times the episode
# length T (SafeDreamer's planners scale the imagined H-step cost sum by T / H the same way): a per-episode
# cost from the cost head alone, on the limit's scale from the first update. "return": the mean imagined cost
# λ-return (SafeDreamer's Lagrangian actor-critic); it reaches the per-episode scale (rate / (1 − γ) = rate · T
# at γ = 1 − 1/T) only once the cost critic has converged, which a CPU run's ~10³ updates do not reach.
COST_ESTIMATES = ("episode", "return")
PRIVILEGED = {"pig", "no-rep", "nli"}          # variants with a privileged world model and asymmetric critics


@dataclass(frozen=True)
class AgentConfig:
    variant: str = "pig"
    deter: int = 128
    stoch: int = 8
    classes: int = 8
    hidden: int = 128
    horizon: int = 15
    align_free_bits: float = 0.0   # free nats of L_align; with DreamerV3's 1 its gradient vanishes below 1 nat
    imag_starts: int = 256      # replayed states imagination starts from (DreamerV3: all B × L; CPU budget)
    gamma: float = 0.99
    lam: float = 0.95
    entropy: float = 3e-4
    wm_lr: float = 3e-4
    ac_lr: float = 1e-4
    critic_ema: float = 0.02
    cost_limit: float = 2.0
    lagrange_init: float = 1e-6
    penalty_init: float = 5e-9
    penalty_growth: float = 1e-5
    cost_weight: float = 10.0      # SafeDreamer's: the cost head's loss on cost events (cost ≥ 1) weighs ×10
    cost_debias: bool = False       # read the cost head with that weight undone (debiased_cost_logits); SafeDreamer: no
    cost_estimate: str = "episode"  # what the Lagrangian compares with the per-episode limit (COST_ESTIMATES)


class Actor(nn.Module):
    """π(a | s⁻): categorical with 1% unimix, or tanh-Normal for continuous actions."""

    def __init__(self, feat: int, n_actions: int, discrete: bool, hidden: int):
        super().__init__()
        self.discrete, self.n = discrete, n_actions
        self.net = mlp(feat, n_actions if discrete else 2 * n_actions, hidden)

    def _dist(self, feat: torch.Tensor):
        out = self.net(feat)
        if self.discrete:
            probs = out.softmax(-1) * 0.99 + 0.01 / self.n
            return probs
        mean, std = out.chunk(2, -1)
        return mean, nn.functional.softplus(std) + 0.1

    def sample(self, feat: torch.Tensor, gen: torch.Generator, greedy: bool = False) -> torch.Tensor:
        """An action as the model reads it: one-hot, or in (−1, 1)."""
        d = self._dist(feat)
        if self.discrete:
            idx = d.argmax(-1) if greedy else torch.multinomial(d, 1, generator=gen).squeeze(-1)
            return nn.functional.one_hot(idx, self.n).float()
        mean, std = d
        u = mean if greedy else mean + std * torch.randn(mean.shape, generator=gen, device=mean.device)
        return torch.tanh(u)

    def log_prob(self, feat: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """log π(a | s) and the entropy (exact for categorical; the pre-tanh Gaussian's for continuous)."""
        d = self._dist(feat)
        if self.discrete:
            logp = d.log()
            return (logp * action).sum(-1), -(d * logp).sum(-1)
        mean, std = d
        a = action.clamp(-0.999999, 0.999999)
        normal = torch.distributions.Normal(mean, std)
        logp = (normal.log_prob(torch.atanh(a)) - torch.log1p(-a**2 + 1e-6)).sum(-1)
        return logp, normal.entropy().sum(-1)


class Normalizer:
    """DreamerV3's return scale: EMA (0.99) of the 95th − 5th percentile; advantages divide by max(1, S)."""

    def __init__(self) -> None:
        self.scale = None

    def __call__(self, returns: torch.Tensor) -> float:
        spread = float(torch.quantile(returns.detach().flatten(), 0.95) - torch.quantile(returns.detach().flatten(), 0.05))
        self.scale = spread if self.scale is None else 0.99 * self.scale + 0.01 * spread
        return max(1.0, self.scale)


def lambda_return(reward: torch.Tensor, value: torch.Tensor, disc: torch.Tensor, lam: float) -> torch.Tensor:
    """R_t = r_{t+1} + γc_{t+1}((1 − λ)v_{t+1} + λR_{t+1}), R_H = v_H; inputs (H+1, N), row 0 unused for r/disc."""
    out = [value[-1]]
    for t in reversed(range(value.shape[0] - 1)):
        out.append(reward[t + 1] + disc[t + 1] * ((1 - lam) * value[t + 1] + lam * out[-1]))
    return torch.stack(out[::-1][:-1])


def episode_cost_estimate(cost: torch.Tensor, episode_length: int) -> float:
    """Per-episode cost from imagined per-step costs ``cost`` (H + 1, N; row 0, the start state, unused):
    mean over starts of (Σ_{t=1..H} c_t) · T / H."""
    return float(cost[1:].mean()) * episode_length


def cost_loss(twohot: TwoHot, logits: torch.Tensor, cost: torch.Tensor, weight: float) -> torch.Tensor:
    """SafeDreamer's cost-head loss: two-hot NLL, times ``weight`` where a cost event happened (cost ≥ 1), so
    that rare costs are not drowned by the cost-free steps."""
    nll = twohot.loss(logits, cost)
    return torch.where(cost >= 1.0, weight * nll, nll)


EVENT_COST_MAX = 10.0    # per-step costs of HazardNav / PointGoal / Safety-Gymnasium stay far below this


def cost_event_bins(twohot: TwoHot, max_cost: float = EVENT_COST_MAX) -> torch.Tensor:
    """Bool mask of the two-hot bins a cost in [1, ``max_cost``] puts weight on (the neighbours included)."""
    p = twohot.points
    lo = int(torch.searchsorted(p, symlog(torch.ones(1)), right=True)) - 1
    hi = int(torch.searchsorted(p, symlog(torch.full((1,), float(max_cost))), right=True))
    return (p >= p[lo]) & (p <= p[min(hi, p.numel() - 1)])


def debiased_cost_logits(logits: torch.Tensor, event_bins: torch.Tensor, weight: float) -> torch.Tensor:
    """Undo the ×``weight`` on cost events in the cost head's distribution.

    Minimising NLL with weight w on the samples whose target is a cost event fits q'(b) ∝ w·q(b) on the bins
    those targets reach and q(b) elsewhere (a prior shift, as importance-weighted likelihood always gives), so
    subtracting log w from those bins' logits recovers q; exact when every cost is 0 or in [1, max], as in
    HazardNav and Safety-Gymnasium. Without it the decoded cost, hence the Lagrangian's estimate, is inflated
    up to w-fold where events are rare. Only the bins such costs reach are shifted: an unfitted head spreads
    mass over all 255 bins, and shifting every bin above symlog 1 would leave the mass on the negative bins
    unbalanced (decoding to −10⁵ at initialisation)."""
    if weight == 1.0:
        return logits
    return logits - event_bins.to(logits.dtype) * float(torch.log(torch.tensor(weight)))


def expected_cost(twohot: TwoHot, logits: torch.Tensor, max_cost: float = EVENT_COST_MAX) -> torch.Tensor:
    """E[c] under the head's distribution, counting the bins of 0 ≤ c ≤ ``max_cost`` (others count as 0).

    DreamerV3 decodes symexp(E[symlog c]), which for a cost event of probability p is symexp(0.69 p) ≈ 0.69 p:
    a Lagrangian fed that would allow ~1.45× the cost limit; the mean of symexp over the bins is p for 0/1
    costs. Costs are never negative, and an unfitted head's residual mass on the negative bins would cancel
    real events once the event bins are debiased (an imagined cost of −2 a step early in training), so those
    bins count as 0; the far bins are left out because symexp(20) ≈ 5e8."""
    points = twohot.points
    keep = (points >= 0) & (points <= float(symlog(torch.tensor(max_cost))))
    return (logits.softmax(-1)[..., keep] * symexp(points[keep])).sum(-1)


class Agent(nn.Module):
    def __init__(self, cfg: AgentConfig, obs_shape: tuple[int, ...], priv_dim: int, n_actions: int, discrete: bool,
                 episode_length: int = 100):
        super().__init__()
        if cfg.cost_estimate not in COST_ESTIMATES:
            raise InputError(f"cost_estimate must be one of {', '.join(COST_ESTIMATES)}, got {cfg.cost_estimate!r}")
        self.cfg, self.obs_shape, self.priv_dim, self.discrete, self.n_actions = cfg, obs_shape, priv_dim, discrete, n_actions
        self.episode_length = int(episode_length)
        self.privileged = cfg.variant in PRIVILEGED
        h, obs_dim = cfg.hidden, int(torch.tensor(obs_shape).prod())
        self.encoder = Encoder(obs_shape, h)
        self.rssm = RSSM(h, n_actions, cfg.deter, cfg.stoch, cfg.classes, h)
        feat = self.rssm.feat_dim
        self.decoder = mlp(feat, obs_dim, h)
        if self.privileged:
            self.priv_encoder = Encoder((priv_dim,), h)
            self.priv_rssm = RSSM(h, n_actions, cfg.deter, cfg.stoch, cfg.classes, h)
            self.priv_decoder = mlp(feat, priv_dim, h)
        if cfg.variant == "pig":
            self.oracle = mlp(cfg.deter + 2 * h, cfg.stoch * cfg.classes, h, layers=1)
        if cfg.variant in ("pig", "informed"):
            self.priv_head = mlp(feat, priv_dim, h)          # decodes i_t from s* (pig) or s⁻ (informed)
        if cfg.variant == "nli":
            self.target_obs = mlp(feat, obs_dim, h)          # ô_t from s⁺_t, encoded by the naive posterior
        head_in = 2 * feat if self.privileged else feat
        self.twohot = TwoHot()
        self.reward_head = mlp(head_in, 255, h, zero_out=True)
        self.cost_head = mlp(head_in, 255, h, zero_out=True)
        self.register_buffer("cost_event_bins", cost_event_bins(self.twohot), persistent=False)
        self.cont_head = mlp(head_in, 1, h)
        self.actor = Actor(feat, n_actions, discrete, h)
        self.critics = nn.ModuleDict({k: mlp(head_in, 255, h, zero_out=True) for k in ("reward", "cost")})
        self.targets = nn.ModuleDict({k: mlp(head_in, 255, h, zero_out=True) for k in ("reward", "cost")})
        self.targets.load_state_dict(self.critics.state_dict())
        self.targets.requires_grad_(False)
        wm = [p for n, p in self.named_parameters() if not n.startswith(("actor", "critics", "targets"))]
        self.wm_opt = torch.optim.Adam(wm, lr=cfg.wm_lr, eps=1e-8)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.ac_lr, eps=1e-5)
        self.critic_opt = torch.optim.Adam(self.critics.parameters(), lr=cfg.ac_lr, eps=1e-5)
        self.lagrangian = AugmentedLagrangian(cfg.cost_limit, cfg.lagrange_init, cfg.penalty_init, cfg.penalty_growth)
        self.norms = {"reward": Normalizer(), "cost": Normalizer()}

    # ------------------------------------------------------------------------------ world model
    def world_model_loss(self, batch: dict, gen: torch.Generator) -> tuple[torch.Tensor, dict, tuple, torch.Tensor]:
        """L = L_dyn + L_align + L_dec + L_pred over a (B, L) batch; returns the loss, its parts, the
        posterior states (h⁻, z⁻, h⁺, z⁺) that start imagination and the heads' input features."""
        obs, first = batch["obs"], batch["is_first"]
        emb = self.encoder(obs)
        hs, zs, post, prior = self.rssm.observe(emb, batch["action"], first, gen)
        dyn, kl_dyn, kl_rep = free_bits_kl(post, prior)
        feat = torch.cat([hs, zs], -1)
        target = symlog(obs.flatten(2))
        dec = ((self.decoder(feat) - target) ** 2).sum(-1).mean()
        parts = {"kl_dyn": kl_dyn, "kl_rep": kl_rep}
        starts = (hs, zs, None, None)
        head_feat = feat
        if self.privileged:
            priv_target = symlog(batch["privileged"])
            emb_p = self.priv_encoder(batch["privileged"])
            hp, zp, post_p, prior_p = self.priv_rssm.observe(emb_p, batch["action"], first, gen)
            dyn_p, parts["priv_kl_dyn"], _ = free_bits_kl(post_p, prior_p)
            feat_p = torch.cat([hp, zp], -1)
            dyn = dyn + dyn_p
            dec = dec + ((self.priv_decoder(feat_p) - priv_target) ** 2).sum(-1).mean()
            head_feat, starts = torch.cat([feat, feat_p], -1), (hs, zs, hp, zp)
        align = torch.zeros(())
        if self.cfg.variant == "pig":
            oracle = self.rssm.logprobs(self.oracle(torch.cat([hs, emb, emb_p], -1)))
            feat_o = torch.cat([hs, self.rssm.sample(oracle, gen)], -1)
            dec = dec + ((self.decoder(feat_o) - target) ** 2).sum(-1).mean()
            dec = dec + ((self.priv_head(feat_o) - priv_target) ** 2).sum(-1).mean()
            align, parts["align"], _ = free_bits_kl(oracle, post, free=self.cfg.align_free_bits)
        if self.cfg.variant == "informed":
            dec = dec + ((self.priv_head(feat) - symlog(batch["privileged"])) ** 2).sum(-1).mean()
        if self.cfg.variant == "nli":
            dec = dec + ((self.target_obs(feat_p) - target) ** 2).sum(-1).mean()
        rew = self.twohot.loss(self.reward_head(head_feat), batch["reward"]).mean()
        cost = cost_loss(self.twohot, self.cost_head(head_feat), batch["cost"], self.cfg.cost_weight).mean()
        cont = bernoulli_loss(self.cont_head(head_feat).squeeze(-1), 1.0 - batch["is_terminal"]).mean()
        loss = dyn + align + dec + rew + cost + cont
        parts.update(wm_loss=loss.detach(), dyn=dyn.detach(), align_loss=align.detach(), dec=dec.detach(),
                     reward=rew.detach(), cost=cost.detach(), cont=cont.detach())
        starts = tuple(None if s is None else s.detach().flatten(0, 1) for s in starts)
        return loss, parts, starts, head_feat.detach()

    # ------------------------------------------------------------------------------ imagination
    def imagine(self, starts: tuple, gen: torch.Generator) -> dict:
        """H steps from replayed states: TI (one action stream steps both priors) or NLI. The rollout runs
        without gradients (REINFORCE needs only the actor's log-probs, computed after it in one call)."""
        h, z, hp, zp = starts
        feats, heads, actions = [torch.cat([h, z], -1)], [], []
        with torch.no_grad():
            for _ in range(self.cfg.horizon):
                action = self.actor.sample(feats[-1], gen)
                actions.append(action)
                if self.privileged:
                    heads.append(torch.cat([feats[-1], hp, zp], -1))
                    hp, zp, _ = self.priv_rssm.img_step(hp, zp, action, gen)
                if self.cfg.variant == "nli":
                    h = self.rssm.recur(h, z, action)
                    target = symexp(self.target_obs(torch.cat([hp, zp], -1))).reshape(-1, *self.obs_shape)
                    post = self.rssm.logprobs(self.rssm.post_net(torch.cat([h, self.encoder(target)], -1)))
                    z = self.rssm.sample(post, gen)
                else:
                    h, z, _ = self.rssm.img_step(h, z, action, gen)
                feats.append(torch.cat([h, z], -1))
            if self.privileged:
                heads.append(torch.cat([feats[-1], hp, zp], -1))
            else:
                heads = feats
        logp, entropy = self.actor.log_prob(torch.stack(feats[:-1]), torch.stack(actions))
        return {"head": torch.stack(heads), "logp": logp, "entropy": entropy}

    def behaviour_loss(self, starts: tuple, gen: torch.Generator) -> dict:
        """Actor (REINFORCE on normalised advantages, reward minus the Lagrangian-weighted cost, plus
        entropy) and the two critics (two-hot on λ-returns, regularised towards their EMA targets)."""
        cfg = self.cfg
        n = starts[0].shape[0]
        if cfg.imag_starts < n:
            pick = torch.randperm(n, generator=gen)[: cfg.imag_starts]
            starts = tuple(None if s is None else s[pick] for s in starts)
        traj = self.imagine(starts, gen)
        head = traj["head"]
        with torch.no_grad():
            reward = self.twohot.decode(self.reward_head(head))
            cost = self.predicted_cost(head)
            disc = cfg.gamma * torch.sigmoid(self.cont_head(head).squeeze(-1))
            weight = torch.cumprod(torch.cat([torch.ones_like(disc[:1]), disc[:-1]]), 0)
        returns, advantages, critic_loss = {}, {}, torch.zeros(())
        for key, signal in (("reward", reward), ("cost", cost)):
            with torch.no_grad():
                value = self.twohot.decode(self.critics[key](head))
                ret = lambda_return(signal, value, disc, cfg.lam)
                slow = self.twohot.decode(self.targets[key](head[:-1]))
                advantages[key] = (ret - value[:-1]) / self.norms[key](ret)
            logits = self.critics[key](head[:-1])
            critic_loss = critic_loss + ((self.twohot.loss(logits, ret) + self.twohot.loss(logits, slow)) * weight[:-1]).mean()
            returns[key] = ret
        if cfg.cost_estimate == "episode":
            estimate = episode_cost_estimate(cost, self.episode_length)
        else:                                   # SafeDreamer: g = mean over the imagined λ-returns − b
            estimate = float(returns["cost"].mean())
        lag = self.lagrangian.update(estimate)
        score = advantages["reward"] - lag["penalty_weight"] * advantages["cost"]
        actor_loss = -((traj["logp"] * score + cfg.entropy * traj["entropy"]) * weight[:-1]).mean()
        return {"actor_loss": actor_loss, "critic_loss": critic_loss, "lagrangian": lag,
                "imag_reward": float(returns["reward"][0].mean()), "entropy": float(traj["entropy"].detach().mean())}

    def predicted_cost(self, head_feat: torch.Tensor) -> torch.Tensor:
        """Per-step cost the cost head predicts: with ``cost_debias``, the expected cost (training weight undone,
        :func:`expected_cost`); without, DreamerV3's two-hot decode of the weighted head, as SafeDreamer."""
        logits = self.cost_head(head_feat)
        if not self.cfg.cost_debias:
            return self.twohot.decode(logits)
        return expected_cost(self.twohot, debiased_cost_logits(logits, self.cost_event_bins, self.cfg.cost_weight))

    def update(self, batch: dict, gen: torch.Generator) -> dict:
        """One gradient step of the world model, then of actor and critics; EMA targets; a log row."""
        loss, parts, starts, _ = self.world_model_loss(batch, gen)
        self._step(self.wm_opt, loss, 1000.0)
        out = self.behaviour_loss(starts, gen)
        self._step(self.actor_opt, out["actor_loss"], 100.0)
        self._step(self.critic_opt, out["critic_loss"], 100.0)
        with torch.no_grad():
            for p, q in zip(self.critics.parameters(), self.targets.parameters(), strict=True):
                q.lerp_(p, self.cfg.critic_ema)
        row = {k: float(v) for k, v in parts.items()}
        row.update(out["lagrangian"], actor_loss=out["actor_loss"].item(), critic_loss=out["critic_loss"].item(),
                   imag_reward=out["imag_reward"], entropy=out["entropy"])
        return row

    @staticmethod
    def _step(opt: torch.optim.Optimizer, loss: torch.Tensor, clip: float) -> None:
        opt.zero_grad(set_to_none=True)
        loss.backward()
        params = [p for g in opt.param_groups for p in g["params"]]
        nn.utils.clip_grad_norm_(params, clip)
        opt.step()

    def extra_state(self) -> dict:
        return {"lagrangian": self.lagrangian.state(), "norms": {k: n.scale for k, n in self.norms.items()}}

    def load_extra_state(self, state: dict) -> None:
        lag = state["lagrangian"]
        self.lagrangian = AugmentedLagrangian(lag["cost_limit"], lag["lam"], lag["c"], lag["growth"])
        for k, n in self.norms.items():
            n.scale = state["norms"][k]


class DeployedPolicy(nn.Module):
    """What runs after training: the naive encoder, RSSM and actor. Observations only; handing it the
    privileged vector (as a keyword or glued to the observation) raises."""

    def __init__(self, agent: Agent):
        super().__init__()
        self.encoder, self.rssm, self.actor = agent.encoder, agent.rssm, agent.actor
        self.obs_shape, self.n_actions, self.discrete = agent.obs_shape, agent.n_actions, agent.discrete

    def initial(self, n: int) -> tuple:
        h, z = self.rssm.initial(n, next(self.parameters()).device)
        return h, z, torch.zeros(n, self.n_actions, device=h.device)

    @torch.no_grad()
    def act(self, obs: torch.Tensor, is_first: torch.Tensor, state: tuple, gen: torch.Generator,
            greedy: bool = True, **extra: object) -> tuple[torch.Tensor, tuple]:
        if "privileged" in extra or extra:
            raise InputError("the deployed policy takes observations only; it refuses "
                             f"{', '.join(sorted(extra))} (privileged information is for training)")
        if tuple(obs.shape[1:]) != tuple(self.obs_shape):
            raise InputError(f"observation shape {tuple(obs.shape[1:])} is not the policy's {tuple(self.obs_shape)} "
                             "(privileged information must not be appended)")
        h, z, a = state
        h, z, _ = self.rssm.obs_step(h, z, a, self.encoder(obs), is_first, gen)
        action = self.actor.sample(torch.cat([h, z], -1), gen, greedy=greedy)
        return action, (h, z, action)
