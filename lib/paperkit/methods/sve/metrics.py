"""Evaluation: grounding mAP@0.5 (COCO 101-point), junction P/R/F1 at 4 px (Hungarian matching),
boundary F1 at a 2-px tolerance (distance transforms), probe accuracy per question type."""

from __future__ import annotations

import numpy as np
from scipy.ndimage import distance_transform_edt
from scipy.optimize import linear_sum_assignment

RECALL_POINTS = np.linspace(0.0, 1.0, 101)


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix of boxes ``(x0, y0, x1, y1)``: ``a`` (N, 4) against ``b`` (M, 4)."""
    a, b = np.asarray(a, np.float64).reshape(-1, 4), np.asarray(b, np.float64).reshape(-1, 4)
    iw = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = iw * ih
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    union = area(a)[:, None] + area(b)[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def average_precision(scores: np.ndarray, hits: np.ndarray, n_truth: int) -> float:
    """COCO 101-point interpolated AP of detections (score, is-true-positive) against ``n_truth`` boxes."""
    order = np.argsort(-np.asarray(scores, np.float64), kind="stable")
    tp = np.cumsum(np.asarray(hits, np.float64)[order])
    fp = np.cumsum(1.0 - np.asarray(hits, np.float64)[order])
    recall = tp / n_truth
    precision = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    envelope = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
    idx = np.searchsorted(recall, RECALL_POINTS, side="left")
    return float(np.mean([envelope[i] if i < len(envelope) else 0.0 for i in idx]))


def mean_average_precision(preds: list[tuple], truths: list[tuple], n_classes: int, iou: float = 0.5) -> dict:
    """mAP@``iou`` over classes that have ground truth.

    ``preds[i] = (boxes, classes, scores)`` and ``truths[i] = (boxes, classes)`` for image ``i``. Per class,
    detections over all images are taken by decreasing score; each matches the unmatched truth box of
    its image with the highest IoU >= ``iou`` (COCO's greedy rule).
    """
    per_class = {}
    for c in range(n_classes):
        scores, hits, n_truth = [], [], 0
        for (pb, pc, ps), (tb, tc) in zip(preds, truths, strict=True):
            gt = np.asarray(tb).reshape(-1, 4)[np.asarray(tc) == c]
            n_truth += len(gt)
            mask = np.asarray(pc) == c
            boxes, sc = np.asarray(pb).reshape(-1, 4)[mask], np.asarray(ps)[mask]
            order = np.argsort(-sc, kind="stable")
            ious = box_iou(boxes[order], gt)
            used = np.zeros(len(gt), bool)
            for k, row in zip(order, ious, strict=True):
                cand = np.where(~used & (row >= iou), row, -1.0)
                hit = len(gt) > 0 and cand.max() >= 0
                if hit:
                    used[int(np.argmax(cand))] = True
                scores.append(float(sc[k]))
                hits.append(bool(hit))
        if n_truth:
            per_class[c] = average_precision(np.asarray(scores), np.asarray(hits, bool), n_truth)
    return {"map50": float(np.mean(list(per_class.values()))) if per_class else 0.0, "ap_per_class": per_class}


def match_points(pred: np.ndarray, truth: np.ndarray, tol: float = 4.0) -> int:
    """Largest number of one-to-one pairs within ``tol`` px (Hungarian on distances, far pairs barred)."""
    pred, truth = np.asarray(pred, np.float64).reshape(-1, 2), np.asarray(truth, np.float64).reshape(-1, 2)
    if not len(pred) or not len(truth):
        return 0
    dist = np.hypot(pred[:, None, 0] - truth[None, :, 0], pred[:, None, 1] - truth[None, :, 1])
    ok = dist <= tol
    # A barred pair costs more than any set of allowed ones, so the optimum first maximises the count.
    cost = np.where(ok, dist, tol * (min(dist.shape) + 1))
    rows, cols = linear_sum_assignment(cost)
    return int(ok[rows, cols].sum())


def junction_scores(preds: list[np.ndarray], truths: list[np.ndarray], tol: float = 4.0) -> dict:
    """Junction precision, recall and F1 at ``tol`` px, pooled over images."""
    matched = sum(match_points(p, t, tol) for p, t in zip(preds, truths, strict=True))
    n_pred = sum(len(np.asarray(p).reshape(-1, 2)) for p in preds)
    n_true = sum(len(np.asarray(t).reshape(-1, 2)) for t in truths)
    return _prf(matched, matched, n_pred, n_true)


def _prf(tp_pred: float, tp_true: float, n_pred: float, n_true: float) -> dict:
    precision = tp_pred / n_pred if n_pred else 1.0
    recall = tp_true / n_true if n_true else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


def boundary_scores(preds: np.ndarray, truths: np.ndarray, tol: float = 2.0) -> dict:
    """Boundary precision/recall/F1: a predicted pixel counts when a true one lies within ``tol`` px
    (Euclidean distance transform) and vice versa; pooled over images."""
    tp_pred = tp_true = n_pred = n_true = 0
    for p, t in zip(np.asarray(preds, bool), np.asarray(truths, bool), strict=True):
        n_pred += int(p.sum())
        n_true += int(t.sum())
        if p.any() and t.any():
            tp_pred += int((distance_transform_edt(~t)[p] <= tol).sum())
            tp_true += int((distance_transform_edt(~p)[t] <= tol).sum())
    return _prf(tp_pred, tp_true, n_pred, n_true)


def probe_accuracy(pred: np.ndarray, answer: np.ndarray, qtype: np.ndarray, names: tuple[str, ...]) -> dict:
    """Overall accuracy and accuracy per question type (types without questions are left out)."""
    right = np.asarray(pred) == np.asarray(answer)
    out = {"all": float(right.mean()) if len(right) else 0.0}
    for t, name in enumerate(names):
        m = np.asarray(qtype) == t
        if m.any():
            out[name] = float(right[m].mean())
    return out
