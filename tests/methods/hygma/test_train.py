"""Training: every parameter learns, double-Q target by hand, official-code fixes, regrouping log, determinism."""

import numpy as np
import pytest
import torch

from paperkit.methods.hygma.envs import make_core
from paperkit.methods.hygma.grouping import assignment_ari, choose_groups
from paperkit.methods.hygma.train import (
    Learner,
    Replay,
    TrainConfig,
    agent_features,
    agent_inputs,
    rollout,
    train,
)

TINY = dict(steps=400, batch_envs=4, batch_size=4, eval_every=200, eval_episodes=4, cluster_every=100, history=50,
            hidden=16, hgcn_hidden=16, hgcn_out=8, mixer_embed=8)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The agent nets are tiny: one torch thread is fastest (and hygma-train runs each job on one)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _learner(algo, env="group-capture", preset="easy", **kw):
    torch.manual_seed(0)
    core = make_core(env, preset)
    cfg = TrainConfig(algo=algo, **{**TINY, **kw})
    return core, Learner(cfg, core.obs_dim, core.state_dim, core.n_agents, core.n_actions, "cpu")


def _batch(core, learner, n=4):
    gen = torch.Generator().manual_seed(0)
    ep = rollout(core, learner, list(range(n)), 1.0, gen)
    return {f: getattr(ep, f) for f in Replay.FIELDS}


@pytest.mark.parametrize("algo", ["hygma-qmix", "hygma-ac"])
def test_every_parameter_hgcn_included_gets_a_nonzero_gradient(algo):
    """The official MAC exposed only the GRU's parameters: here the HGCN and the mixer are optimised too."""
    core, learner = _learner(algo)
    learner.set_groups(np.array([0, 0, 1, 1]))
    stats = learner.update(_batch(core, learner))
    assert all(np.isfinite(v) for v in stats.values())
    names = [n for n, _ in learner.agent.named_parameters()]
    assert any(n.startswith("hgcn.") for n in names)
    opt_params = {id(p) for g in learner.opt.param_groups for p in g["params"]}
    for name, p in list(learner.agent.named_parameters()) + list((learner.mixer or torch.nn.Module()).named_parameters()):
        if name.startswith("value.") and algo != "hygma-ac":
            continue
        assert id(p) in opt_params, name
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_attention_loss_reaches_the_attention_parameters_through_the_learner():
    """The official code detached the attention weights; here λ_a alone moves the query/key projections."""
    core, learner = _learner("hygma-qmix", lambda_consistency=0.0)
    learner.set_groups(np.array([0, 0, 1, 1]))
    batch = _batch(core, learner)
    last = np.concatenate([np.full_like(batch["actions"][:, :1], -1), batch["actions"]], 1)
    x = torch.as_tensor(agent_inputs(batch["obs"], last, core.n_actions))
    _, _, feats, atts = learner.agent.unroll(x, learner.incidence)
    _, att = learner._aux(feats, atts)
    att.backward()
    assert learner.agent.hgcn.layers[0].query.weight.grad.abs().sum() > 0
    assert learner.agent.hgcn.layers[0].key.weight.grad.abs().sum() > 0


def test_hgcn_on_valid_steps_only_leaves_the_outputs_of_valid_steps_unchanged():
    """The learner skips the HGCN on padded steps after an episode's end; the GRU never looks back, so every
    output up to the end equals the full computation's."""
    core, learner = _learner("hygma-qmix", env="pp", preset="easy")
    learner.set_groups(np.array([0, 0, 1]))
    batch = _batch(core, learner, n=8)
    last = np.concatenate([np.full_like(batch["actions"][:, :1], -1), batch["actions"]], 1)
    x = torch.as_tensor(agent_inputs(batch["obs"], last, core.n_actions))
    ends = torch.tensor([1, 3, 5, 8, 13, 20, 21, 21])   # episodes that end after these many observations
    valid = torch.arange(x.shape[1])[None] < ends[:, None]
    full, _, feats_full, _ = learner.agent.unroll(x, learner.hypergraph)
    part, _, feats, atts = learner.agent.unroll(x, learner.hypergraph, valid)
    torch.testing.assert_close(part[valid], full[valid])
    assert feats.shape[0] == atts[0].shape[0] == int(valid.sum())
    torch.testing.assert_close(feats, feats_full[valid.reshape(-1)])


def test_td_loss_equals_a_hand_computed_double_q_target_with_vdn():
    core, learner = _learner("vdn", env="pp", gamma=0.9)
    batch = _batch(core, learner)
    with torch.no_grad():
        for p in learner.target_agent.parameters():
            p.add_(0.1)   # a target net that differs from the online net
    last = np.concatenate([np.full_like(batch["actions"][:, :1], -1), batch["actions"]], 1)
    x = torch.as_tensor(agent_inputs(batch["obs"], last, core.n_actions))
    out, _, _, _ = learner.agent.unroll(x, learner.incidence)
    tb = {k: torch.as_tensor(v) for k, v in batch.items()}
    valid = torch.cat([torch.ones_like(tb["filled"][:, :1]), tb["filled"]], 1)
    loss = learner._td_loss(tb, x, out, tb["filled"].float(), valid).item()
    q = out.detach().numpy()
    qt = learner.target_agent.unroll(x, learner.incidence)[0].detach().numpy()
    total, count = 0.0, 0
    for b in range(q.shape[0]):
        for t in range(q.shape[1] - 1):
            if not batch["filled"][b, t]:
                continue
            chosen = sum(q[b, t, i, batch["actions"][b, t, i]] for i in range(core.n_agents))
            nxt = 0.0
            for i in range(core.n_agents):
                avail = np.flatnonzero(batch["mask"][b, t + 1, i])
                best = avail[np.argmax(q[b, t + 1, i, avail])]   # the online net picks ...
                nxt += qt[b, t + 1, i, best]                     # ... the target net values
            y = batch["reward"][b, t] + 0.9 * (1 - batch["terminated"][b, t]) * nxt
            total += (chosen - y) ** 2
            count += 1
    assert loss == pytest.approx(total / count, rel=1e-4)


def test_groups_are_indexed_by_agent_id_under_permutation():
    """The official code indexed labels by batch-major rows; ours follow the agents when they are permuted."""
    rng = np.random.default_rng(0)
    features = np.concatenate([rng.normal(0, 0.1, (3, 4)), rng.normal(5, 0.1, (3, 4))])
    perm = np.array([4, 0, 5, 2, 1, 3])
    a = choose_groups(None, features, 2, 3, 0.6).labels
    b = choose_groups(None, features[perm], 2, 3, 0.6).labels
    assert assignment_ari(b, np.eye(2)[a[perm]]) == 1.0


def test_agent_features_average_each_agents_history():
    hist = [np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 1.0]]), np.array([[2.0, 1.0], [4.0, 1.0], [6.0, 1.0]])]
    feats = agent_features(hist)
    mean = np.array([1.0, 3.0, 5.0])
    pooled = np.std([0.0, 2, 4, 2, 4, 6])   # the feature's spread over every step and agent
    np.testing.assert_allclose(feats[:, 0], (mean - mean.mean()) / pooled)
    assert (feats[:, 1] == 0).all()   # constant: no information


def test_agent_features_do_not_amplify_uninformative_dimensions():
    """A feature that barely differs between agents (relative to its spread over time) stays small; z-scoring the
    agent means would have scaled it to the same weight as the feature that separates two teams."""
    rng = np.random.default_rng(0)
    team = np.array([0, 0, 0, 1, 1, 1])
    hist = [np.stack([team + rng.normal(0, 0.3, 6), 0.5 + rng.normal(0, 0.3, 6)], 1) for _ in range(400)]
    feats = agent_features(hist)
    assert np.abs(feats[:, 1]).max() < 0.2 < np.abs(feats[:, 0]).min()


@pytest.fixture(scope="module")
def tiny_runs():
    core, ev = make_core("group-capture", "easy"), make_core("group-capture", "easy")
    cfg = TrainConfig(algo="hygma-qmix", k_max=3, **TINY)
    return train(core, cfg, 3, "cpu", ev), train(make_core("group-capture", "easy"), cfg, 3, "cpu",
                                                 make_core("group-capture", "easy"))


def test_reclustering_entries_appear_at_every_interval_for_the_whole_run(tiny_runs):
    out, _ = tiny_runs
    # 4 copies × 25 steps = 100 env steps per rollout = --cluster-every: one entry after every rollout
    assert [g["step"] for g in out.groups if g["kind"] == "dynamic"] == [100, 200, 300, 400]
    assert out.groups[0]["kind"] == "initial" and out.groups[0]["k"] == 1
    assert out.attention.ndim == 4 and np.isfinite(out.attention).all()


def test_same_seed_gives_identical_curves_and_groups(tiny_runs):
    a, b = tiny_runs
    assert a.curves == b.curves and a.groups == b.groups
    assert all(torch.equal(a.checkpoint["agent"][k], b.checkpoint["agent"][k]) for k in a.checkpoint["agent"])


@pytest.mark.parametrize("algo", ["qmix", "vdn", "iql", "hygma-ac"])
def test_baselines_train_with_finite_losses(algo):
    out = train(make_core("pp", "easy"), TrainConfig(algo=algo, k_max=2, **TINY), 0, "cpu", make_core("pp", "easy"))
    assert all(np.isfinite(c["loss"]) for c in out.curves if c["loss"] is not None)
    assert len(out.curves) == 3
    assert (len(out.groups) == 1) == (algo != "hygma-ac")   # only HYGMA regroups
