"""Baselines TMvML is compared with, all on the same mapped views (they fit their own intercepts).

* ``ridge-view``: ridge per view (regularisation per label by efficient leave-one-out, scikit-learn
  RidgeCV), scores averaged over views — TMvML without the tensor penalty, tuned.
* ``ridge-concat``: one RidgeCV on the views side by side.
* ``br-logistic``: binary relevance, one scikit-learn LogisticRegression per label on the views side by
  side (probabilities as scores).
* ``mlknn``: ML-kNN (Zhang & Zhou, Pattern Recognition 2007) written here (scikit-multilearn's MLkNN
  no longer runs on current scikit-learn): Bayesian posteriors from neighbour label counts, Laplace
  smoothing s.

Every baseline returns scores for which ``> 0.5`` is the predicted label set.
"""

from __future__ import annotations

import numpy as np

BASELINES = ("ridge-view", "ridge-concat", "br-logistic", "mlknn")
RIDGE_ALPHAS = np.logspace(-3, 4, 15)


def _features(mapped: list[np.ndarray]) -> list[np.ndarray]:
    # A constant bias column (intercept=False maps) carries nothing for models with their own intercept.
    return [X[:, :-1] if X.shape[1] > 1 and np.all(X[:, -1] == 1.0) else X for X in mapped]


def ridge_view(train: list[np.ndarray], Y: np.ndarray, test: list[np.ndarray]) -> np.ndarray:
    from sklearn.linear_model import RidgeCV

    scores = []
    for Xtr, Xte in zip(_features(train), _features(test), strict=True):
        model = RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=True).fit(Xtr, Y)
        scores.append(model.predict(Xte).reshape(len(Xte), -1))
    return np.mean(scores, axis=0)


def ridge_concat(train: list[np.ndarray], Y: np.ndarray, test: list[np.ndarray]) -> np.ndarray:
    from sklearn.linear_model import RidgeCV

    model = RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=True).fit(np.hstack(_features(train)), Y)
    return model.predict(np.hstack(_features(test))).reshape(len(test[0]), -1)


def br_logistic(train: list[np.ndarray], Y: np.ndarray, test: list[np.ndarray], *, C: float = 1.0,
                seed: int = 0) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.hstack(_features(train)))
    Xtr = scaler.transform(np.hstack(_features(train)))
    Xte = scaler.transform(np.hstack(_features(test)))
    out = np.empty((Xte.shape[0], Y.shape[1]))
    for j in range(Y.shape[1]):
        y = Y[:, j]
        if y.min() == y.max():  # one class only: its training frequency is the score
            out[:, j] = y[0]
            continue
        clf = LogisticRegression(C=C, max_iter=1000, random_state=seed).fit(Xtr, y)
        out[:, j] = clf.predict_proba(Xte)[:, 1]
    return out


class MLkNN:
    """ML-kNN: label j's score is P(H¹ⱼ | Eⱼ = number of the k neighbours carrying label j)."""

    def __init__(self, k: int = 10, s: float = 1.0) -> None:
        self.k = int(k)
        self.s = float(s)

    def fit(self, X: np.ndarray, Y: np.ndarray) -> MLkNN:
        from sklearn.neighbors import NearestNeighbors

        Y = np.asarray(Y, dtype=bool)
        n, q = Y.shape
        k = min(self.k, n - 1)
        self.k_ = k
        self.nn_ = NearestNeighbors(n_neighbors=k).fit(X)
        self.Y_ = Y
        s = self.s
        self.prior_ = (s + Y.sum(axis=0)) / (2 * s + n)
        # Leave-one-out neighbours of the training points: ask for k + 1 and drop each point itself.
        idx = self.nn_.kneighbors(X, n_neighbors=k + 1, return_distance=False)
        idx = np.array([[j for j in row if j != i][:k] for i, row in enumerate(idx)])
        counts = Y[idx].sum(axis=1)  # (n, q) in 0..k
        c1 = np.zeros((k + 1, q))
        c0 = np.zeros((k + 1, q))
        for j in range(q):
            c1[:, j] = np.bincount(counts[Y[:, j], j], minlength=k + 1)
            c0[:, j] = np.bincount(counts[~Y[:, j], j], minlength=k + 1)
        self.cond1_ = (s + c1) / (s * (k + 1) + c1.sum(axis=0))
        self.cond0_ = (s + c0) / (s * (k + 1) + c0.sum(axis=0))
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        idx = self.nn_.kneighbors(X, n_neighbors=self.k_, return_distance=False)
        counts = self.Y_[idx].sum(axis=1)
        cols = np.arange(counts.shape[1])
        p1 = self.prior_ * self.cond1_[counts, cols]
        p0 = (1 - self.prior_) * self.cond0_[counts, cols]
        return p1 / (p1 + p0)


def mlknn(train: list[np.ndarray], Y: np.ndarray, test: list[np.ndarray], *, k: int = 10, s: float = 1.0) -> np.ndarray:
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.hstack(_features(train)))
    model = MLkNN(k=k, s=s).fit(scaler.transform(np.hstack(_features(train))), Y)
    return model.predict_proba(scaler.transform(np.hstack(_features(test))))


def run_baseline(name: str, train: list[np.ndarray], Y: np.ndarray, test: list[np.ndarray], *, seed: int = 0
                 ) -> np.ndarray:
    """Scores of baseline ``name`` on ``test`` after fitting on (``train``, ``Y``); views already mapped."""
    if name == "ridge-view":
        return ridge_view(train, Y, test)
    if name == "ridge-concat":
        return ridge_concat(train, Y, test)
    if name == "br-logistic":
        return br_logistic(train, Y, test, seed=seed)
    if name == "mlknn":
        return mlknn(train, Y, test)
    raise ValueError(f"unknown baseline {name!r}")
