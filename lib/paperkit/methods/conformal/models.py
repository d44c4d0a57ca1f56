"""Named scikit-learn models for the command line, and the paper's min-norm least squares.

``make_model("ridge", {"alpha": 10})``, ``make_model("mypkg.models:MyRegressor")``. Scale-sensitive
models (ridge, lasso, knn) are pipelines with a ``StandardScaler`` first.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from paperkit.core.errors import UsageError

REGRESSORS = ("ols", "minnorm-ols", "ridge", "lasso", "rf", "knn", "gbr")
CLASSIFIERS = ("logistic", "rf", "knn", "gbc")
# The model used when none is named: it follows the task.
DEFAULT_MODEL = {"regression": "ridge", "classification": "logistic"}


class MinNormOLS(RegressorMixin, BaseEstimator):
    """Least squares through the pseudo-inverse, ``beta = X^+ y`` (the paper's ``ols_pseudo``).

    Without an intercept by default, as in the simulation of Barber et al. (2021); well defined for
    p > n (the minimum-norm interpolating solution).
    """

    _parameter_constraints: dict = {"fit_intercept": ["boolean"]}  # for make_model's up-front check

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


def _load_class(spec: str, task: str) -> type:
    """The estimator class named ``module:Class``, resolved WITHOUT calling anything.

    Only a class that derives from scikit-learn's ``BaseEstimator`` and has ``fit`` and ``predict``
    (``predict_proba`` for classification) is accepted: a function such as ``subprocess:run`` or
    ``os:system`` is refused before it could run.
    """
    import inspect

    mod_name, _, attr = spec.partition(":")
    if not mod_name or not attr.isidentifier() or not all(part.isidentifier() for part in mod_name.split(".")):
        raise UsageError(f"model '{spec}' is not a known name or 'module:Class'")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as e:
        raise UsageError(f"model '{spec}': cannot import module '{mod_name}' ({e})") from None
    try:
        obj = getattr(module, attr)  # looked up, never called
    except AttributeError:
        raise UsageError(f"model '{spec}': module '{mod_name}' has no attribute '{attr}'") from None
    kind = "regressor" if task == "regression" else "classifier with predict_proba"
    if not inspect.isclass(obj) or not issubclass(obj, BaseEstimator):
        raise UsageError(f"model '{spec}' is not a scikit-learn estimator class (a subclass of "
                         f"sklearn.base.BaseEstimator); expected a {kind}")
    need = ("fit", "predict") if task == "regression" else ("fit", "predict_proba")
    missing = [m for m in need if not callable(getattr(obj, m, None))]
    if missing:
        raise UsageError(f"model '{spec}' has no {', '.join(missing)} method; expected a scikit-learn {kind}")
    return obj


def _check_params(est: Any, name: str) -> None:
    """scikit-learn validates hyper-parameters only at fit; check them now (exit 2 naming the parameter)."""
    from sklearn.utils._param_validation import InvalidParameterError

    validate = getattr(est, "_validate_params", None)
    if validate is None:
        return
    try:
        validate()
    except InvalidParameterError as e:
        raise UsageError(f"model '{name}': {e}") from None


@contextmanager
def check_params_at_fit(name: str, params: dict[str, Any] | None = None) -> Iterator[None]:
    """Turn scikit-learn's parameter errors raised while fitting into a one-line usage error.

    Some parameters can only be checked against the data (``n_neighbors`` larger than a fold); when
    the user set parameters, a ``ValueError`` from the estimator names them.
    """
    from sklearn.utils._param_validation import InvalidParameterError

    try:
        yield
    except InvalidParameterError as e:
        raise UsageError(f"model '{name}': {e}") from None
    except ValueError as e:
        if not params:
            raise
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise UsageError(f"model '{name}' with {shown} failed on this data: {e}") from None


def make_model(name: str, params: dict[str, Any] | None = None, *, task: str = "regression",
               seed: int = 0, jobs: int | None = None) -> Any:
    """A fresh estimator for ``name`` (a built-in name or ``module:Class``) with ``params`` set and checked."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    params = dict(params or {})
    names = REGRESSORS if task == "regression" else CLASSIFIERS
    if ":" in name:
        cls = _load_class(name, task)
        try:
            model = cls(**params)
        except TypeError as e:
            raise UsageError(f"model '{name}': cannot build it with {params} ({e})") from None
        _check_params(model, name)
        return model
    if name not in names:
        raise UsageError(f"unknown {task} model '{name}'; expected one of {', '.join(names)} or 'module:Class'")

    def build(cls: Any, defaults: dict[str, Any], scaled: bool = False) -> Any:
        kwargs = {**defaults, **params}
        try:
            est = cls(**kwargs)
        except TypeError as e:
            raise UsageError(f"model '{name}': invalid parameter(s) {params} ({e})") from None
        _check_params(est, name)
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
