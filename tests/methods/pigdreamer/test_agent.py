"""The learner: λ-returns, twisted imagination, the variants' parts, the deployment path, determinism, and
(scaled down) the world model learning (spec check 4) and the end-to-end smoke (check 5; full size is heavy)."""

import numpy as np
import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods.pigdreamer.agent import (
    VARIANTS,
    Agent,
    AgentConfig,
    DeployedPolicy,
    cost_event_bins,
    cost_loss,
    debiased_cost_logits,
    episode_cost_estimate,
    expected_cost,
    lambda_return,
)
from paperkit.methods.pigdreamer.envs import HazardNavCore
from paperkit.methods.pigdreamer.ppo import gae
from paperkit.methods.pigdreamer.train import TrainConfig, Trainer, cost_auroc, random_replay

SMALL = dict(deter=32, hidden=32, stoch=4, classes=4, horizon=5, imag_starts=16)


def _agent(variant, core=None, **kw):
    core = core or HazardNavCore(1)
    return Agent(AgentConfig(variant=variant, **{**SMALL, **kw}), core.obs_shape, core.priv_dim, core.n_actions,
                 core.discrete)


def test_lambda_return_matches_the_expanded_sum():
    """R_0 = Σ_k weights over n-step returns: checked against the definition written as n-step returns,
    R^λ = (1 − λ) Σ_{n=1}^{H−1} λ^{n−1} G^(n) + λ^{H−1} G^(H)."""
    g = torch.Generator().manual_seed(0)
    h, lam = 6, 0.8
    r, v, d = torch.rand(h + 1, 3, generator=g), torch.rand(h + 1, 3, generator=g), 0.9 + 0.1 * torch.rand(h + 1, 3, generator=g)

    def n_step(n):
        out, disc = torch.zeros(3), torch.ones(3)
        for k in range(1, n + 1):
            out = out + disc * r[k]
            disc = disc * d[k]
        return out + disc * v[n]

    want = (1 - lam) * sum(lam ** (n - 1) * n_step(n) for n in range(1, h)) + lam ** (h - 1) * n_step(h)
    torch.testing.assert_close(lambda_return(r, v, d, lam)[0], want)


def test_gae_matches_lambda_return_without_episode_ends():
    g = torch.Generator().manual_seed(1)
    r, v = torch.rand(7, 2, generator=g), torch.rand(8, 2, generator=g)
    adv = gae(r, v, torch.zeros(7, 2), 0.9, 0.95)
    shifted = torch.cat([torch.zeros(1, 2), r])                  # lambda_return reads r[t + 1]
    want = lambda_return(shifted, v, torch.full((8, 2), 0.9), 0.95) - v[:-1]
    torch.testing.assert_close(adv, want)


def test_episode_cost_estimate_is_the_horizon_scaled_imagined_cost_sum():
    """Hand case: two starts, H = 3, costs 0/1 per imagined step (row 0 ignored). Start 0 sums to 1, start 1 to 2:
    mean 1.5 per 3 steps, i.e. 50 per 100-step episode. A constant rate p gives p · T, which is also the
    converged discounted cost sum p / (1 − γ) at γ = 1 − 1/T (the λ-return's fixed point with v = p / (1 − γ))."""
    cost = torch.tensor([[9.0, 9.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert episode_cost_estimate(cost, 100) == pytest.approx(50.0)
    assert episode_cost_estimate(cost, 3) == pytest.approx(1.5)
    p, t, h = 0.03, 100, 15
    assert episode_cost_estimate(torch.full((h + 1, 4), p), t) == pytest.approx(p * t)
    gamma = 1 - 1 / t
    v = torch.full((h + 1, 4), p / (1 - gamma))
    ret = lambda_return(torch.full((h + 1, 4), p), v, torch.full((h + 1, 4), gamma), 0.95)
    torch.testing.assert_close(ret, torch.full((h, 4), p * t))


@pytest.mark.parametrize("mode, want", [("episode", 0.5 * 100), ("return", None)])
def test_the_lagrangian_sees_the_configured_cost_estimate(mode, want):
    """With the cost head fixed to predict 0.5 per step (and the cost critic at 0), the Lagrangian is fed
    0.5 · T = 50 per episode ("episode"), or the mean imagined λ-return, Σ_{k<H−t} (0.95 γ-ish) weights of 0.5
    ("return", checked against lambda_return on the same discounts)."""
    agent = _agent("pig", cost_estimate=mode, cost_debias=False)      # the head decoded as DreamerV3 does
    target = agent.twohot.encode(torch.tensor(0.5))

    class Fixed(torch.nn.Module):
        def forward(self, x):
            return torch.log(target + 1e-12).expand(*x.shape[:-1], -1)

    agent.cost_head = Fixed()
    n, gen = 8, torch.Generator().manual_seed(0)
    starts = (torch.zeros(n, 32), torch.zeros(n, 16), torch.zeros(n, 32), torch.zeros(n, 16))
    out = agent.behaviour_loss(starts, gen)
    est = out["lagrangian"]["cost_estimate"]
    if want is not None:
        assert est == pytest.approx(want, rel=1e-4)
    else:
        head = agent.imagine(starts, torch.Generator().manual_seed(0))["head"]      # same generator draws
        disc = 0.99 * torch.sigmoid(agent.cont_head(head).squeeze(-1)).detach()
        ret = lambda_return(torch.full_like(disc, 0.5), torch.zeros_like(disc), disc, 0.95)
        assert est == pytest.approx(float(ret.mean()), rel=1e-4) and 0.5 < est < 0.5 * 15
    assert out["lagrangian"]["gap"] == pytest.approx(est - 2.0)


def test_the_episode_length_comes_from_the_env_or_the_discount():
    assert Trainer(_tiny_cfg(), 0).agent.episode_length == 100                       # HazardNav: 100 steps
    cfg = TrainConfig(**{**_tiny_cfg().__dict__, "env": "paperkit/HazardNav-v0"})
    assert Trainer(cfg, 0).agent.episode_length == round(1 / (1 - 0.99))              # unknown: 1 / (1 − γ)


def test_cost_loss_weighs_cost_events():
    """SafeDreamer's cost_weight: the two-hot NLL of a step with cost ≥ 1 is multiplied by the weight, others not."""
    from paperkit.methods.pigdreamer.nets import TwoHot

    th = TwoHot()
    logits = torch.randn(4, 255, generator=torch.Generator().manual_seed(0))
    cost = torch.tensor([0.0, 1.0, 0.5, 2.0])
    torch.testing.assert_close(cost_loss(th, logits, cost, 10.0), th.loss(logits, cost) * torch.tensor([1.0, 10.0, 1.0, 10.0]))


def test_debiased_cost_head_recovers_the_unweighted_fit():
    """A free cost head fitted with SafeDreamer's ×10 on 1 cost event in 20 steps decodes ~7.7× the per-step
    cost that the unweighted fit would (symexp of the mean symlog target); undoing the weight gives it back;
    an unfitted head (uniform over the bins) stays near 0. The agent reads the debiased head as the
    expected cost, which for 0/1 costs is the event rate (1/20), not symexp(0.69 · rate)."""
    from paperkit.methods.pigdreamer.nets import TwoHot, symexp, symlog

    th = TwoHot()
    cost = torch.cat([torch.ones(1), torch.zeros(19)])
    logits = torch.zeros(255, requires_grad=True)
    opt = torch.optim.Adam([logits], lr=0.5)
    for _ in range(400):
        loss = cost_loss(th, logits.expand(20, -1), cost, 10.0).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    want = float(symexp((th.encode(cost).mean(0) * th.points).sum()))          # 0.035
    with torch.no_grad():
        raw = float(th.decode(logits))
        fixed = float(th.decode(debiased_cost_logits(logits, cost_event_bins(th), 10.0)))
        unfitted = float(th.decode(debiased_cost_logits(torch.zeros(255), cost_event_bins(th), 10.0)))
    assert raw > 5 * want and fixed == pytest.approx(want, rel=0.03) and abs(unfitted) < 0.1
    bins = cost_event_bins(th)          # every bin a cost in [1, 10] reaches, none a cost ≤ 0.5 or ≥ 12 does
    assert not bins[(th.points <= symlog(torch.tensor(0.5))) | (th.points >= symlog(torch.tensor(12.0)))].any()
    assert th.encode(torch.tensor([1.0, 3.0, 10.0]))[:, ~bins].sum() == 0
    agent, safedreamer = _agent("pig", cost_debias=True), _agent("pig")      # the default reads the head as it is
    feat = torch.randn(3, 2 * 32 + 2 * 16)
    with torch.no_grad():
        for a in (agent, safedreamer):            # the heads' last layers start at zero: output = bias
            a.cost_head[-1].bias.copy_(logits)
        rate = float(expected_cost(th, debiased_cost_logits(logits, bins, 10.0)))
        assert rate == pytest.approx(1 / 20, rel=0.02)
        assert 0 < float(expected_cost(th, debiased_cost_logits(torch.zeros(255), bins, 10.0))) < 0.05
        torch.testing.assert_close(agent.predicted_cost(feat), torch.full((3,), rate))
        torch.testing.assert_close(safedreamer.predicted_cost(feat), torch.full((3,), raw))


def test_twisted_imagination_steps_both_priors_with_one_action_stream(monkeypatch):
    agent = _agent("pig")
    seen = {"naive": [], "privileged": []}
    for name, rssm in (("naive", agent.rssm), ("privileged", agent.priv_rssm)):
        real = rssm.img_step

        def spy(h, z, action, gen, _real=real, _name=name):
            seen[_name].append(action.clone())
            return _real(h, z, action, gen)

        monkeypatch.setattr(rssm, "img_step", spy)
    n, gen = 16, torch.Generator().manual_seed(0)
    starts = (torch.zeros(n, 32), torch.zeros(n, 16), torch.zeros(n, 32), torch.zeros(n, 16))
    traj = agent.imagine(starts, gen)
    assert len(seen["naive"]) == len(seen["privileged"]) == 5
    for a, b in zip(seen["naive"], seen["privileged"], strict=True):
        torch.testing.assert_close(a, b)
    assert traj["head"].shape == (6, n, 2 * agent.rssm.feat_dim)        # critics read (s⁻, s⁺)
    assert traj["logp"].shape == (5, n) and traj["logp"].requires_grad


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_takes_an_update_with_its_own_parts(variant):
    core = HazardNavCore(4)
    replay = random_replay(core, 40, 0)
    agent = _agent(variant)
    gen = torch.Generator().manual_seed(0)
    row = agent.update(replay.sample(4, 8, gen), gen)
    assert all(np.isfinite(v) for v in row.values())
    assert hasattr(agent, "priv_rssm") == (variant in ("pig", "no-rep", "nli"))
    assert hasattr(agent, "oracle") == (variant == "pig") and ("align" in row) == (variant == "pig")
    assert hasattr(agent, "priv_head") == (variant in ("pig", "informed"))
    assert {"lambda", "c", "cost_estimate", "gap", "penalty"} <= set(row)


def test_deployed_policy_refuses_the_privileged_vector():
    agent = _agent("pig")
    policy = DeployedPolicy(agent)
    core = HazardNavCore(3)
    b = core.reset([0, 1, 2])
    gen = torch.Generator().manual_seed(0)
    state = policy.initial(3)
    action, state = policy.act(torch.as_tensor(b.obs), torch.as_tensor(b.is_first), state, gen)
    assert action.shape == (3, 5)
    with pytest.raises(InputError, match="privileged"):
        policy.act(torch.as_tensor(b.obs), torch.as_tensor(b.is_first), state, gen, privileged=torch.as_tensor(b.privileged))
    glued = torch.as_tensor(np.concatenate([b.obs, b.privileged], 1))
    with pytest.raises(InputError, match="privileged"):
        policy.act(glued, torch.as_tensor(b.is_first), state, gen)
    assert not any(n.startswith(("priv", "oracle")) for n, _ in policy.named_parameters())


def _tiny_cfg(variant="pig", steps=240):
    return TrainConfig(steps=steps, envs=8, batch_size=2, seq_len=8, train_ratio=2.0, prefill=160, eval_every=240,
                       eval_episodes=2, agent=AgentConfig(variant=variant, **SMALL))


def test_same_seed_same_rows_and_another_seed_differs():
    a, b, c = Trainer(_tiny_cfg(), 0), Trainer(_tiny_cfg(), 0), Trainer(_tiny_cfg(), 1)
    for t in (a, b, c):
        t.run_until(240)
    assert a.rows == b.rows and a.evals == b.evals and len(a.rows) > 0
    assert a.rows != c.rows


def test_replay_aligns_action_cost_and_privileged_vector_per_step():
    """The targets check 4 scores against: in the replay, step t holds the action that led to it, the cost of
    that move (a hazard at offset (0, 0) in step t's privileged vector) and an observation whose centre
    shows that hazard at most when the cost is 1 (no off-by-one between cost and the step that produced it)."""
    from paperkit.methods.pigdreamer.envs import MOVES

    replay = random_replay(HazardNavCore(8), 150, 5)
    d = {k: v[:, : replay.filled].numpy() for k, v in replay.data.items()}
    step = ~d["is_first"][:, 1:]
    priv, cost = d["privileged"][:, 1:], d["cost"][:, 1:]
    moved = np.clip(d["privileged"][:, :-1, :2] + MOVES[d["action"][:, 1:].argmax(-1)], 0, 8)
    np.testing.assert_array_equal(priv[..., :2][step], moved[step])
    on_hazard = (priv[..., 4:].reshape(*priv.shape[:2], 3, 2) == 0).all(-1).any(-1)
    np.testing.assert_array_equal(cost[step] > 0, on_hazard[step])
    centre = d["obs"][:, 1:].reshape(*cost.shape, 3, 5, 5)[..., 2, 2, 2] > 0
    assert not (centre & (cost == 0))[step].any() and (centre & (cost > 0))[step].sum() > 10


def test_world_model_learns_scaled_down():
    """CI version of check 4 (AUROC ≥ 0.85 and L_align −50% need minutes: heavy test below): on 2k random
    HazardNav steps the cost head's two-hot loss falls from log(255) to under half of it."""
    torch.manual_seed(0)
    train, held = random_replay(HazardNavCore(8), 250, 0), random_replay(HazardNavCore(8), 40, 99)
    agent = _agent("pig", deter=64, hidden=64, wm_lr=1e-3, cost_weight=1.0)    # unweighted: the loss starts at log 255
    gen = torch.Generator().manual_seed(0)
    costs = []
    for _ in range(60):
        loss, parts, _, _ = agent.world_model_loss(train.sample(8, 8, gen), gen)
        agent._step(agent.wm_opt, loss, 1000.0)
        costs.append(float(parts["cost"]))
    assert costs[0] == pytest.approx(np.log(255), rel=1e-3) and np.mean(costs[-10:]) < 0.5 * costs[0]
    assert 0.0 <= cost_auroc(agent, held) <= 1.0


def test_align_pulls_the_naive_posterior_towards_the_oracle():
    """L_align alone, minimised on a fixed batch, more than halves KL[oracle ‖ naive posterior]."""
    replay = random_replay(HazardNavCore(4), 40, 0)
    agent = _agent("pig")
    gen = torch.Generator().manual_seed(0)
    batch = replay.sample(4, 8, gen)
    opt = torch.optim.Adam(agent.parameters(), lr=3e-3)
    kls = []
    for _ in range(40):
        loss = _align_only(agent, batch)           # dyn/rep weights 0.5/0.1, no free nats: the loss ∝ the KL
        opt.zero_grad()
        loss.backward()
        opt.step()
        kls.append(loss.item())
    assert np.mean(kls[-5:]) < 0.5 * kls[0]


def _align_only(agent, batch):
    from paperkit.methods.pigdreamer.nets import free_bits_kl

    gen = torch.Generator().manual_seed(1)
    emb, emb_p = agent.encoder(batch["obs"]), agent.priv_encoder(batch["privileged"])
    hs, _, post, _ = agent.rssm.observe(emb, batch["action"], batch["is_first"], gen)
    oracle = agent.rssm.logprobs(agent.oracle(torch.cat([hs, emb, emb_p], -1)))
    return free_bits_kl(oracle, post, free=0.0)[0]


def _learn(variant, steps, seed):
    cfg = TrainConfig(steps=steps, eval_every=steps // 4, eval_episodes=10, agent=AgentConfig(variant=variant, penalty_init=0.01))
    t = Trainer(cfg, seed)
    t.run_until(steps)
    last = max(e["step"] for e in t.evals)
    final = [e for e in t.evals if e["step"] == last]
    return np.mean([e["return"] for e in final]), np.mean([e["cost"] for e in final])


@pytest.fixture(scope="module")
def world_model_after_5k_steps():
    """Check 4's run: 5k random HazardNav steps (vector obs), the pig world model trained for 170 s of this
    thread's CPU time (within the 3 minutes; a busy machine does not shorten the training). Held-out: as many
    fresh layouts as training (50 episodes); 10 episodes (1k steps) made the AUROC swing by ±0.15 with the few
    episodes that hold its ≈ 45 cost events. Returns the held-out AUROC and L_align per update."""
    import time

    t0 = time.thread_time()
    train, held = random_replay(HazardNavCore(8), 625, 0), random_replay(HazardNavCore(8), 625, 99)
    core = HazardNavCore(1)
    agent = Agent(AgentConfig(variant="pig", wm_lr=1e-3), core.obs_shape, core.priv_dim, core.n_actions, True)
    gen = torch.Generator().manual_seed(0)
    aligns = []
    while time.thread_time() - t0 < 170:
        loss, parts, _, _ = agent.world_model_loss(train.sample(16, 32, gen), gen)
        agent._step(agent.wm_opt, loss, 1000.0)
        aligns.append(float(parts["align"]))
    auroc, seen = cost_auroc(agent, held), cost_auroc(agent, train)
    print(f"updates {len(aligns)} auroc {auroc:.3f} (training streams {seen:.3f}) align {aligns[0]:.3f} -> "
          f"{np.mean(aligns[-10:]):.3f}")
    return auroc, aligns


@pytest.mark.heavy
def test_world_model_cost_head_generalises_within_three_minutes(world_model_after_5k_steps):
    """Check 4, first half: after 5k steps the cost head's AUROC on held-out real transitions is ≥ 0.85. It
    holds since the privileged vector lists the hazards nearest first (0.94 after 400 updates, 0.96 after 1,000;
    in slot order 0.63-0.68 after 1,179-1,504 updates: the rule was memorised per layout)."""
    auroc, _ = world_model_after_5k_steps
    assert auroc >= 0.85


@pytest.mark.heavy
@pytest.mark.xfail(strict=True, reason="L_align rises 0.7 -> ~5 nats: the oracle posterior decodes the privileged "
                   "vector, i.e. the hazards the observation hides, so KL[oracle || naive posterior] grows from its "
                   "untrained first value; examples/pigdreamer/README.md")
def test_world_model_align_falls_by_half(world_model_after_5k_steps):
    """Check 4, second half: L_align has fallen ≥ 50% from its first value."""
    _, aligns = world_model_after_5k_steps
    assert np.mean(aligns[-10:]) <= 0.5 * aligns[0]


@pytest.fixture(scope="module")
def smoke_runs_6k():
    """Check 5's runs: pig and unprivileged, 6k steps (313 updates), seeds 0-2, the sampled evaluation
    DreamerV3 and SafeDreamer use; per seed (pig return, pig cost, unprivileged return) over the last 10
    evaluation episodes."""
    rows = []
    for seed in (0, 1, 2):
        ret_pig, cost_pig = _learn("pig", 6000, seed)
        ret_unp, _ = _learn("unprivileged", 6000, seed)
        print(f"seed {seed}: pig return {ret_pig:.2f} cost {cost_pig:.2f}; unprivileged return {ret_unp:.2f}")
        rows.append((ret_pig, cost_pig, ret_unp))
    return rows


@pytest.mark.heavy
def test_end_to_end_smoke_return_half(smoke_runs_6k):
    """Check 5, return half, on at least 2 of seeds 0-2: pig's mean return ≥ 90% of the unprivileged variant's
    at the same seed and budget (as a margin, so it also reads right for a negative return). Measured with the
    goal compass: pig 2.2, -1.2, 0.6 against -2.2, -0.5, 0.1 (before it: 0.5, 0.2, 1.1 against -0.1, -0.3, 0.5);
    both near a random policy's 2.6 at this budget, so this checks the pipeline more than the method."""
    beats = [pig >= unp - 0.1 * abs(unp) for pig, _, unp in smoke_runs_6k]
    assert sum(beats) >= 2, beats


@pytest.mark.heavy
@pytest.mark.xfail(strict=False, reason="at 6k steps the cost half does not hold: pig's cost over seeds 0-2 is "
                   "3.1/4.6/3.5 with the goal compass (before it, a coin flip per seed over seeds 0-4: "
                   "4.2/2.4/4.2/7.4/3.3), limit 3; "
                   "examples/pigdreamer/README.md, eighth and eleventh passes")
def test_end_to_end_smoke_cost_half(smoke_runs_6k):
    """Check 5, cost half, on at least 2 of seeds 0-2: pig's mean cost ≤ 1.5 × limit (3). Measured with the goal
    compass: 3.1, 4.6, 3.5; before it 4.2, 2.4, 4.2. With the slot-ordered vector the same run passed seeds 0 and 2, but over seeds 0-4 its cost half held
    on 2 of 5 (new: 1 of 5): 10 sampled episodes of a policy still near random decide it, not the method."""
    within = [cost <= 1.5 * 2.0 for _, cost, _ in smoke_runs_6k]
    assert sum(within) >= 2, within


def test_ppo_lagrangian_trains_logs_the_multiplier_and_deploys_without_privileged_input():
    from paperkit.methods.pigdreamer.ppo import PPOLagTrainer

    cfg = TrainConfig(steps=1024, envs=8, eval_every=1024, eval_episodes=2, agent=AgentConfig(penalty_init=0.5))
    t = PPOLagTrainer(cfg, 0)
    t.run_until(1024)
    assert t.step == 1024 and len(t.rows) == 1 and len(t.evals) == 2
    row = t.rows[0]
    assert row["cost_estimate"] == pytest.approx(row["episode_cost"]) and row["lambda"] == pytest.approx(1e-6)
    assert t.lagrangian.lam == pytest.approx(max(0.0, 1e-6 + 0.5 * (row["episode_cost"] - 2.0)))
    b = t.core.reset([0] * 8)
    with pytest.raises(InputError, match="privileged"):
        t.policy.act(torch.as_tensor(b.obs), torch.as_tensor(b.is_first), (), t.gen, privileged=b.privileged)


def test_pointgoal_continuous_actor_updates_and_acts_in_bounds():
    from paperkit.methods.pigdreamer.envs import PointGoalCore

    core = PointGoalCore(4)
    replay = random_replay(core, 24, 0)
    agent = _agent("pig", core=core)
    gen = torch.Generator().manual_seed(0)
    row = agent.update(replay.sample(4, 8, gen), gen)
    assert all(np.isfinite(v) for v in row.values())
    b = core.reset([0, 1, 2, 3])
    policy = DeployedPolicy(agent)
    action, _ = policy.act(torch.as_tensor(b.obs), torch.as_tensor(b.is_first), policy.initial(4), gen, greedy=False)
    assert action.shape == (4, 2) and action.abs().max() < 1
