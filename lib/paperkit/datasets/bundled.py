"""The datasets scikit-learn ships inside its wheel (no download), as plain arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import InputError

# name -> (sklearn loader, task)
BUNDLED = {
    "diabetes": ("load_diabetes", "regression"),
    "digits": ("load_digits", "classification"),
    "iris": ("load_iris", "classification"),
    "wine": ("load_wine", "classification"),
    "breast_cancer": ("load_breast_cancer", "classification"),
    "linnerud": ("load_linnerud", "multi-output regression"),
}


@dataclass(frozen=True)
class Dataset:
    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    target_names: list[str]
    task: str

    def __len__(self) -> int:
        return len(self.X)


def load_bundled(name: str, *, scaled: bool = False) -> Dataset:
    """Load one of :data:`BUNDLED`. ``scaled=False`` gives diabetes in its original units."""
    import sklearn.datasets as skd

    key = name.replace("-", "_").lower()
    if key not in BUNDLED:
        raise InputError(f"unknown bundled dataset '{name}'; expected one of {', '.join(BUNDLED)}")
    loader, task = BUNDLED[key]
    kwargs = {"scaled": scaled} if key == "diabetes" else {}
    bunch = getattr(skd, loader)(**kwargs)
    X = np.asarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target)
    y = y.astype(np.int64) if task == "classification" else y.astype(np.float64)
    features = [str(f) for f in getattr(bunch, "feature_names", [f"x{i}" for i in range(X.shape[1])])]
    targets = [str(t) for t in getattr(bunch, "target_names", ["target"])]
    return Dataset(key, X, y, features, targets, task)
