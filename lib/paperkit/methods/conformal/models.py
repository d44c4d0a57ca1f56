"""Named scikit-learn models for the command line, and the paper's min-norm least squares.

``make_model("ridge", {"alpha": 10})``, ``make_model("mypkg.models:MyRegressor")``. Scale-sensitive
models (ridge, lasso, knn) are pipelines with a ``StandardScaler`` first.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from paperkit.core.errors import UsageError

REGRESSORS = ("ols", "minnorm-ols", "ridge", "lasso", "rf", "knn", "gbr")
CLASSIFIERS = ("logistic", "rf", "knn", "gbc")


class MinNormOLS(RegressorMixin, BaseEstimator):
    """Least squares through the pseudo-inverse, ``beta = X^+ y`` (the paper's ``ols_pseudo``).

    Without an intercept by default, as in the simulation of Barber et al. (2021); well defined for
    p > n (the minimum-norm interpolating solution).
    """

    def __init__(self, fit_intercept: bool = False):
        self.fit_intercept = fit_intercept

    def fit(self, X: Any, y: Any) -> MinNormOLS:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if self.fit_intercept:
            self.x_mean_, self.y_mean_ = X.mean(axis=0), y.mean()
            X, y = X - self.x_mean_, y - self.y_mean_
        else:
            self.x_mean_, self.y_mean_ = np.zeros(X.shape[1]), 0.0
        self.coef_ = np.linalg.pinv(X) @ y
        return self

    def predict(self, X: Any) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return (X - self.x_mean_) @ self.coef_ + self.y_mean_


def _load_class(spec: str) -> Any:
    mod_name, _, cls_name = spec.partition(":")
    if not mod_name or not cls_name:
        raise UsageError(f"model '{spec}' is not a known name or 'module:Class'")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as e:
        raise UsageError(f"model '{spec}': cannot import module '{mod_name}' ({e})") from None
    try:
        return getattr(module, cls_name)
    except AttributeError:
        raise UsageError(f"model '{spec}': module '{mod_name}' has no attribute '{cls_name}'") from None


def make_model(name: str, params: dict[str, Any] | None = None, *, task: str = "regression",
               seed: int = 0, jobs: int | None = None) -> Any:
    """A fresh estimator for ``name`` (a built-in name or ``module:Class``) with ``params`` set."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    params = dict(params or {})
    names = REGRESSORS if task == "regression" else CLASSIFIERS
    if ":" in name:
        cls = _load_class(name)
        try:
            model = cls(**params)
        except TypeError as e:
            raise UsageError(f"model '{name}': cannot build it with {params} ({e})") from None
        need = ("fit", "predict") if task == "regression" else ("fit", "predict_proba")
        missing = [m for m in need if not hasattr(model, m)]
        if missing:
            raise UsageError(f"model '{name}' has no {', '.join(missing)} method; expected a scikit-learn "
                             f"{'regressor' if task == 'regression' else 'classifier with predict_proba'}")
        return model
    if name not in names:
        raise UsageError(f"unknown {task} model '{name}'; expected one of {', '.join(names)} or 'module:Class'")

    def build(cls: Any, defaults: dict[str, Any], scaled: bool = False) -> Any:
        kwargs = {**defaults, **params}
        try:
            est = cls(**kwargs)
        except TypeError as e:
            raise UsageError(f"model '{name}': invalid parameter(s) {params} ({e})") from None
        return make_pipeline(StandardScaler(), est) if scaled else est

    from sklearn import ensemble, linear_model, neighbors

    if task == "regression":
        table = {
            "ols": (linear_model.LinearRegression, {}, False),
            "minnorm-ols": (MinNormOLS, {}, False),
            "ridge": (linear_model.Ridge, {"alpha": 1.0}, True),
            "lasso": (linear_model.Lasso, {"alpha": 0.1}, True),
            "rf": (ensemble.RandomForestRegressor, {"n_estimators": 100, "random_state": seed, "n_jobs": jobs}, False),
            "knn": (neighbors.KNeighborsRegressor, {"n_neighbors": 10}, True),
            "gbr": (ensemble.GradientBoostingRegressor, {"random_state": seed}, False),
        }
    else:
        table = {
            "logistic": (linear_model.LogisticRegression, {"max_iter": 2000}, True),
            "rf": (ensemble.RandomForestClassifier, {"n_estimators": 100, "random_state": seed, "n_jobs": jobs}, False),
            "knn": (neighbors.KNeighborsClassifier, {"n_neighbors": 10}, True),
            "gbc": (ensemble.GradientBoostingClassifier, {"random_state": seed}, False),
        }
    cls, defaults, scaled = table[name]
    return build(cls, defaults, scaled)


def parse_params(pairs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``["alpha=10", "max_depth=3"]`` -> ``{"alpha": 10, "max_depth": 3}`` (values read as YAML scalars)."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"model parameter '{pair}' is not KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key.strip()] = value
    return out
