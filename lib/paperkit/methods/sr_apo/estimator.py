"""A scikit-learn style front: ``APOFront().fit(X, y)``, ``.front_``, ``.predict(X, length=L)``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.methods.sr_apo.front import apo_front, front_rows, parse_parameters
from paperkit.methods.sr_apo.grammar import parse_official
from paperkit.methods.sr_apo.search import NUMBA_METHOD, PAPER_SEEDS, FitOptions, SearchResult, search


class APOFront:
    """Exhaustive search of the paper's grammar; the APO front over the given methods and seeds.

    Parameters: ``head`` (K-expression head length), ``engine`` ('numba' or 'scipy'), ``methods``
    (scipy optimiser names, or 'LM' for the numba engine), ``seeds`` (start points
    ``numpy.random.seed(s); 2 * rand(k) - 1``), ``jobs`` (threads/processes; 0 = all cores).
    After ``fit``: ``front_`` (length → row with R2, MSE, expression, parameters, method, seed),
    ``lengths_``, ``result_`` (per-run summaries).
    """

    def __init__(self, head: int = 3, engine: str = "numba", methods: Sequence[str] | None = None,
                 seeds: Sequence[int] = (PAPER_SEEDS[0],), jobs: int = 1, max_iter: int = 200,
                 limit: int | None = 20_000_000) -> None:
        self.head = head
        self.engine = engine
        self.methods = methods
        self.seeds = seeds
        self.jobs = jobs
        self.max_iter = max_iter
        self.limit = limit

    def fit(self, X, y, feature_names: Sequence[str] | None = None) -> APOFront:
        X = np.asarray(X, dtype=np.float64)
        methods = self.methods or ((NUMBA_METHOD,) if self.engine == "numba" else ("BFGS",))
        result: SearchResult = search(X, y, head=self.head, engine=self.engine, methods=methods, seeds=self.seeds,
                                      options=FitOptions(max_iter=self.max_iter, jobs=self.jobs), limit=self.limit,
                                      feature_names=list(feature_names) if feature_names else None)
        rows = [dict(r, method=run.method, seed=run.seed, head=self.head)
                for run in result.runs for r in run.summary.values()]
        self.front_ = apo_front(rows)
        self.lengths_ = sorted(self.front_)
        self.result_ = result
        self.feature_names_ = list(feature_names) if feature_names else None
        self.n_features_in_ = X.shape[1]
        self.x_mean_ = X.mean(axis=0)
        self.x_std_ = X.std(axis=0)
        y = np.asarray(y, dtype=np.float64)
        self.y_mean_ = float(np.mean(y))
        self.y_std_ = float(np.std(y))
        from paperkit.methods.sr_apo.formula import Standardisation

        self.standardisation_ = Standardisation.of(X, y, self.feature_names_ or [f"x{j}" for j in range(X.shape[1])],
                                                   "y")
        return self

    def front_table(self, *, simplify: bool = True, latex: bool = False) -> list[dict]:
        self._check_fitted()
        return front_rows(self.front_, self.feature_names_, simplify=simplify, latex=latex,
                          standardisation=self.standardisation_)

    def predict(self, X, length: int | None = None) -> np.ndarray:
        """Predictions in the target's units of the front expression of ``length`` (default: the longest)."""
        from paperkit.methods.sr_apo.kernels import evaluate

        self._check_fitted()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise InputError(f"X has shape {X.shape}; expected (rows, {self.n_features_in_})")
        L = self.lengths_[-1] if length is None else int(length)
        if L not in self.front_:
            raise UsageError(f"length {L} is not on the front; expected one of {self.lengths_}")
        row = self.front_[L]
        tokens = np.asarray(parse_official(row["EquationStructure"]), dtype=np.int64)
        theta = parse_parameters(row["EquationParameters"])
        Zt = np.ascontiguousarray(((X - self.x_mean_) / self.x_std_).T)
        z = evaluate(tokens, Zt, theta if theta.size else np.zeros(1))
        return z * self.y_std_ + self.y_mean_

    def score(self, X, y, length: int | None = None) -> float:
        y = np.asarray(y, dtype=np.float64)
        p = self.predict(X, length)
        return float(1.0 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2))

    def _check_fitted(self) -> None:
        if not hasattr(self, "front_"):
            raise UsageError("APOFront is not fitted; call fit(X, y) first")
