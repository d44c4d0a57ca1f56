# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""Orchestration of symeq-basis and symeq-fit: settings (the single source of defaults), prepare (read and
validate every input before a run dir exists), execute (one ``run.cached`` stage per seed × size × model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from paperkit.core import io, resources
from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.core.seeding import spawn_seeds
from paperkit.core.validate import check_finite
from paperkit.methods.symeq import diagram, orbit
from paperkit.methods.symeq.symtensor import asymmetry, n_from_packed, packed_size, symmetrize, unpack
from paperkit.methods.symeq.tasks import TASKS, make_task, task_orders
from paperkit.methods.symeq.train import MODELS

MAX_ORDER = 6
KINDS = ("orbit", "diagram")
BASES = ("diagram", "orbit")
MAX_DENSE_ELEMENTS = 50_000_000
MAX_CHANGE_OF_BASIS_LABELS = 200
SYMMETRY_TOL = 1e-6


def _check_orders(k: int, l: int) -> None:
    for name, v in (("--k", k), ("--l", l)):
        if v < 0:
            raise UsageError(f"{name} {v}: expected a tensor order in 0..{MAX_ORDER}")
        if v > MAX_ORDER:
            raise UsageError(f"{name} {v}: tensor orders above {MAX_ORDER} are not supported")


def _check_n(n: int, what: str = "--n") -> None:
    if n < 1:
        raise UsageError(f"{what} {n}: n must be at least 1")


# -------------------------------------------------------------------------------------------- basis
@dataclass(frozen=True)
class BasisSettings:
    k: int = 2
    l: int = 2
    n: int = 5
    kind: str = "orbit"


def dense_elements(k: int, l: int, n: int) -> int:
    return len(orbit.orbit_labels(k, l, n)) * packed_size(n, k) * packed_size(n, l)


def prepare_basis(s: BasisSettings, dense: bool) -> BasisSettings:
    _check_orders(s.k, s.l)
    _check_n(s.n)
    if s.kind not in KINDS:
        raise UsageError(f"--kind {s.kind!r}; expected one of {', '.join(KINDS)}")
    if dense and dense_elements(s.k, s.l, s.n) > MAX_DENSE_ELEMENTS:
        raise UsageError(f"--dense for (k={s.k}, l={s.l}, n={s.n}) would hold {dense_elements(s.k, s.l, s.n):,} "
                         f"elements, over the limit of {MAX_DENSE_ELEMENTS:,}; use a smaller n")
    if s.kind == "diagram" and len(orbit.orbit_labels(s.k, s.l)) > MAX_CHANGE_OF_BASIS_LABELS:
        raise UsageError(f"the change of basis for (k={s.k}, l={s.l}) has {len(orbit.orbit_labels(s.k, s.l))}² "
                         f"entries, over the limit of {MAX_CHANGE_OF_BASIS_LABELS}²; use --kind orbit")
    return s


def _fraction(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def describe_basis(s: BasisSettings) -> dict[str, Any]:
    """Size, labels and (diagram kind) the exact change of basis, as JSON-ready data."""
    labels = orbit.orbit_labels(s.k, s.l, s.n)
    stable = orbit.orbit_labels(s.k, s.l)
    out: dict[str, Any] = {
        "k": s.k, "l": s.l, "n": s.n, "kind": s.kind, "size": len(labels), "stable_size": len(stable),
        "independent": s.kind == "orbit" or s.n >= s.k + s.l,
        "packed_in": packed_size(s.n, s.k), "packed_out": packed_size(s.n, s.l),
        "labels": [{"label": orbit.label_to_str(lab), "parts": len(lab),
                    "contractions": orbit.pure_input_parts(lab),
                    "orbit_size": diagram.orbit_size(lab, s.k, s.l)} for lab in (labels if s.kind == "orbit" else stable)],
    }
    if s.kind == "diagram":
        order, C = diagram.change_of_basis(s.k, s.l)
        out["change_of_basis"] = {"labels": [orbit.label_to_str(lab) for lab in order],
                                  "D_in_X": C.tolist(),
                                  "X_in_D": [[_fraction(v) for v in row] for row in diagram.mobius_inverse(C)]}
        out["labels"] = [out["labels"][[orbit.label_to_str(lab) for lab in stable].index(orbit.label_to_str(o))]
                         for o in order]
    return out


def dense_basis(s: BasisSettings) -> np.ndarray:
    """[L, P_out, P_in]: X_λ (orbit) or the normalised diagram maps op_λ (diagram) on packed entries."""
    X = orbit.dense_orbit_basis(s.k, s.l, s.n)
    if s.kind == "orbit":
        return X
    order, C = diagram.change_of_basis(s.k, s.l)
    present = {lab: i for i, lab in enumerate(orbit.orbit_labels(s.k, s.l, s.n))}
    D = np.zeros((len(order), *X.shape[1:]))
    for a, lam in enumerate(order):
        scale = float(s.n) ** -orbit.pure_input_parts(lam) / diagram.orbit_size(lam, s.k, s.l)
        for b, mu in enumerate(order):
            if C[a, b] and mu in present:
                D[a] += scale * C[a, b] * X[present[mu]]
    return D


# ---------------------------------------------------------------------------------------------- fit
@dataclass(frozen=True)
class FitSettings:
    task: str = "B"
    data: str | None = None
    test_data: str | None = None
    k: int = 2
    l: int = 1
    n: int = 6
    n_train: int = 256
    n_test: int = 2000
    test_n: tuple[int, ...] = (4, 8, 10)
    sweep: tuple[int, ...] = ()
    models: tuple[str, ...] = ("equivariant", "mlp", "mlp-aug", "maron")
    basis: str = "diagram"
    hidden: int = 16
    layers: int = 2
    mlp_width: int = 128
    activation: str = "relu"
    steps: int = 500
    batch_size: int = 64
    lr: float = 3e-3
    teacher_seed: int = 0
    symmetrize: bool = False
    seeds: tuple[int, ...] = (0, 1, 2)
    device: str = "auto"
    jobs: int = 0


@dataclass
class Dataset:
    X: np.ndarray
    y: np.ndarray
    source: str


@dataclass
class FitInputs:
    settings: FitSettings
    k: int
    l: int
    n: int
    basis: str
    sizes: tuple[int, ...]
    train: Dataset | None = None
    test: Dataset | None = None
    inputs: list[str] = field(default_factory=list)


def _as_full(X: np.ndarray, k: int, name: str, symmetrize_ok: bool) -> np.ndarray:
    """Full symmetric [N, n^k axes] from full or packed X; asymmetric full input is an error."""
    if X.ndim == k + 1 and k >= 1 and len(set(X.shape[1:])) == 1 and (k > 1 or X.ndim == 2):
        gap = asymmetry(X, k)
        if gap > SYMMETRY_TOL * max(1.0, float(np.abs(X).max(initial=0.0))):
            if not symmetrize_ok:
                raise InputError(f"{name}: X is not symmetric (largest asymmetry |X[..i,j..] - X[..j,i..]| = "
                                 f"{gap:.3g}); symmetrise it or pass --symmetrize")
            X = symmetrize(X, k)
        return X
    if X.ndim == 2 and k >= 2:
        n = n_from_packed(X.shape[1], k)
        if n is None:
            raise InputError(f"{name}: X has {X.shape[1]} columns, not a packed length C(n+{k - 1}, {k}) for any n")
        return unpack(X, n, k)
    raise InputError(f"{name}: X has shape {list(X.shape)}; expected [N, n, ..., n] with {k} index axes "
                     f"(full) or [N, C(n+{k - 1}, {k})] (packed)")


def _target(y: np.ndarray, l: int, n: int, name: str) -> np.ndarray:
    full = (y.shape[0],) + (n,) * l
    if y.shape == full:
        return y
    if l >= 2 and y.shape == (y.shape[0], packed_size(n, l)):
        return unpack(y, n, l)
    raise InputError(f"{name}: y has shape {list(y.shape)}; for l={l} and n={n} expected {list(full)}"
                     + (f" or packed [{y.shape[0]}, {packed_size(n, l)}]" if l >= 2 else ""))


def read_dataset(path: str, k: int, l: int, symmetrize_ok: bool) -> Dataset:
    arrays = io.read_arrays(path)
    name = io.display_name(path)
    missing = [key for key in ("X", "y") if key not in arrays]
    if missing:
        raise InputError(f"{name}: missing array(s) {', '.join(missing)}; expected 'X' and 'y' (have {sorted(arrays)})")
    X, y = arrays["X"], arrays["y"]
    for key, a in (("X", X), ("y", y)):
        if not np.issubdtype(a.dtype, np.number) or a.dtype == np.complex128:
            raise InputError(f"{name}: {key} has dtype {a.dtype}; expected real numbers")
        if a.ndim == 0 or a.shape[0] < 2:
            raise InputError(f"{name}: {key} has shape {list(a.shape)}; expected at least 2 samples")
        check_finite(a, key, name)
    if X.shape[0] != y.shape[0]:
        raise InputError(f"{name}: X has {X.shape[0]} samples but y has {y.shape[0]}")
    X = _as_full(X.astype(np.float64), k, name, symmetrize_ok)
    n = X.shape[-1]
    y = _target(y.astype(np.float64), l, n, name)
    if l >= 2 and asymmetry(y, l) > SYMMETRY_TOL * max(1.0, float(np.abs(y).max(initial=0.0))):
        raise InputError(f"{name}: y is not symmetric (largest asymmetry {asymmetry(y, l):.3g})")
    return Dataset(X, y, name)


def prepare_fit(s: FitSettings) -> FitInputs:
    if s.data is None and s.task not in TASKS:
        raise UsageError(f"--task {s.task!r}; expected one of {', '.join(TASKS)}")
    bad = [m for m in s.models if m not in MODELS]
    if bad:
        raise UsageError(f"--model {bad[0]!r}; expected one of {', '.join(MODELS)}")
    if s.basis not in BASES:
        raise UsageError(f"--basis {s.basis!r}; expected one of {', '.join(BASES)}")
    if s.test_data and not s.data:
        raise UsageError("--test-data needs --data")
    k, l = (s.k, s.l) if s.data else task_orders(s.task, s.k, s.l)
    _check_orders(k, l)
    if k < 1:
        raise UsageError("--k 0: the input must be a tensor of order at least 1")
    for v in (s.n, *s.test_n):
        _check_n(v, "--n" if v == s.n else "--test-n")
    if not s.seeds:
        raise UsageError("--seeds is empty")
    sizes = tuple(s.sweep) or (s.n_train,)
    if min(sizes) < 1:
        raise UsageError("training sizes must be at least 1")
    out = FitInputs(s, k, l, s.n, s.basis, sizes)
    if s.data:
        if s.test_n:
            raise UsageError("--test-n needs generated tasks (other n); with --data pass --test-n ''")
        out.train = read_dataset(s.data, k, l, s.symmetrize)
        out.inputs.append(s.data)
        if s.test_data:
            out.test = read_dataset(s.test_data, k, l, s.symmetrize)
            out.inputs.append(s.test_data)
            if out.test.X.shape[1:] != out.train.X.shape[1:]:
                raise InputError(f"{out.test.source}: X has n={out.test.X.shape[-1]}, but the training data has "
                                 f"n={out.train.X.shape[-1]}")
        out.n = out.train.X.shape[-1]
        available = len(out.train.X) - (0 if out.test else max(1, len(out.train.X) // 4))
        if max(sizes) > available:
            raise UsageError(f"training size {max(sizes)} is more than the {available} training samples available "
                             f"in {out.train.source}" + ("" if out.test else " (a quarter is held out for testing)"))
    largest_n = max((out.n, *s.test_n))
    per_sample = largest_n ** max(k, l) * max(s.hidden, 1) * 8 * (2 + s.layers)
    # check_memory's flag= is for an option that raises the limit (symeq-fit has none): name the sizes instead
    resources.check_memory(per_sample * max(s.batch_size, min(s.n_test, 512)) * 4,
                           "training and evaluation (sized by --n, --test-n, --hidden, --layers and --batch-size)")
    resources.check_memory(8.0 * (max(sizes) + s.n_test * (1 + len(s.test_n))) * largest_n ** max(k, l),
                           "the generated data (sized by --n-train or --sweep, --n-test, --n and --test-n)")
    return out


def _data(inputs: FitInputs, seed: int) -> tuple[Dataset, dict[int, Dataset]]:
    """The training pool and the test set(s) of one seed (per test n for generated tasks)."""
    s = inputs.settings
    if inputs.train is not None:
        if inputs.test is not None:
            return inputs.train, {inputs.n: inputs.test}
        perm = np.random.default_rng(seed).permutation(len(inputs.train.X))
        cut = max(1, len(perm) // 4)
        tr, te = perm[cut:], perm[:cut]
        return (Dataset(inputs.train.X[tr], inputs.train.y[tr], inputs.train.source),
                {inputs.n: Dataset(inputs.train.X[te], inputs.train.y[te], inputs.train.source)})
    child = spawn_seeds(seed, 2 + len(s.test_n))
    kw = {"k": inputs.k, "l": inputs.l, "teacher_seed": s.teacher_seed}
    train = Dataset(*make_task(s.task, inputs.n, max(inputs.sizes), np.random.default_rng(child[0]), **kw), s.task)
    tests = {}
    for i, m in enumerate((inputs.n, *s.test_n)):
        tests[m] = Dataset(*make_task(s.task, m, s.n_test, np.random.default_rng(child[1 + i]), **kw), s.task)
    return train, tests


def _fit_one(inputs: FitInputs, name: str, size: int, seed: int, train: Dataset, tests: dict[int, Dataset],
             device: Any) -> dict[str, Any]:
    import torch

    from paperkit.methods.symeq.layers import parameter_count
    from paperkit.methods.symeq.train import build_model, evaluate, fit, seed_model, transfers
    s = inputs.settings
    seed_model(seed)
    model = build_model(name, inputs.k, inputs.l, inputs.n, hidden=s.hidden, layers=s.layers,
                        mlp_width=s.mlp_width, basis=inputs.basis, activation=s.activation).to(device)

    def t(a: np.ndarray) -> Any:
        return torch.as_tensor(a, dtype=torch.float32, device=device)

    X, y = t(train.X[:size]), t(train.y[:size])
    losses = fit(model, X, y, inputs.l, steps=s.steps, batch_size=s.batch_size, lr=s.lr, seed=seed,
                 augment=name == "mlp-aug")
    test_mse = {str(m): (evaluate(model, t(d.X), t(d.y), inputs.l) if m == inputs.n or transfers(name) else None)
                for m, d in tests.items()}
    return {"metrics": {"model": name, "seed": seed, "n_train": size, "params": parameter_count(model),
                        "train_mse": evaluate(model, X, y, inputs.l), "final_loss": losses[-1] if losses else None,
                        "test_mse": test_mse},
            "state": {k: v.detach().cpu() for k, v in model.state_dict().items()}}


def execute_fit(inputs: FitInputs, run: Any, progress: Any = default_progress) -> dict[str, Any]:
    """Every (seed, size, model) fit as a cached stage; returns per-fit records and the first seed's models."""
    from paperkit.core.devices import resolve_device
    s = inputs.settings
    resources.set_threads(s.jobs)
    device = resolve_device(s.device)
    records, states = [], {}
    with progress(total=len(s.seeds) * len(inputs.sizes) * len(s.models), desc="fits", unit="fit") as bar:
        for seed in s.seeds:
            train, tests = _data(inputs, seed)
            for size in inputs.sizes:
                for name in s.models:
                    out = run.cached(f"fit-s{seed}-N{size}-{name}",
                                     partial(_fit_one, inputs, name, size, seed, train, tests, device), fmt="pt")
                    records.append(out["metrics"])
                    if seed == s.seeds[0] and size == inputs.sizes[-1]:
                        states[name] = out["state"]
                    bar.update(1)
    return {"records": records, "states": states}


def _mean_se(values: list[float]) -> tuple[float, float | None]:
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), (float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else None)


def summarize(inputs: FitInputs, records: list[dict[str, Any]]) -> dict[str, Any]:
    """metrics.json content: per model, train/test MSE (mean, standard error, per seed) at the largest size
    and every test n; parameter counts; basis size."""
    s = inputs.settings
    size = inputs.sizes[-1]
    models = {}
    for name in s.models:
        rows = [r for r in records if r["model"] == name and r["n_train"] == size]
        test = {}
        for m in rows[0]["test_mse"]:
            vals = [r["test_mse"][m] for r in rows]
            if vals[0] is not None:
                mean, se = _mean_se(vals)
                test[m] = {"mean": mean, "se": se, "per_seed": vals}
        mean, se = _mean_se([r["train_mse"] for r in rows])
        models[name] = {"params": rows[0]["params"], "train_mse": {"mean": mean, "se": se}, "test_mse": test}
    return {"task": s.task if not s.data else None, "data": inputs.train.source if inputs.train else None,
            "k": inputs.k, "l": inputs.l, "n": inputs.n, "n_train": size, "seeds": list(s.seeds),
            "basis": inputs.basis, "basis_size": len(orbit.orbit_labels(inputs.k, inputs.l)),
            "hidden_basis_size": len(orbit.orbit_labels(inputs.k, inputs.k)), "models": models}


def curve_rows(inputs: FitInputs, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per model × training size: mean and standard error of the in-size test MSE over seeds."""
    rows = []
    for name in inputs.settings.models:
        for size in inputs.sizes:
            vals = [r["test_mse"][str(inputs.n)] for r in records if r["model"] == name and r["n_train"] == size]
            mean, se = _mean_se(vals)
            rows.append({"model": name, "n_train": size, "test_mse": mean, "test_mse_se": se, "seeds": len(vals)})
    return rows


def transfer_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model and test n: test MSE with the weights trained at n, and its ratio to the in-size MSE."""
    rows = []
    for name, m in summary["models"].items():
        base = m["test_mse"].get(str(summary["n"]), {}).get("mean")
        for test_n, v in sorted(m["test_mse"].items(), key=lambda kv: int(kv[0])):
            rows.append({"model": name, "test_n": int(test_n), "test_mse": v["mean"], "test_mse_se": v["se"],
                         "ratio_to_train_n": v["mean"] / base if base else None})
    return rows
