"""Multi-label evaluation metrics, with the definitions spelled out (toolkits disagree).

Ranking metrics use the real-valued scores F (higher = more relevant); ties are counted against the
ranking, as in scikit-learn. Per sample i with relevant set Yᵢ and irrelevant set Ȳᵢ:

* ``hamming_loss``: fraction of (sample, label) entries where the thresholded prediction is wrong
  (= sklearn.metrics.hamming_loss).
* ``ranking_loss``: |{(j, k) ∈ Yᵢ × Ȳᵢ : F_ik ≥ F_ij}| / (|Yᵢ||Ȳᵢ|), 0 when Yᵢ or Ȳᵢ is empty
  (= sklearn.metrics.label_ranking_loss).
* ``one_error``: the label with the highest score (first one on ties, numpy argmax) is not relevant;
  samples without relevant labels count as errors (the classic definition averages over all samples).
* ``coverage``: classic definition, max over relevant j of rank(j) − 1, rank(j) = |{k: F_ik ≥ F_ij}|;
  0 for samples without relevant labels. ``coverage_sklearn`` is scikit-learn's coverage_error (no
  "− 1"); the two differ by exactly 1 when every sample has a relevant label (scikit-learn #7698).
* ``average_precision``: mean over j ∈ Yᵢ of |{k ∈ Yᵢ: F_ik ≥ F_ij}| / rank(j); 1 when Yᵢ is empty or
  holds all labels (= sklearn.metrics.label_ranking_average_precision_score).
* ``micro_f1``, ``macro_f1``: F1 of the thresholded predictions pooled over all entries / averaged over
  labels (a label with no true and no predicted positives scores 0, as sklearn's zero_division=0).
* ``subset_accuracy``: fraction of samples whose whole label vector is predicted exactly.
"""

from __future__ import annotations

import numpy as np

METRICS = ("hamming_loss", "ranking_loss", "one_error", "coverage", "coverage_sklearn", "average_precision",
           "micro_f1", "macro_f1", "subset_accuracy")
# Which direction is better, for tables.
LOWER_IS_BETTER = {"hamming_loss", "ranking_loss", "one_error", "coverage", "coverage_sklearn"}
DEFINITIONS = {
    "hamming_loss": "fraction of wrong (sample, label) predictions",
    "ranking_loss": "fraction of (relevant, irrelevant) pairs with irrelevant score >= relevant (sklearn)",
    "one_error": "top-scored label (argmax, first on ties) not relevant; samples without labels count as errors",
    "coverage": "classic: max rank of a relevant label minus 1 (0 for samples without labels)",
    "coverage_sklearn": "scikit-learn coverage_error: max rank of a relevant label (no minus 1)",
    "average_precision": "label ranking average precision (sklearn LRAP)",
    "micro_f1": "F1 pooled over all (sample, label) entries",
    "macro_f1": "F1 per label, averaged (0 for labels with no true and no predicted positives)",
    "subset_accuracy": "fraction of samples predicted exactly",
}


def _pairwise_ge(F: np.ndarray, rows: slice) -> np.ndarray:
    """ge[i, j, k] = F[i, k] >= F[i, j] for the rows in ``rows``."""
    f = F[rows]
    return f[:, None, :] >= f[:, :, None]


def _chunks(n: int, q: int, budget: int = 4_000_000):
    step = max(1, budget // max(1, q * q))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def hamming_loss(Y: np.ndarray, P: np.ndarray) -> float:
    return float(np.mean(np.asarray(Y, bool) != np.asarray(P, bool)))


def ranking_quantities(Y: np.ndarray, F: np.ndarray) -> dict[str, np.ndarray]:
    """Per-sample ranking loss, coverage (sklearn's), average precision and one-error."""
    Y = np.asarray(Y, bool)
    F = np.asarray(F, np.float64)
    n, q = Y.shape
    rl = np.zeros(n)
    cov = np.zeros(n)
    ap = np.ones(n)
    for rows in _chunks(n, q):
        y = Y[rows]
        ge = _pairwise_ge(F, rows)  # [i, j, k]: F_k >= F_j
        rank = ge.sum(axis=2)  # rank(j) = |{k: F_k >= F_j}|
        n_pos = y.sum(axis=1)
        n_neg = q - n_pos
        # Ranking loss: pairs j relevant, k irrelevant with F_k >= F_j.
        bad = (ge & ~y[:, None, :] & y[:, :, None]).sum(axis=(1, 2))
        denom = n_pos * n_neg
        rl[rows] = np.where(denom > 0, bad / np.where(denom > 0, denom, 1), 0.0)
        # Coverage (sklearn): number of labels scored >= the lowest-scored relevant label.
        cov[rows] = np.where(n_pos > 0, np.where(y, rank, 0).max(axis=1), 0)
        # LRAP.
        L = (ge & y[:, None, :]).sum(axis=2)
        prec = np.where(y, L / np.maximum(rank, 1), 0.0)
        mixed = (n_pos > 0) & (n_neg > 0)
        ap[rows] = np.where(mixed, prec.sum(axis=1) / np.maximum(n_pos, 1), 1.0)
    top = np.argmax(F, axis=1)
    one_err = ~Y[np.arange(n), top]
    return {"ranking_loss": rl, "coverage_sklearn": cov, "average_precision": ap, "one_error": one_err.astype(float)}


def ranking_loss(Y: np.ndarray, F: np.ndarray) -> float:
    return float(ranking_quantities(Y, F)["ranking_loss"].mean())


def coverage_sklearn(Y: np.ndarray, F: np.ndarray) -> float:
    return float(ranking_quantities(Y, F)["coverage_sklearn"].mean())


def coverage(Y: np.ndarray, F: np.ndarray) -> float:
    cov = ranking_quantities(Y, F)["coverage_sklearn"]
    return float(np.where(cov > 0, cov - 1.0, 0.0).mean())


def average_precision(Y: np.ndarray, F: np.ndarray) -> float:
    return float(ranking_quantities(Y, F)["average_precision"].mean())


def one_error(Y: np.ndarray, F: np.ndarray) -> float:
    return float(ranking_quantities(Y, F)["one_error"].mean())


def f1_scores(Y: np.ndarray, P: np.ndarray) -> tuple[float, float]:
    Y = np.asarray(Y, bool)
    P = np.asarray(P, bool)
    tp = (Y & P).sum(axis=0).astype(float)
    fp = (~Y & P).sum(axis=0).astype(float)
    fn = (Y & ~P).sum(axis=0).astype(float)
    micro_den = 2 * tp.sum() + fp.sum() + fn.sum()
    micro = 2 * tp.sum() / micro_den if micro_den > 0 else 0.0
    den = 2 * tp + fp + fn
    per_label = np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)
    return float(micro), float(per_label.mean())


def evaluate(Y: np.ndarray, F: np.ndarray, threshold: float = 0.5) -> dict[str, float]:
    """Every metric of :data:`METRICS` for labels Y (n × q, 0/1) and scores F (n × q)."""
    Y = np.asarray(Y, bool)
    F = np.asarray(F, np.float64)
    P = F > threshold
    r = ranking_quantities(Y, F)
    cov = r["coverage_sklearn"]
    micro, macro = f1_scores(Y, P)
    return {
        "hamming_loss": hamming_loss(Y, P),
        "ranking_loss": float(r["ranking_loss"].mean()),
        "one_error": float(r["one_error"].mean()),
        "coverage": float(np.where(cov > 0, cov - 1.0, 0.0).mean()),
        "coverage_sklearn": float(cov.mean()),
        "average_precision": float(r["average_precision"].mean()),
        "micro_f1": micro,
        "macro_f1": macro,
        "subset_accuracy": float(np.mean((Y == P).all(axis=1))),
    }
