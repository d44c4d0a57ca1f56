"""The issue's acceptance runs: full versions are ``heavy`` (minutes of training); CI versions are scaled down."""

import numpy as np
import pytest
import torch

from paperkit.methods.hygma.envs import GroupCapture, PredatorPrey, make_core
from paperkit.methods.hygma.grouping import assignment_ari, choose_groups
from paperkit.methods.hygma.train import TrainConfig, agent_features, train


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _chase(core, targets):
    """Scripted actions: each agent steps toward its assigned prey (rows first, then columns)."""
    b = np.arange(core.batch)[:, None]
    goal = core.prey[b, targets[None, :]]
    d = goal - core.pos
    return np.where(d[..., 0] < 0, 1, np.where(d[..., 0] > 0, 2, np.where(d[..., 1] < 0, 3, np.where(d[..., 1] > 0, 4, 0))))


def test_grouping_pipeline_recovers_the_prey_assignment_of_scripted_agents():
    """CI version of the group-capture ARI check: agents that chase the same prey are grouped together."""
    core = GroupCapture(n_agents=6, size=8, horizon=30, vision=1, n_preys=2, needed=3)
    targets = np.array([0, 1, 0, 1, 1, 0])
    step = core.reset(range(8))
    history = []
    for _ in range(core.horizon):
        history.append(step.obs.mean(0))
        step = core.step(_chase(core, targets))
    g = choose_groups(None, agent_features(history), 2, 3, 0.6)
    assert step.stats["catch"].sum() > 0
    assert assignment_ari(g.labels, step.stats["helped"].sum(0)) == 1.0
    assert assignment_ari(g.labels, np.eye(2)[targets]) == 1.0


def test_hygma_qmix_learns_a_tiny_predator_prey():
    """CI version of the pp check: 2 predators on 3×3 (6 steps) — the greedy return improves over training."""
    def core():
        return PredatorPrey(n_agents=2, size=3, horizon=6, vision=1)

    cfg = TrainConfig(algo="hygma-qmix", steps=3000, batch_envs=8, batch_size=16, eval_every=1500, eval_episodes=32,
                      epsilon_anneal=1500, cluster_every=1000, k_min=2, k_max=2, grouping="single", target_every=40)
    out = train(core(), cfg, 0, "cpu", core())
    assert out.final["return"] > out.curves[0]["return"] + 0.05
    assert out.final["success"] > out.curves[0]["success"]


def _train_many(env, preset, algo, steps, seeds, **kw):
    cfg = TrainConfig(algo=algo, steps=steps, k_max=min(3, make_core(env, preset).n_agents - 1), **kw)
    return [train(make_core(env, preset), cfg, s, "cpu", make_core(env, preset)) for s in seeds]


@pytest.mark.heavy
def test_pp_easy_100k_hygma_catches_at_least_as_well_as_qmix():
    hygma = _train_many("pp", "easy", "hygma-qmix", 100_000, (0, 1), epsilon_anneal=30_000)
    qmix = _train_many("pp", "easy", "qmix", 100_000, (0, 1), epsilon_anneal=30_000)
    h, q = np.mean([o.final["success"] for o in hygma]), np.mean([o.final["success"] for o in qmix])
    print(f"pp easy catch: HYGMA-QMIX {h:.3f}, QMIX {q:.3f}; wall s", [o.timing["wall_s"] for o in hygma + qmix])
    assert h >= 0.8 and h >= q - 0.05


@pytest.fixture(scope="module")
def group_capture_150k():
    """The issue's group-capture runs (examples/hygma/configs/group-capture.yaml: 150k steps, ε over 100k,
    clustering every 10k), trained once for both heavy checks below."""
    kw = {"cluster_every": 10_000}
    return (_train_many("group-capture", "medium", "hygma-qmix", 150_000, (0, 1, 2), **kw),
            _train_many("group-capture", "medium", "qmix", 150_000, (0, 1, 2), **kw))


@pytest.mark.heavy
def test_group_capture_150k_hygma_return_at_least_qmix_on_two_of_three_seeds(group_capture_150k):
    hygma, qmix = group_capture_150k
    wins = sum(h.final["return"] >= q.final["return"] for h, q in zip(hygma, qmix, strict=True))
    print("group-capture returns", [o.final["return"] for o in hygma], [o.final["return"] for o in qmix])
    assert wins >= 2


@pytest.mark.heavy
@pytest.mark.xfail(strict=True, reason="no prey assignment to match: at 150k steps every learned policy (HYGMA-QMIX, "
                   "QMIX, IQL, VDN) hunts one prey as a pack of six, so every agent's most-helped prey is the same "
                   "and the ARI is undefined (None) on all 3 seeds, though scripted agents split 3 + 3 catch 1.6x "
                   "more (a local optimum, kept on seeds 0-2 even when HYGMA is given the ideal groups); examples/hygma/README.md")
def test_group_capture_150k_groups_match_the_preys(group_capture_150k):
    hygma, _ = group_capture_150k
    aris = [assignment_ari(o.groups[-1]["groups"], o.final["helped"]) for o in hygma]
    print("group-capture ARI", aris, "helped", [o.final["helped"] for o in hygma])
    assert np.mean([a or 0.0 for a in aris]) >= 0.5
