import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from paperkit.core.errors import ConfigError
from paperkit.methods.hygma.grouping import (
    assignment_ari,
    choose_groups,
    cluster_agents,
    incidence_matrix,
    moved_fraction,
    specialisation,
)


def _blobs(per_blob=4, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]])
    truth = np.repeat(np.arange(3), per_blob)
    return centres[truth] + rng.normal(scale=0.3, size=(truth.size, 2)), truth


def test_three_separated_blobs_give_k3_and_ari_1():
    features, truth = _blobs()
    labels, k, score = cluster_agents(features, 2, 4)
    assert k == 3
    assert adjusted_rand_score(truth, labels) == 1.0
    assert score > 0.9


def test_stability_rule_keeps_old_partition_when_few_move():
    features, truth = _blobs()
    previous = truth.copy()
    previous[-1] = 1  # one agent of 12 differs from the new clustering: 1/12 < δ
    kept = choose_groups(previous, features, 2, 4, stability=0.4)
    assert not kept.accepted and np.array_equal(kept.labels, previous)
    assert kept.moved_fraction == pytest.approx(1 / 12)
    far = np.array([0, 1, 2] * 4)  # most agents move: accepted
    taken = choose_groups(far, features, 2, 4, stability=0.4)
    assert taken.accepted and adjusted_rand_score(truth, taken.labels) == 1.0


def test_moved_fraction_ignores_group_names_and_incidence_is_a_partition():
    assert moved_fraction(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])) == 0.0
    assert moved_fraction(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])) == 0.25
    h = incidence_matrix(np.array([2, 2, 0, 1]))
    assert h.shape == (3, 4) and np.array_equal(h.sum(axis=0), np.ones(4))


def _two_teams(seed=0):
    rng = np.random.default_rng(seed)
    truth = np.array([0, 0, 0, 1, 1, 1])
    return np.array([[0.0, 0.0], [8.0, 0.0]])[truth] + rng.normal(scale=0.3, size=(6, 2)), truth


def test_the_paper_rule_alone_never_replaces_a_two_group_partition_at_delta_06():
    """Minimised over group names, at most half the agents can move between 2-group partitions: 1/2 < δ = 0.6."""
    features, truth = _two_teams()
    wrong = np.array([0, 0, 1, 1, 1, 0])            # one swap away from the truth: 2 of 6 agents
    assert moved_fraction(wrong, truth) == pytest.approx(1 / 3)
    assert max(moved_fraction(wrong, np.array(p)) for p in np.ndindex(*(2,) * 6) if len(set(p)) == 2) == 0.5
    first = choose_groups(wrong, features, 2, 2, stability=0.6)
    assert not first.accepted and np.array_equal(first.labels, wrong) and np.array_equal(first.proposal, truth)


def test_a_proposal_repeated_twice_in_a_row_is_adopted():
    features, truth = _two_teams()
    wrong = np.array([0, 0, 1, 1, 1, 0])
    first = choose_groups(wrong, features, 2, 2, stability=0.6)
    second = choose_groups(first.labels, features, 2, 2, stability=0.6, last_proposal=first.proposal)
    assert second.accepted and adjusted_rand_score(truth, second.labels) == 1.0
    other = choose_groups(wrong, features, 2, 2, stability=0.6, last_proposal=np.array([0, 1, 0, 1, 0, 1]))
    assert not other.accepted   # a one-off proposal that moves few agents is still rejected


def test_assignment_ari_ignores_agents_that_never_helped():
    helped = np.array([[3, 0], [2, 1], [0, 4], [1, 5], [0, 0], [0, 0]])   # agents 4 and 5 never helped
    assert assignment_ari([0, 0, 1, 1, 0, 1], helped) == 1.0
    assert assignment_ari([0, 1, 1, 1, 0, 1], helped[[0, 4, 5]]) is None   # one helper: no ground truth


def test_assignment_ari_has_no_truth_for_ties_or_a_single_prey():
    """A pack that hunts together ties on every prey (argmax used to call it prey 0 for all), and against a
    one-prey truth every split into k >= 2 groups scores ARI 0: neither is an assignment to recover."""
    pack = np.array([[4, 4], [4, 4], [4, 4], [4, 4]])
    assert assignment_ari([0, 0, 1, 1], pack) is None
    one_prey = np.array([[5, 1], [3, 0], [2, 1], [4, 2]])
    assert assignment_ari([0, 0, 1, 1], one_prey) is None
    ties_left_out = np.array([[2, 2], [3, 0], [0, 3], [1, 1], [4, 1], [0, 2]])   # agents 0 and 3 tie
    assert assignment_ari([1, 0, 1, 0, 0, 1], ties_left_out) == 1.0
    assert assignment_ari([1, 0, 1, 0, 1, 1], ties_left_out) < 1.0


def test_specialisation_is_the_mean_share_of_the_most_helped_prey():
    assert specialisation(np.array([[3, 1], [0, 2], [0, 0]])) == pytest.approx((0.75 + 1.0) / 2)
    assert specialisation(np.array([[4, 4], [2, 2]])) == 0.5
    assert specialisation(np.zeros((3, 2))) is None


@pytest.mark.parametrize(("k_min", "k_max", "stability"), [(3, 2, 0.5), (2, 12, 0.5), (2, 3, 1.5)])
def test_bad_ranges_raise_config_error(k_min, k_max, stability):
    features, _ = _blobs()
    with pytest.raises(ConfigError):
        choose_groups(None, features, k_min, k_max, stability)


def test_group_ari_claim_reads_an_undefined_ari_as_nan_and_fails(tmp_path):
    """A run whose every ARI was undefined (one-prey references) has no group_ari_mean: the claim shows NaN, not a
    measured 0, and its verdict is still 'does not hold'."""
    import json
    import math

    from paperkit.methods.hygma.claims import _gc_ari
    from paperkit.reproduce.criteria import FAILS, Interval

    (tmp_path / "gc").mkdir()
    rows = [{"algo": "hygma-qmix", "n_seeds": 1, "return_mean": 1.0}]
    (tmp_path / "gc" / "summary.json").write_text(json.dumps({"mean": rows}))
    m = _gc_ari(tmp_path)
    assert math.isnan(m["group_ari"])
    assert Interval("group_ari", lo=0.5).verdict([m]).verdict == FAILS
    rows[0]["group_ari_mean"] = 0.75
    (tmp_path / "gc" / "summary.json").write_text(json.dumps({"mean": rows}))
    assert _gc_ari(tmp_path)["group_ari"] == 0.75
