"""``TMvML``: the scikit-learn style estimator (map views → ADMM on the tensor classifier → predict).

    model = TMvML(lam=1.0, delta=1.0).fit([X1, X2, X3], Y)
    F = model.decision_function([T1, T2, T3])   # mean over views of Xᵥ Wᵥ  (Section 3.4, reconstructed)

Intercept (reconstructed, option ``intercept``): by default the mapped features and the labels are
centred on their training means and the label means added back to the scores, so the tensor holds
only feature weights; ``intercept=False`` appends a bias column to every view instead (its weights are
then part of the tensor and of its penalty).
    labels = model.predict([T1, T2, T3])        # F > threshold (targets are 0/1, threshold 0.5)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.validate import check_finite
from paperkit.methods.mvml import solver as _solver
from paperkit.methods.mvml.tensor import PENALTIES, PROX_METHODS
from paperkit.methods.mvml.views import ViewMap

log = logging.getLogger(__name__)

SOLVERS = ("numba", "numpy")
INITS = ("ridge", "zeros")


def check_views(views: list[np.ndarray], names: list[str] | None = None, *, n_rows: int | None = None
                ) -> list[np.ndarray]:
    """2-D finite float arrays with one row count; errors name the view."""
    if not views:
        raise InputError("no views given; expected at least one")
    names = names or [f"view {v}" for v in range(len(views))]
    out = []
    for X, name in zip(views, names, strict=True):
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise InputError(f"{name}: dtype {X.dtype} is not numeric; expected numbers")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2:
            raise InputError(f"{name}: has shape {X.shape}; expected a 2-D array (samples × features)")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise InputError(f"{name}: is empty (shape {X.shape}); expected samples × features")
        check_finite(X, "the array", name)
        out.append(X)
    rows = {name: X.shape[0] for X, name in zip(out, names, strict=True)}
    if n_rows is not None:
        rows["labels"] = n_rows
    if len(set(rows.values())) > 1:
        shown = ", ".join(f"{k}: {v}" for k, v in rows.items())
        raise InputError(f"views have different numbers of samples ({shown}); expected the same")
    return out


def check_labels(Y: np.ndarray, name: str = "labels") -> np.ndarray:
    """A 0/1 float matrix (n × q); a 1-D vector is one label."""
    Y = np.asarray(Y)
    if Y.dtype.kind not in "biuf":
        raise InputError(f"{name}: dtype {Y.dtype} is not numeric; expected 0/1 labels")
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] == 0 or Y.shape[1] == 0:
        raise InputError(f"{name}: has shape {Y.shape}; expected a non-empty 2-D array (samples × labels)")
    check_finite(Y, "the array", name)
    bad = ~np.isin(Y, (0.0, 1.0))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"{name}: {int(bad.sum())} value(s) are not 0 or 1 (first at row {i}, label {j}, 0-based: "
                         f"{float(Y[i, j])!r}); expected 0/1 labels")
    return Y



# What the scores of TMvML (and of its ablations and the ridge baselines) are: written into model.npz,
# metrics.json and the manifests, and said in --help.
SCORES_ARE = ("least-squares scores: F = (1/V) sum_v X_v W_v + label mean, a ridge-type fit to the 0/1 labels; "
              "higher means more likely, a label is predicted when F > threshold (0.5), but F is not a "
              "probability (it can leave [0, 1] and is not calibrated)")

@dataclass
class TMvML:
    """Tensorized multi-view multi-label classifier with a Laplace Tensor Rank penalty."""

    map: str = "rbf"
    m: int = 64
    anchors: str = "joint"
    whiten: bool = False
    intercept: bool = True
    penalty: str = "ltr"
    lam: float = 1.0
    delta: float = 10.0
    gamma: float = 1e-5
    prox: str = "exact"
    reweight_passes: int = 2
    mu0: float = 1e-3
    rho: float = 1.2
    mu_max: float = 1e8
    max_iter: int = 200
    tol: float = 1e-6
    init: str = "ridge"
    threshold: float = 0.5
    solver: str = "numba"
    seed: int = 0
    n_jobs: int = 1

    def __post_init__(self) -> None:
        self.check_params()

    def check_params(self) -> None:
        from paperkit.core.validate import check_range

        if self.penalty not in PENALTIES:
            raise UsageError(f"penalty = {self.penalty!r} is unknown; expected one of {', '.join(PENALTIES)}")
        if self.prox not in PROX_METHODS:
            raise UsageError(f"prox = {self.prox!r} is unknown; expected one of {', '.join(PROX_METHODS)}")
        if self.init not in INITS:
            raise UsageError(f"init = {self.init!r} is unknown; expected one of {', '.join(INITS)}")
        if self.solver not in SOLVERS:
            raise UsageError(f"solver = {self.solver!r} is unknown; expected one of {', '.join(SOLVERS)}")
        for name in ("lam", "delta", "gamma", "mu0", "rho", "mu_max", "tol", "threshold"):
            if not np.isfinite(getattr(self, name)):
                raise UsageError(f"{name} = {float(getattr(self, name))!r} is not finite; expected a number")
        if self.penalty != "none":
            check_range("lam", self.lam, 0.0, low_open=True)
        if self.penalty == "ltr":
            check_range("delta", self.delta, 0.0, low_open=True)
        check_range("gamma", self.gamma, 0.0)
        check_range("mu0", self.mu0, 0.0, low_open=True)
        check_range("rho", self.rho, 1.0)
        check_range("mu_max", self.mu_max, self.mu0)
        check_range("max_iter", self.max_iter, 1)
        check_range("tol", self.tol, 0.0)
        check_range("reweight_passes", self.reweight_passes, 1)
        check_range("n_jobs", self.n_jobs, 0)

    def settings(self) -> _solver.Settings:
        return _solver.Settings(penalty=self.penalty, lam=float(self.lam), delta=float(self.delta),
                                gamma=float(self.gamma), prox=self.prox, reweight_passes=int(self.reweight_passes),
                                mu0=float(self.mu0), rho=float(self.rho), mu_max=float(self.mu_max),
                                max_iter=int(self.max_iter), tol=float(self.tol), init=self.init)

    # ------------------------------------------------------------------------------------------ fit
    def fit(self, views: list[np.ndarray], Y: np.ndarray, *, callback: Callable[[_solver.State], None] | None = None,
            state: _solver.State | None = None, view_names: list[str] | None = None) -> TMvML:
        """Fit on training views (each n × dᵥ) and 0/1 labels Y (n × q).

        ``state`` continues an interrupted solve (same data and settings); ``callback`` sees the solver
        state every few iterations (progress bars, checkpoints). Native thread pools (BLAS, OpenMP in
        k-means) are limited to ``n_jobs`` threads (0: no limit) while fitting: the problems are small
        and, on a shared machine, extra threads made the mapping 6× slower in our measurements.
        """
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=int(self.n_jobs) if self.n_jobs else None):
            return self._fit(views, Y, callback=callback, state=state, view_names=view_names)

    def _fit(self, views: list[np.ndarray], Y: np.ndarray, *, callback: Callable[[_solver.State], None] | None,
             state: _solver.State | None, view_names: list[str] | None) -> TMvML:
        self.check_params()
        Y = check_labels(Y)
        views = check_views(views, view_names, n_rows=Y.shape[0])
        constant = np.flatnonzero(Y.min(axis=0) == Y.max(axis=0))
        self.constant_labels_ = constant
        if constant.size:
            log.warning("label column(s) %s (0-based) are constant in the training data; they are scored with "
                        "that constant", ", ".join(str(j) for j in constant))
        self.constant_values_ = Y[0, constant].copy()
        rng = np.random.default_rng(self.seed)
        self.view_map_ = ViewMap(kind=self.map, m=int(self.m), anchors=self.anchors, whiten=self.whiten,
                                 bias=not self.intercept).fit(views, rng)
        mapped = self.view_map_.transform(views)
        if self.intercept:
            self.feature_means_ = np.stack([X.mean(axis=0) for X in mapped])
            self.label_means_ = Y.mean(axis=0)
            mapped = [X - self.feature_means_[v] for v, X in enumerate(mapped)]
            Yc = Y - self.label_means_
        else:
            self.feature_means_ = np.zeros((len(mapped), mapped[0].shape[1]))
            self.label_means_ = np.zeros(Y.shape[1])
            Yc = Y
        problem = _solver.Problem.from_views(mapped, Yc)
        st = _solver.solve(problem, self.settings(), solver=self.solver, state=state, callback=callback)
        self.state_ = st
        self.W_ = st.W.copy()
        self.n_iter_ = st.iteration
        self.converged_ = st.converged
        self.n_views_ = len(views)
        self.n_labels_ = Y.shape[1]
        self.view_widths_ = [X.shape[1] for X in views]
        if self.penalty != "none" and not st.converged:
            log.warning("ADMM stopped after %d iterations with primal residual %.3g (tolerance %.3g)",
                        st.iteration, st.trace[st.iteration - 1, 3] if st.iteration else float("nan"), self.tol)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "W_"):
            raise UsageError("this TMvML model is not fitted yet; call fit first")

    def transform_views(self, views: list[np.ndarray]) -> list[np.ndarray]:
        self._check_fitted()
        return self.view_map_.transform(check_views(views))

    def view_scores(self, views: list[np.ndarray]) -> np.ndarray:
        """Per-view scores (Xᵥ − x̄ᵥ)Wᵥ + ȳ (or XᵥWᵥ with ``intercept=False``), shape (V, n, q)."""
        mapped = self.transform_views(views)
        return np.stack([(X - self.feature_means_[v]) @ self.W_[v] + self.label_means_ for v, X in enumerate(mapped)])

    def decision_function(self, views: list[np.ndarray]) -> np.ndarray:
        """Scores F = (1/V) Σᵥ XᵥWᵥ (n × q); a label constant in training gets that constant."""
        F = self.view_scores(views).mean(axis=0)
        if len(self.constant_labels_):
            F[:, self.constant_labels_] = self.constant_values_
        return F

    def predict(self, views: list[np.ndarray]) -> np.ndarray:
        return (self.decision_function(views) > self.threshold).astype(np.int8)

    @property
    def calibrated(self) -> bool:
        return getattr(self, "platt_", None) is not None

    def predict_proba(self, views: list[np.ndarray]) -> np.ndarray:
        """Calibrated probabilities (n × q) from the Platt sigmoids set by ``mvml-fit --calibrate``
        (:mod:`paperkit.methods.mvml.calibration`); the raw scores are not probabilities."""
        return self.probabilities(self.decision_function(views))

    def probabilities(self, F: np.ndarray) -> np.ndarray:
        from paperkit.core.errors import UsageError
        from paperkit.methods.mvml.calibration import apply_platt

        if not self.calibrated:
            raise UsageError("the model is not calibrated (its scores are not probabilities); fit it with "
                             "mvml-fit --calibrate")
        return apply_platt(F, *self.platt_)

    def rotated_tensor(self) -> np.ndarray:
        """The fitted classifier as the rotated tensor m × V × q (m + 1 rows with ``intercept=False``)."""
        from paperkit.methods.mvml.tensor import rotate

        self._check_fitted()
        return rotate(self.W_)

    # ------------------------------------------------------------------------------------ save/load
    def params(self) -> dict:
        return asdict(self)

    def to_arrays(self) -> dict[str, np.ndarray]:
        self._check_fitted()
        meta = {"format": "paperkit.mvml/1", "params": self.params(), "n_views": self.n_views_,
                "n_labels": self.n_labels_, "view_widths": self.view_widths_, "n_iter": self.n_iter_,
                "converged": self.converged_, "mapped_width": int(self.view_map_.m),
                "label_names": getattr(self, "label_names_", None), "scores": SCORES_ARE}
        a = {"W": self.W_, "constant_labels": np.asarray(self.constant_labels_, dtype=np.int64),
             "constant_values": np.asarray(self.constant_values_, dtype=np.float64), "feature_means": self.feature_means_, "label_means": self.label_means_, "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)}
        a.update(self.view_map_.to_arrays())
        if self.calibrated:
            a["platt_a"], a["platt_b"] = (np.asarray(x, dtype=np.float64) for x in self.platt_)
        return a

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray], source: str = "model") -> TMvML:
        try:
            meta = json.loads(bytes(np.asarray(a["meta"], dtype=np.uint8)).decode())
            if meta.get("format") != "paperkit.mvml/1":
                raise ValueError(f"format {meta.get('format')!r}")
            model = cls(**meta["params"])
            model.view_map_ = ViewMap.from_arrays(a, kind=model.map, m=int(meta["mapped_width"]), anchors=model.anchors,
                                                  whiten=model.whiten, bias=not model.intercept,
                                                  n_views=int(meta["n_views"]))
            model.W_ = np.asarray(a["W"], dtype=np.float64)
            model.feature_means_ = np.asarray(a["feature_means"], dtype=np.float64)
            model.label_means_ = np.asarray(a["label_means"], dtype=np.float64)
        except (KeyError, ValueError, TypeError) as e:
            raise InputError(f"{source}: not a paperkit mvml model ({e}); expected the model.npz of mvml-fit") from None
        model.n_views_ = int(meta["n_views"])
        model.n_labels_ = int(meta["n_labels"])
        model.view_widths_ = list(meta["view_widths"])
        model.n_iter_ = int(meta["n_iter"])
        model.converged_ = bool(meta["converged"])
        model.constant_labels_ = np.asarray(a.get("constant_labels", np.zeros(0)), dtype=np.int64)
        model.constant_values_ = np.asarray(a.get("constant_values", np.zeros(0)), dtype=np.float64)
        names = meta.get("label_names")
        model.label_names_ = list(names) if isinstance(names, list) and len(names) == model.n_labels_ else None
        model.platt_ = None
        if "platt_a" in a and "platt_b" in a:
            pa, pb = (np.asarray(a[k], dtype=np.float64).ravel() for k in ("platt_a", "platt_b"))
            if pa.size != model.n_labels_ or pb.size != model.n_labels_ or not np.all(np.isfinite(np.r_[pa, pb])):
                raise InputError(f"{source}: its calibration (platt_a, platt_b) does not fit its {model.n_labels_} "
                                 "labels; expected the model.npz of mvml-fit")
            model.platt_ = (pa, pb)
        return model
