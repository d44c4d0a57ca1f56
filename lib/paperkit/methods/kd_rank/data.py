"""Data the distillation runs use, all offline (the paper's CIFAR-100/ImageNet do not fit 2 CPUs):

* ``synth100`` — a hierarchical Gaussian mixture like CIFAR-100's label structure: 20 super-class
  centres, 5 classes around each (100 classes), 64-d samples around the class centres. Classes of one
  super-class overlap, so a good teacher's logits carry graded "dark knowledge" about siblings.
* ``digits`` — scikit-learn's bundled 8×8 digits (10 classes), standardised, a fixed stratified split.
* ``npy:DIR`` — your own features and labels: ``X_train.npy``, ``y_train.npy``, ``X_test.npy``,
  ``y_test.npy`` (labels 0..C−1), optionally the teacher's logits ``teacher_train.npy`` and
  ``teacher_test.npy`` (the logits-only mode: distil from a teacher you ran elsewhere).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paperkit.core.errors import ConfigError, InputError

DATA_FILES = ("X_train.npy", "y_train.npy", "X_test.npy", "y_test.npy")
TEACHER_FILES = ("teacher_train.npy", "teacher_test.npy")


@dataclass
class DistillData:
    name: str
    X_train: np.ndarray   # float32 (n, d)
    y_train: np.ndarray   # int64 (n,)
    X_test: np.ndarray
    y_test: np.ndarray
    n_classes: int
    teacher_train: np.ndarray | None = None   # given teacher logits (logits-only mode)
    teacher_test: np.ndarray | None = None
    files: tuple[str, ...] = ()

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])


def synth100(*, train_per_class: int = 200, test_per_class: int = 100, dim: int = 64, n_super: int = 20,
             per_super: int = 5, super_scale: float = 1.0, class_scale: float = 0.55, noise: float = 1.25,
             seed: int = 0) -> DistillData:
    """The hierarchical Gaussian mixture; the same seed gives the same arrays (the split is fixed by it)."""
    if train_per_class < 1 or test_per_class < 1:
        raise ConfigError("synth100 needs at least 1 train and 1 test sample per class")
    rng = np.random.default_rng(seed)
    C = n_super * per_super
    supers = rng.normal(0.0, super_scale, size=(n_super, dim))
    centres = np.repeat(supers, per_super, axis=0) + rng.normal(0.0, class_scale, size=(C, dim))

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.repeat(np.arange(C), n)
        X = centres[y] + rng.normal(0.0, noise, size=(len(y), dim))
        perm = rng.permutation(len(y))
        return X[perm].astype(np.float32), y[perm].astype(np.int64)

    Xtr, ytr = draw(train_per_class)
    Xte, yte = draw(test_per_class)
    return DistillData("synth100", Xtr, ytr, Xte, yte, C)


def digits(*, test_fraction: float = 0.3, seed: int = 0) -> DistillData:
    """sklearn digits, a stratified split fixed by ``seed``, features standardised on the train part."""
    from sklearn.model_selection import train_test_split

    from paperkit.datasets.bundled import load_bundled

    ds = load_bundled("digits")
    Xtr, Xte, ytr, yte = train_test_split(ds.X, ds.y, test_size=test_fraction, random_state=seed, stratify=ds.y)
    mu, sd = Xtr.mean(0), Xtr.std(0) + 1e-6
    return DistillData("digits", ((Xtr - mu) / sd).astype(np.float32), ytr.astype(np.int64),
                       ((Xte - mu) / sd).astype(np.float32), yte.astype(np.int64), 10)


def _labels(y: np.ndarray, name: str) -> np.ndarray:
    if y.ndim != 1:
        raise InputError(f"{name}: labels have shape {y.shape}; expected a 1-D array")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.issubdtype(y.dtype, np.floating):
            raise InputError(f"{name}: labels must be integers 0..C-1 (got dtype {y.dtype})")
        bad = np.flatnonzero(~np.isfinite(y) | (y != np.round(y)))
        if len(bad):  # integral floats (1.0) are fine; 1.5 is not a class, never truncate it
            raise InputError(f"{name}: labels must be integers 0..C-1; row {bad[0]} (0-based) holds {y[bad[0]].item()!r}"
                             f" ({len(bad)} such rows)")
    if len(y) and y.min() < 0:
        raise InputError(f"{name}: labels must be integers 0..C-1; row {int(np.argmin(y))} (0-based) holds "
                         f"{int(y.min())}")
    return y.astype(np.int64)


def from_npy_dir(directory: str | os.PathLike) -> DistillData:
    """Features, labels and optional teacher logits from a folder of ``.npy`` files (see module doc)."""
    from paperkit.core.io import read_array
    from paperkit.core.readers import read_numeric

    d = Path(directory)
    if not d.is_dir():
        raise InputError(f"{directory}: no such folder; expected a folder with {', '.join(DATA_FILES)}")
    missing = [f for f in DATA_FILES if not (d / f).is_file()]
    if missing:
        raise InputError(f"{directory}: missing {', '.join(missing)}; expected {', '.join(DATA_FILES)}")
    # float32 is what training computes in: values it cannot hold (or square) are refused here, not NaN later
    arrs = {f: read_array(d / f) for f in DATA_FILES if f.startswith("y_")}
    X_train, X_test = (read_numeric(d / f, "features", ndim=2, dtype=np.float32) for f in ("X_train.npy", "X_test.npy"))
    if X_train.shape[1] != X_test.shape[1]:
        raise InputError(f"{directory}: X_train has {X_train.shape[1]} features but X_test {X_test.shape[1]}")
    y_train = _labels(arrs["y_train.npy"], str(d / "y_train.npy"))
    y_test = _labels(arrs["y_test.npy"], str(d / "y_test.npy"))
    for Xn, yn, X, y in (("X_train", "y_train", X_train, y_train), ("X_test", "y_test", X_test, y_test)):
        if len(X) != len(y):
            raise InputError(f"{directory}: {Xn}.npy has {len(X)} rows but {yn}.npy {len(y)}; expected the same")
    C = int(max(y_train.max(), y_test.max())) + 1
    teacher = [d / f for f in TEACHER_FILES if (d / f).is_file()]
    t_train = t_test = None
    if len(teacher) == 1:
        raise InputError(f"{directory}: has {teacher[0].name} but not its pair; expected both {' and '.join(TEACHER_FILES)}")
    if teacher:
        t_train, t_test = (read_numeric(p, "teacher logits", ndim=2, dtype=np.float32) for p in teacher)
        for path, t, X in ((teacher[0], t_train, X_train), (teacher[1], t_test, X_test)):
            if t.shape[0] != len(X):
                raise InputError(f"{path}: shape {t.shape}; expected ({len(X)}, classes) to match the features")
        if t_train.shape[1] != t_test.shape[1]:
            raise InputError(f"{directory}: teacher logits have {t_train.shape[1]} and {t_test.shape[1]} classes")
        if t_train.shape[1] < C:
            raise InputError(f"{directory}: teacher logits have {t_train.shape[1]} classes but the labels go up to "
                             f"{C - 1}")
        C = int(t_train.shape[1])
        t_train, t_test = t_train.astype(np.float32), t_test.astype(np.float32)
    if C < 2:
        raise InputError(f"{directory}: labels hold a single class; expected at least 2")
    files = tuple(str(d / f) for f in DATA_FILES) + tuple(str(p) for p in teacher)
    return DistillData(f"npy:{d}", X_train.astype(np.float32), y_train, X_test.astype(np.float32), y_test, C,
                       t_train, t_test, files)


def load_data(spec: str, *, train_per_class: int = 200, test_per_class: int = 100, data_seed: int = 0
              ) -> DistillData:
    """``synth100``, ``digits`` or ``npy:DIR``."""
    if spec == "synth100":
        return synth100(train_per_class=train_per_class, test_per_class=test_per_class, seed=data_seed)
    if spec == "digits":
        return digits(seed=data_seed)
    if spec.startswith("npy:") and len(spec) > 4:
        return from_npy_dir(spec[4:])
    raise ConfigError(f"unknown data '{spec}'; expected synth100, digits or npy:DIR")
