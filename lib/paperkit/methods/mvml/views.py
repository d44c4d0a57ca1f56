"""Mapping every view to a common width, so that per-view classifiers stack into one tensor (Section 3.1).

The per-view maps Wᵥ of TMvML must all have the same shape (m × q) to be frontal slices of a tensor.
How the paper brings views of different widths dᵥ to a common m is not recoverable here (the paper body
could not be read), so it is an option (reconstructed):

* ``rbf`` (default): Gaussian features to m anchors, ``exp(−‖x − a‖²/(2s²))`` with s the median distance
  between the view's anchors. ``anchors='joint'`` (default) runs k-means once on all views side by side
  (each view scaled by 1/√dᵥ so that every view weighs the same) and splits each centroid into its views:
  feature j then means "closeness to prototype j" in every view, so the rows of the Wᵥ are aligned
  across views and a low rank across views is meaningful. ``anchors='per-view'`` runs k-means on each
  view separately (features are then not aligned across views).
* ``pca``: the first m principal components of each (standardised) view; ``whiten`` scales each to unit
  variance. m must not exceed any view's width (or the sample count).
* ``none``: the standardised views as they are; all views must have the same width m.

Every view is standardised first (training mean and standard deviation; constant columns are left
centred). With ``bias`` a column of ones is appended last (the tensor then has m + 1 rows); the
estimator's default (``intercept=True``) instead centres the mapped features and the labels and keeps
the intercept outside the tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from paperkit.core.errors import InputError, UsageError

MAPS = ("rbf", "pca", "none")
ANCHORS = ("joint", "per-view")


@dataclass
class ViewMap:
    kind: str = "rbf"
    m: int = 64
    anchors: str = "joint"
    whiten: bool = False
    bias: bool = True
    kmeans_max_points: int = 20000
    # fitted state, one entry per view
    means: list[np.ndarray] = field(default_factory=list)
    scales: list[np.ndarray] = field(default_factory=list)
    centers: list[np.ndarray] = field(default_factory=list)  # rbf: (m, dᵥ) anchors; pca: (dᵥ, m) loadings
    widths: list[float] = field(default_factory=list)  # rbf bandwidths; pca: unused

    def __post_init__(self) -> None:
        if self.kind not in MAPS:
            raise UsageError(f"map = {self.kind!r} is unknown; expected one of {', '.join(MAPS)}")
        if self.anchors not in ANCHORS:
            raise UsageError(f"anchors = {self.anchors!r} is unknown; expected one of {', '.join(ANCHORS)}")
        if int(self.m) < 1:
            raise UsageError(f"m = {self.m!r} is out of range; expected an integer >= 1")

    @property
    def width(self) -> int:
        """Columns of every mapped view (m features, + 1 with the bias column)."""
        return int(self.m) + int(self.bias)

    def _standardise(self, v: int, X: np.ndarray) -> np.ndarray:
        return (X - self.means[v]) / self.scales[v]

    def fit(self, views: list[np.ndarray], rng: np.random.Generator) -> ViewMap:
        n = views[0].shape[0]
        widths = [X.shape[1] for X in views]
        check_fit_size(self.kind, int(self.m), widths, n)
        if self.kind == "none":
            self.m = widths[0]
        self.means, self.scales, self.centers, self.widths = [], [], [], []
        Z = []
        for X in views:
            mu = X.mean(axis=0)
            sd = X.std(axis=0)
            sd = np.where(sd > 1e-12 * max(1.0, float(np.abs(X).max(initial=0.0))), sd, 1.0)
            self.means.append(mu)
            self.scales.append(sd)
            Z.append((X - mu) / sd)
        if self.kind == "pca":
            for Zv in Z:
                _, svals, vt = np.linalg.svd(Zv, full_matrices=False)
                load = vt[: self.m].T
                # Sign convention: the largest loading of each component is positive (deterministic output).
                signs = np.sign(load[np.argmax(np.abs(load), axis=0), np.arange(self.m)])
                load = load * np.where(signs == 0, 1.0, signs)
                if self.whiten:
                    load = load / np.maximum(svals[: self.m] / np.sqrt(n), 1e-12)
                self.centers.append(load)
                self.widths.append(1.0)
        elif self.kind == "rbf":
            if self.anchors == "joint":
                joint = np.hstack([Zv / np.sqrt(Zv.shape[1]) for Zv in Z])
                cent = _kmeans(joint, self.m, rng, self.kmeans_max_points)
                start = 0
                for Zv in Z:
                    d = Zv.shape[1]
                    self.centers.append(cent[:, start:start + d] * np.sqrt(d))
                    start += d
            else:
                for Zv in Z:
                    self.centers.append(_kmeans(Zv, self.m, rng, self.kmeans_max_points))
            for c in self.centers:
                self.widths.append(_median_distance(c))
        else:
            for Zv in Z:
                self.centers.append(np.zeros((0, Zv.shape[1])))
                self.widths.append(1.0)
        return self

    def transform(self, views: list[np.ndarray]) -> list[np.ndarray]:
        if len(views) != len(self.means):
            raise InputError(f"got {len(views)} views; the model was fitted on {len(self.means)}")
        out = []
        for v, X in enumerate(views):
            if X.shape[1] != self.means[v].shape[0]:
                raise InputError(f"view {v} (0-based) has {X.shape[1]} columns; the model was fitted with "
                                 f"{self.means[v].shape[0]}")
            Z = self._standardise(v, X)
            if self.kind == "pca":
                F = Z @ self.centers[v]
            elif self.kind == "rbf":
                c = self.centers[v]
                d2 = np.maximum((Z * Z).sum(1)[:, None] - 2.0 * Z @ c.T + (c * c).sum(1)[None, :], 0.0)
                F = np.exp(-d2 / (2.0 * self.widths[v] ** 2))
            else:
                F = Z
            out.append(np.hstack([F, np.ones((X.shape[0], 1))]) if self.bias else F)
        return out

    def to_arrays(self, prefix: str = "map_") -> dict[str, np.ndarray]:
        a: dict[str, np.ndarray] = {}
        for v in range(len(self.means)):
            a[f"{prefix}mean_{v}"] = self.means[v]
            a[f"{prefix}scale_{v}"] = self.scales[v]
            a[f"{prefix}center_{v}"] = self.centers[v]
        a[f"{prefix}widths"] = np.asarray(self.widths, dtype=np.float64)
        return a

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray], *, kind: str, m: int, anchors: str, whiten: bool, bias: bool,
                    n_views: int, prefix: str = "map_") -> ViewMap:
        vm = cls(kind=kind, m=m, anchors=anchors, whiten=whiten, bias=bias)
        vm.means = [a[f"{prefix}mean_{v}"] for v in range(n_views)]
        vm.scales = [a[f"{prefix}scale_{v}"] for v in range(n_views)]
        vm.centers = [a[f"{prefix}center_{v}"] for v in range(n_views)]
        vm.widths = [float(w) for w in a[f"{prefix}widths"]]
        return vm


def check_fit_size(kind: str, m: int, widths: list[int], n: int) -> None:
    """InputError unless a ``kind`` map of width ``m`` can be fitted on ``n`` samples of views this wide."""
    if kind == "none" and len(set(widths)) > 1:
        raise InputError(f"map 'none' needs views of equal width; got widths {widths}; use --map rbf or pca")
    if kind == "pca" and m > min(min(widths), n):
        raise InputError(f"m = {m} is too large for PCA: the narrowest view has {min(widths)} columns "
                         f"and there are {n} training samples; use m <= {min(min(widths), n)} or --map rbf")
    if kind == "rbf" and m > n:
        raise InputError(f"m = {m} anchors need at least {m} training samples; got {n}")


def _kmeans(Z: np.ndarray, k: int, rng: np.random.Generator, max_points: int) -> np.ndarray:
    """k-means centroids (scikit-learn, seeded; fitted on at most ``max_points`` sampled rows)."""
    from sklearn.cluster import KMeans

    if Z.shape[0] > max_points:
        Z = Z[np.sort(rng.choice(Z.shape[0], max_points, replace=False))]
    seed = int(rng.integers(0, 2**31 - 1))
    km = KMeans(n_clusters=k, n_init=1, max_iter=100, random_state=seed).fit(Z)
    return np.asarray(km.cluster_centers_, dtype=np.float64)


def _median_distance(c: np.ndarray) -> float:
    """Median pairwise distance between anchors (1.0 when it is zero or there is one anchor)."""
    if c.shape[0] < 2:
        return 1.0
    d2 = np.maximum((c * c).sum(1)[:, None] - 2.0 * c @ c.T + (c * c).sum(1)[None, :], 0.0)
    iu = np.triu_indices(c.shape[0], 1)
    med = float(np.median(np.sqrt(d2[iu])))
    return med if med > 1e-12 else 1.0
