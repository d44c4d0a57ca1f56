"""The cost calibration check: its rollout is the evaluation's, its window bookkeeping matches brute force, its
real column is the env's cost, and a world model whose cost head reads a constant reads that constant
everywhere."""

import numpy as np
import pytest
import torch

from paperkit.methods.pigdreamer.agent import Agent, AgentConfig, DeployedPolicy
from paperkit.methods.pigdreamer.calibration import MIXED, READINGS, cost_calibration, window_mask
from paperkit.methods.pigdreamer.envs import HazardNavCore
from paperkit.methods.pigdreamer.train import RandomPolicy, Replay, evaluate

SMALL = dict(deter=32, hidden=32, stoch=4, classes=4, horizon=5, imag_starts=16)


def _agent(variant, core):
    torch.manual_seed(0)
    return Agent(AgentConfig(variant=variant, **SMALL), core.obs_shape, core.priv_dim, core.n_actions, core.discrete).eval()


def test_window_mask_matches_brute_force():
    gen = np.random.default_rng(0)
    first = torch.as_tensor(gen.random((5, 40)) < 0.1)
    horizon = 6
    mask = window_mask(first, horizon)
    assert mask.shape == (5, 40 - horizon, horizon)
    for c in range(5):
        for t in range(40 - horizon):
            for k in range(1, horizon + 1):
                assert bool(mask[c, t, k - 1]) == (not first[c, t + 1:t + k + 1].any()), (c, t, k)


@pytest.mark.parametrize("variant, chunk, behaviour", [("pig", 64, "own"), ("pig", 4, "own"), ("unprivileged", 64, "own"),
                                                      ("pig", 4, "random")])
def test_calibration_rolls_out_the_evaluation_and_its_real_column_is_the_env_cost(variant, chunk, behaviour,
                                                                                   monkeypatch):
    """Also read in chunks of 4 episodes (6 here), as large evaluations are: the real column is the same. With a
    random behaviour policy, its episodes are the ones read."""
    import paperkit.methods.pigdreamer.calibration as calibration

    monkeypatch.setattr(calibration, "CHUNK", chunk)
    episodes, seed = 6, 3
    core = HazardNavCore(episodes, moving=True)
    agent = _agent(variant, core)
    acting = (lambda c: DeployedPolicy(agent)) if behaviour == "own" else RandomPolicy
    rows, cal = cost_calibration(agent, core, episodes, seed,
                                 behaviour=None if behaviour == "own" else RandomPolicy(core))
    # the same episodes as the evaluation, which never hands the policy the privileged vector
    other = HazardNavCore(episodes, moving=True)
    assert rows == evaluate(acting(other), other, episodes, seed)
    if behaviour == "random":       # not the agent's episodes
        own = HazardNavCore(episodes, moving=True)
        assert rows != evaluate(DeployedPolicy(agent), own, episodes, seed)
    keys = READINGS + (MIXED if variant == "pig" else ())
    assert set(cal["per_episode"]) == set(keys) and len(cal["per_step"]) == SMALL["horizon"]
    # real cost at step t + k over every window, brute force on an independent recording
    record = Replay(episodes, 101, core.obs_shape, core.priv_dim, core.n_actions)
    other = HazardNavCore(episodes, moving=True)
    evaluate(acting(other), other, episodes, seed, record=record)
    cost = record.data["cost"][:, :record.filled].numpy()
    for k in range(1, SMALL["horizon"] + 1):
        windows = [cost[c, t + k] for c in range(episodes) for t in range(record.filled - SMALL["horizon"])]
        assert cal["per_step"][k - 1]["real"] == pytest.approx(np.mean(windows), rel=1e-6)
    # scaled to one 100-step episode; the whole episodes' mean cost is near it (windows skip the last 5 steps)
    assert cal["per_episode"]["real"] == pytest.approx(100 * np.mean([r["real"] for r in cal["per_step"]]))
    assert cal["windows"] == episodes * (100 + 1 - SMALL["horizon"])


def test_a_constant_cost_head_reads_its_constant_in_every_reading():
    episodes = 4
    core = HazardNavCore(episodes)
    agent = _agent("pig", core)
    with torch.no_grad():
        last = agent.cost_head[-1]
        last.weight.zero_()
        last.bias.copy_(torch.linspace(-3, 3, last.bias.numel()))
    with torch.no_grad():
        constant = float(agent.predicted_cost(torch.zeros(1, 2 * agent.rssm.feat_dim)))
    assert constant > 0
    _, cal = cost_calibration(agent, core, episodes, 0)
    for row in cal["per_step"]:
        for key in ("posterior", "open_loop", "imagined", *MIXED):
            assert row[key] == pytest.approx(constant, rel=1e-5), key
    ratio = cal["ratio_to_real"]["open_loop"]
    assert ratio == pytest.approx(100 * constant / cal["per_episode"]["real"], rel=1e-5)
