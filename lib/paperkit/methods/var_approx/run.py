"""Orchestration of the var-approx commands: settings (the single source of defaults), prepare (validate every
input before a run dir exists), execute (training stages through ``run.cached``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.methods.var_approx import pyramid as pyr
from paperkit.methods.var_approx import sweep as sw
from paperkit.methods.var_approx.model import ABLATIONS, HEADS, MASKS, READOUTS
from paperkit.methods.var_approx.targets import TARGETS
from paperkit.methods.var_approx.train import LR_SCHEDULES, Problem, fit, fit_seeds, problem_dict

MAX_WIDTH = 65_536


_P = Problem()  # the model's and optimiser's defaults live in Problem; the settings below take them from it


@dataclass(frozen=True)
class FitSettings:
    target: str = _P.target
    lipschitz: float = _P.lipschitz
    pca_dim: int = _P.pca_dim
    bandwidth: float = _P.bandwidth
    init: str = "x".join(map(str, _P.init))
    dim: int = _P.dim
    scales: str = ",".join(map(str, _P.scales))
    embed: int = _P.embed
    width: int = _P.width
    mask: str = _P.mask
    ablate: str = _P.ablate
    readout: str = _P.readout
    head: str = _P.head
    steps: int = _P.steps
    batch_size: int = _P.batch_size
    lr: float = _P.lr
    lr_schedule: str = _P.lr_schedule
    warmup_frac: float = _P.warmup_frac
    beta2: float = _P.beta2
    standardize_targets: bool = _P.standardize_targets
    n_train: int = _P.n_train
    n_test: int = _P.n_test
    seed: int = 0
    device: str = "auto"


def _choice(value: str, allowed: tuple[str, ...], flag: str) -> None:
    if value not in allowed:
        raise UsageError(f"{flag} '{value}' is unknown; expected one of {', '.join(allowed)}")


# var-approx-sweep takes these fields as lists under other option names; its errors must name its own options.
SWEEP_FLAGS = {"target": "--targets", "width": "--widths", "embed": "--embeds", "scales": "--schedules"}


def make_problem(s: Any, flags: dict[str, str] | None = None, **over: Any) -> Problem:
    """A validated :class:`Problem` from settings carrying Problem's fields (init and scales as text). ``flags``
    maps a field to the option that set it, where that is not ``--<field>``."""
    flags = flags or {}

    def flag(name: str) -> str:
        return flags.get(name, f"--{name.replace('_', '-')}")

    init = pyr.parse_init(s.init)
    scales = pyr.check_scales(pyr.parse_scales(over.pop("scales") if "scales" in over else s.scales), init,
                              flag("scales"), "-" if "scales" in flags else ",")
    values = {f.name: getattr(s, f.name) for f in fields(Problem) if hasattr(s, f.name)}
    values.update(init=init, scales=scales, **over)
    p = Problem(**values)
    _choice(p.target, TARGETS, flag("target"))
    _choice(p.mask, MASKS, "--mask")
    _choice(p.ablate, ABLATIONS, "--ablate")
    _choice(p.readout, READOUTS, "--readout")
    _choice(p.head, HEADS, "--head")
    for name in ("width", "embed", "steps", "dim", "batch_size", "n_train", "n_test"):
        v = getattr(p, name)
        if not 0 < v <= (MAX_WIDTH if name in ("width", "embed") else 10**7):
            raise UsageError(f"{flag(name)} {v} must be positive (and at most "
                             f"{MAX_WIDTH if name in ('width', 'embed') else 10**7})")
    _choice(p.lr_schedule, LR_SCHEDULES, "--lr-schedule")
    if not 0 < p.lr <= 10:
        raise UsageError(f"--lr {p.lr:g} must be in (0, 10]")
    if not 0 <= p.warmup_frac < 1:
        raise UsageError(f"--warmup-frac {p.warmup_frac:g} must be in [0, 1)")
    if not 0 <= p.beta2 < 1:
        raise UsageError(f"--beta2 {p.beta2:g} must be in [0, 1)")
    if not isinstance(p.standardize_targets, bool):
        raise UsageError(f"standardize_targets {p.standardize_targets!r} must be true or false")
    if not p.lipschitz > 0:
        raise UsageError(f"--lipschitz {p.lipschitz:g} must be positive")
    if p.target == "digits" and not 2 <= p.pca_dim <= 8:
        raise UsageError(f"--pca-dim {p.pca_dim} is outside 2..8")
    if p.target == "digits" and p.pca_dim > init[0] * init[1] * p.dim:
        raise UsageError(f"--pca-dim {p.pca_dim} does not fit in the {s.init}x{p.dim} initial map")
    if p.target == "context" and init[0] * init[1] < 2:
        raise UsageError(f"{flag('target')} context needs an --init with at least two tokens")
    if p.readout == "pyramid" and p.ablate == "no-pyramid":     # the flat model has only the last scale's tokens
        raise UsageError("--readout pyramid needs a pyramid (not --ablate no-pyramid)")
    if p.head == "flow" and p.ablate in ("mlp", "linear"):
        raise UsageError("--head flow needs a transformer (not --ablate mlp or linear)")
    _check_memory(p)
    return p


def _check_memory(p: Problem) -> None:
    from paperkit.core.resources import check_memory

    n_tok = pyr.token_count(p.scales, p.init)
    per_sample = 4.0 * n_tok * (p.dim + 4 * p.embed + 2 * p.width + n_tok)
    check_memory(float(p.n_train + p.n_test) * 4.0 * n_tok * p.dim + p.batch_size * 3 * per_sample,
                 f"a {n_tok}-token model at width {p.width} with {p.n_train + p.n_test} samples")


# ---------------------------------------------------------------------------------------------- fit
@dataclass
class FitInputs:
    settings: FitSettings
    problem: Problem


def prepare_fit(s: FitSettings) -> FitInputs:
    return FitInputs(s, make_problem(s))


def execute_fit(inputs: FitInputs, run: Any, progress: Any = default_progress) -> dict[str, Any]:
    """Train the model (stage ``model``); returns metrics, state, test predictions and flow history."""
    from paperkit.core.devices import resolve_device

    s, p = inputs.settings, inputs.problem
    device = resolve_device(s.device)

    def compute() -> dict[str, Any]:
        with progress(total=p.steps if p.ablate != "linear" else 1, desc=f"fit {p.target}", unit="step") as bar:
            f = fit(p, s.seed, device=device, tick=lambda: bar.update(1))
        return {"metrics": f.metrics, "state": f.state, "pred_test": f.pred_test, "history": f.history}

    out = run.cached("model", compute, fmt="pt")
    out["metrics"] = {"problem": problem_dict(p), "seed": s.seed, **out["metrics"]}
    return out


# -------------------------------------------------------------------------------------------- sweep
@dataclass(frozen=True)
class SweepSettings:
    targets: tuple[str, ...] = ("fourier",)
    lipschitz: tuple[float, ...] = (1.0, 4.0, 16.0)
    widths: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    embeds: tuple[int, ...] = (32,)
    schedules: tuple[str, ...] = ("2-4-8",)
    seeds: tuple[int, ...] = (0, 1, 2)
    init: str = "x".join(map(str, _P.init))
    dim: int = _P.dim
    mask: str = _P.mask
    ablate: str = _P.ablate
    steps: int = _P.steps
    batch_size: int = _P.batch_size
    lr: float = _P.lr
    lr_schedule: str = _P.lr_schedule
    warmup_frac: float = _P.warmup_frac
    beta2: float = _P.beta2
    standardize_targets: bool = _P.standardize_targets
    n_train: int = _P.n_train
    n_test: int = _P.n_test
    pca_dim: int = _P.pca_dim
    bandwidth: float = _P.bandwidth
    shard: tuple[int, int] = (1, 1)
    device: str = "auto"


@dataclass
class SweepInputs:
    settings: SweepSettings
    cells: list[Problem]
    mine: list[int]


def prepare_sweep(s: SweepSettings) -> SweepInputs:
    k, n = s.shard
    if not 1 <= k <= n:
        raise UsageError(f"--shard {k}/{n}: expected 1 <= K <= N")
    # the sweep exists to fit slopes against width: one width would train every cell and fit nothing
    if len(set(s.widths)) < 2:
        raise UsageError(f"--widths {','.join(map(str, s.widths))}: a slope needs at least 2 widths")
    scheds = [pyr.parse_scales(x) for x in s.schedules]
    base = make_problem(s, SWEEP_FLAGS, scales=scheds[0], target=s.targets[0], lipschitz=s.lipschitz[0], width=s.widths[0],
                        embed=s.embeds[0])
    for t in s.targets:
        for sc in scheds:
            make_problem(s, SWEEP_FLAGS, scales=sc, target=t, lipschitz=s.lipschitz[0], width=max(s.widths), embed=max(s.embeds))
    cells = sw.grid(base, s.targets, s.lipschitz, s.widths, s.embeds, scheds)
    mine = sw.shard_cells(len(cells), s.shard)
    if not mine:     # an empty shard would write a row-less sweep.csv that --merge cannot read
        raise UsageError(f"--shard {k}/{n} gets no cells: the grid has only {len(cells)}; use N <= {len(cells)}")
    return SweepInputs(s, cells, mine)


def execute_sweep(inputs: SweepInputs, run: Any, progress: Any = default_progress) -> list[dict[str, Any]]:
    """Every cell of this shard (stage ``cell-<i>``), its seeds trained as one vmapped model."""
    from paperkit.core.devices import resolve_device

    s = inputs.settings
    device = resolve_device(s.device)
    rows = []
    total = sum(inputs.cells[i].steps for i in inputs.mine)
    with progress(total=total, desc="sweep", unit="step") as bar:
        for i in inputs.mine:
            p = inputs.cells[i]

            def compute(i: int = i, p: Problem = p) -> list[dict[str, Any]]:
                return sw.cell_rows(i, p, s.seeds, fit_seeds(p, s.seeds, device=device,
                                                              tick=lambda: bar.update(1 / len(s.seeds))))
            rows.extend(run.cached(f"cell-{i:04d}", compute, fmt="json"))
    return rows


def read_shard_rows(paths: list[str]) -> list[dict[str, Any]]:
    """The sweep.csv rows of shard run dirs, merged in cell/seed order."""
    from paperkit.core import io, tables

    parts = []
    for path in paths:
        f = io.require_file(f"{path}/sweep.csv")
        t = tables.read_table(f)
        needed = {"cell", "seed", "target", "lipschitz", "width", "embed", "scales", "test_rmse"}
        missing = {c for c in needed if not t.has(c)}
        if missing:
            raise InputError(f"{f}: missing columns {', '.join(sorted(missing))}; expected a var-approx-sweep table")
        if not len(t):
            raise InputError(f"{f}: holds no rows; expected a var-approx-sweep table")
        # NaN or inf would flow into the fitted slopes (and a bare NaN into the printed JSON); fractional
        # integers would be truncated silently.
        ints = ("cell", "seed", "width", "embed", "parameters", "tokens")
        floats = ("lipschitz", "train_rmse", "test_rmse", "test_rel_l2", "test_max_error")
        present = [c for c in ints + floats if t.has(c)]
        values = dict(zip(present, t.numeric(present).T, strict=True))
        for c in ints:
            if c in values and ((values[c] != np.round(values[c])) | (values[c] < 0)).any():
                raise InputError(f"{f}: column '{c}' must hold non-negative integers")
        for c in ("lipschitz", "width", "embed", "test_rmse"):
            if (values[c] <= 0).any():
                raise InputError(f"{f}: column '{c}' must be positive (the slope is fitted on log test_rmse vs log width)")
        parts.append([{k: int(v) if k in ints else v for k, v in r.items()} for r in t.records()])
    return sw.merge_rows(parts)


# -------------------------------------------------------------------------------------------- pyramid
def pyramid_of(x: np.ndarray, scales: tuple[int, ...], source: str) -> np.ndarray:
    """Φ_up of an ``(N, H, W, C)`` or ``(H, W, C)`` float array (validated first)."""
    import torch

    if x.dtype.kind not in "fiu":
        raise InputError(f"{source}: dtype {x.dtype} is not numeric")
    if x.ndim not in (3, 4):
        raise InputError(f"{source}: shape {x.shape} has rank {x.ndim}; expected (N, H, W, C) or (H, W, C)")
    if 0 in x.shape:     # torch's interpolation fails on empty batches and zero channels
        raise InputError(f"{source}: shape {x.shape} holds no maps (an axis has length 0)")
    if not np.isfinite(x).all():
        raise InputError(f"{source}: {int((~np.isfinite(x)).sum())} values are NaN or infinite")
    single = x.ndim == 3
    x4 = x[None] if single else x
    pyr.check_scales(scales, (x4.shape[1], x4.shape[2]))
    tokens = pyr.token_count(scales, (x4.shape[1], x4.shape[2]))
    from paperkit.core.resources import check_memory
    check_memory(8.0 * x4.shape[0] * tokens * x4.shape[3] * 2, f"a {tokens}-token pyramid of {x4.shape[0]} maps")
    out = pyr.up_pyramid(torch.from_numpy(np.ascontiguousarray(x4, dtype=np.float64)), scales).numpy()
    return (out[0] if single else out).astype(x.dtype if x.dtype.kind == "f" else np.float64)
