"""Metrics on hand-made cases: perfect predictions give 1, matching equals brute force, AP by hand."""

import itertools

import numpy as np
import pytest

from paperkit.methods.sve import metrics as M


def test_perfect_predictions_score_one():
    truth_boxes = [np.array([[0, 0, 10, 10], [20, 20, 40, 30]], float), np.array([[5, 5, 15, 25]], float)]
    truth_cls = [np.array([0, 1]), np.array([1])]
    preds = [(b, c, np.ones(len(c))) for b, c in zip(truth_boxes, truth_cls, strict=True)]
    assert M.mean_average_precision(preds, list(zip(truth_boxes, truth_cls, strict=True)), 3)["map50"] == 1.0
    j = [np.array([[1.0, 2.0], [30, 40]])]
    assert M.junction_scores(j, j)["f1"] == 1.0
    edge = np.zeros((1, 16, 16), bool)
    edge[0, 4, 2:12] = True
    assert M.boundary_scores(edge, edge)["f1"] == 1.0


def test_ap_by_hand():
    """3 truths, detections TP, FP, TP by score: precision envelope 1 up to recall 1/3, 2/3 up to 2/3, then 0."""
    ap = M.average_precision(np.array([0.9, 0.8, 0.7]), np.array([True, False, True]), 3)
    expected = (34 * 1.0 + 33 * (2 / 3) + 34 * 0.0) / 101
    assert ap == pytest.approx(expected)


def test_map_duplicate_is_false_positive_and_iou_threshold():
    tb, tc = np.array([[0, 0, 10, 10]], float), np.array([0])
    # the second box overlaps the truth (IoU 0.81) but the truth is already taken: a false positive after the hit
    preds = [(np.array([[0, 0, 10, 10], [0, 0, 9, 9]], float), np.array([0, 0]), np.array([0.9, 0.8]))]
    assert M.mean_average_precision(preds, [(tb, tc)], 1)["map50"] == 1.0
    low = [(np.array([[0, 0, 10, 4.9]], float), np.array([0]), np.array([0.9]))]       # IoU 0.49
    assert M.mean_average_precision(low, [(tb, tc)], 1)["map50"] == 0.0


def _brute_matches(p, t, tol):
    best = 0
    small, big = (p, t) if len(p) <= len(t) else (t, p)
    for perm in itertools.permutations(range(len(big)), len(small)):
        best = max(best, sum(np.hypot(*(small[i] - big[j])) <= tol for i, j in enumerate(perm)))
    return best


@pytest.mark.parametrize("seed", range(25))
def test_junction_matching_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 12, (rng.integers(0, 7), 2))
    t = rng.uniform(0, 12, (rng.integers(0, 7), 2))
    assert M.match_points(p, t, 4.0) == _brute_matches(p, t, 4.0)


def test_boundary_tolerance_two_pixels():
    truth = np.zeros((1, 20, 20), bool)
    truth[0, 10, 2:18] = True
    shifted2, shifted3 = np.roll(truth, 2, axis=1), np.roll(truth, 3, axis=1)
    assert M.boundary_scores(shifted2, truth)["f1"] == 1.0
    assert M.boundary_scores(shifted3, truth)["f1"] == 0.0


def test_probe_accuracy_per_type():
    out = M.probe_accuracy(np.array([0, 1, 1, 2]), np.array([0, 1, 0, 2]), np.array([0, 0, 1, 1]), ("a", "b", "c"))
    assert out == {"all": 0.75, "a": 1.0, "b": 0.5}
