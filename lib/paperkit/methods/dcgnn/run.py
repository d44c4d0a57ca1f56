"""Orchestration of the dcgnn-* commands: settings (the single source of defaults), prepare (read and
validate every input before a run dir exists), execute (one ``run.cached`` stage per seed)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.core.resources import MEMORY_FLAG, check_memory, resolve_jobs
from paperkit.methods.dcgnn.data import SYNTHETIC, GraphSet, generate, load_data
from paperkit.methods.dcgnn.model import CHANNELS, COMBINERS, SEGNNS
from paperkit.methods.dcgnn.train import (
    FitConfig,
    build_model,
    explanation_auroc,
    export_rule,
    predict,
    split_metrics,
    train_model,
)

SPLITS = ("train", "val", "test", "id_test")   # the NPZ split codes 0, 1, 2, 3
ID_VAL_FRACTION = 0.1   # of the training graphs, held apart to select the checkpoint when val is OOD
DOMINANT = 0.8   # a channel with relevance ≥ this decides alone; otherwise both are used


def _choice(value: str, allowed: tuple[str, ...], flag: str) -> None:
    if value not in allowed:
        raise UsageError(f"{flag} {value!r}; expected one of {', '.join(allowed)}")


def channel_used(relevance: tuple[float, float]) -> str:
    gnn, rule = relevance
    return "gnn" if gnn >= DOMINANT else "rule" if rule >= DOMINANT else "both"


def split_indices(gs: GraphSet, seed: int) -> dict[str, np.ndarray]:
    """The stored split, else a seeded 80/10/10 split. When the validation split is not from the training
    distribution (the data hold an in-distribution test split, as GOOD's covariate splits) or is empty, a
    seeded ``ID_VAL_FRACTION`` of the training graphs is held apart as ``id_val``, as GOOD's ID validation."""
    if gs.split is None:
        from paperkit.methods.dcgnn.data import random_split
        split = random_split(gs.n_graphs, np.random.default_rng(seed))
    else:
        split = gs.split
    out = {name: np.flatnonzero(split == k) for k, name in enumerate(SPLITS)}
    if len(out["id_test"]) or not len(out["val"]):
        train = np.random.default_rng(seed).permutation(out["train"])
        n_val = int(round(ID_VAL_FRACTION * len(train))) if len(train) > 1 else 0
        out["id_val"], out["train"] = np.sort(train[:n_val]), np.sort(train[n_val:])
    return out


def selection_split(splits: dict[str, np.ndarray]) -> str:
    """The in-distribution split on which the checkpoint is chosen."""
    return "id_val" if "id_val" in splits else "val"


# -------------------------------------------------------------------------------------------- gen
@dataclass(frozen=True)
class GenSettings:
    dataset: str = "redblue"
    n_graphs: int = 2000
    ood: str = "none"
    seed: int = 0


def prepare_gen(settings: GenSettings) -> GenSettings:
    _choice(settings.dataset, SYNTHETIC, "--dataset")
    _choice(settings.ood, ("none", "large", "er"), "--ood")
    if settings.ood != "none" and settings.dataset != "motif":
        raise UsageError("--ood applies to --dataset motif only")
    check_graph_memory(settings.n_graphs, 200 if settings.ood == "large" else NODES_PER_GRAPH[settings.dataset])
    return settings


def execute_gen(settings: GenSettings) -> GraphSet:
    return generate(settings.dataset, settings.n_graphs, settings.seed,
                    ood=None if settings.ood == "none" else settings.ood)


def dataset_summary(gs: GraphSet) -> dict[str, Any]:
    sizes = np.diff(gs.graph_ptr)
    return {"graphs": gs.n_graphs, "nodes": int(gs.graph_ptr[-1]), "edges": int(gs.edge_index.shape[1]),
            "features": gs.feature_names, "classes": {c: int(np.sum(gs.y == k)) for k, c in enumerate(gs.class_names)},
            "nodes_per_graph": [int(sizes.min()), float(np.round(sizes.mean(), 2)), int(sizes.max())],
            "edge_gt": None if gs.edge_gt is None else int(gs.edge_gt.sum())}


# -------------------------------------------------------------------------------------------- fit
_FC = FitConfig()  # the model's and optimiser's defaults live in FitConfig; FitSettings takes them from it


@dataclass(frozen=True)
class FitSettings:
    data: str | None = None
    synthetic: str | None = None
    n_graphs: int = 2000
    segnn: str = _FC.segnn
    channels: str = _FC.channels
    combiner: str = _FC.combiner
    epochs: int = 50  # the command's laptop-scale default (FitConfig keeps the paper's 100)
    batch_size: int = _FC.batch_size
    hidden: int = _FC.hidden
    lr: float = _FC.lr
    warmup: int = _FC.warmup
    reg_weight: float = _FC.reg_weight
    rule_l1: float = _FC.rule_l1
    side_lr: float = _FC.side_lr
    constant_feature: bool = _FC.constant_feature
    average_edge_attn: str = _FC.average_edge_attn
    pool: str = _FC.pool
    norm: str = _FC.norm
    select: str = _FC.select
    temp_schedule: str = _FC.temp_schedule
    combiner_init: str = _FC.combiner_init
    rule_init: str = _FC.rule_init
    rule_weight_decay: float = _FC.rule_weight_decay
    combiner_hold: int = _FC.combiner_hold
    top_k: int = 6
    seed: int = 0
    seeds: tuple[int, ...] = (0, 1, 2)
    device: str = "auto"
    jobs: int = 0
    max_memory_gb: float | None = None

    def fit_config(self) -> FitConfig:
        return FitConfig(segnn=self.segnn, channels=self.channels, combiner=self.combiner, hidden=self.hidden,
                         epochs=self.epochs, batch_size=self.batch_size, lr=self.lr,
                         warmup=min(self.warmup, self.epochs), reg_weight=self.reg_weight, rule_l1=self.rule_l1,
                         side_lr=self.side_lr,
                         constant_feature=self.constant_feature, average_edge_attn=self.average_edge_attn, pool=self.pool, norm=self.norm,
                         select=self.select, temp_schedule=self.temp_schedule, combiner_init=self.combiner_init,
                         rule_init=self.rule_init, rule_weight_decay=self.rule_weight_decay,
                         combiner_hold=self.combiner_hold)


@dataclass
class FitInputs:
    settings: FitSettings
    data: GraphSet
    source: str
    splits: dict[str, np.ndarray]


@dataclass
class FitResult:
    metrics: dict[str, Any]
    per_seed: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    edge_masks: np.ndarray | None
    model: dict[str, Any]
    data: GraphSet
    splits: dict[str, np.ndarray]


NODES_PER_GRAPH = {"redblue": 56, "topofeature": 47, "motif": 20}   # generators' mean sizes


def check_graph_memory(n_graphs: int, nodes_per_graph: float, hidden: int = 0, batch_size: int = 0,
                       limit_gb: float | None = None, flag: str | None = None) -> None:
    """Refuse, before generating or training, data or activations that cannot fit: ~4 directed edges per node,
    and per batch two 3-layer GINs keeping about 12 node- and edge-sized activations of width ``hidden``."""
    nodes = n_graphs * nodes_per_graph
    check_memory(nodes * (4 * 16 + 40), "the graphs", limit_gb=limit_gb, flag=flag)
    if hidden:
        check_memory(min(batch_size, n_graphs) * nodes_per_graph * 5 * hidden * 4 * 12, "training activations",
                     limit_gb=limit_gb, flag=flag)


def load_graphs(data: str | None, synthetic: str | None, n_graphs: int, seed: int) -> tuple[GraphSet, str]:
    if (data is None) == (synthetic is None):
        raise UsageError("give exactly one of --data FILE|DIR and --synthetic NAME")
    if synthetic is not None:
        _choice(synthetic, SYNTHETIC, "--synthetic")
        check_graph_memory(n_graphs, NODES_PER_GRAPH[synthetic])
        return generate(synthetic, n_graphs, seed), f"synthetic:{synthetic}"
    return load_data(data), str(data)


def prepare_fit(settings: FitSettings) -> FitInputs:
    s = settings
    _choice(s.segnn, SEGNNS, "--segnn")
    _choice(s.channels, CHANNELS, "--channels")
    _choice(s.combiner, COMBINERS, "--combiner")
    _choice(s.average_edge_attn, ("mean", "none"), "--average-edge-attn")
    _choice(s.pool, ("sum", "mean"), "--pool")
    _choice(s.norm, ("none", "bn"), "--norm")
    _choice(s.select, ("best-val", "last"), "--select")
    _choice(s.temp_schedule, ("warmup", "official"), "--temp-schedule")
    _choice(s.combiner_init, ("equal", "random"), "--combiner-init")
    _choice(s.rule_init, ("zero", "default"), "--rule-init")
    if not s.seeds:
        raise UsageError("--seeds is empty")
    if s.combiner_hold and min(s.warmup, s.epochs) + s.combiner_hold >= s.epochs:
        # every epoch after the warm-up would be held: the relevances never train and best-val has no candidate
        raise UsageError(f"--combiner-hold {s.combiner_hold}: the warm-up ({min(s.warmup, s.epochs)}) and the hold "
                         f"leave no epoch of {s.epochs} to train the channel relevances; use a hold below "
                         f"{max(0, s.epochs - min(s.warmup, s.epochs))}")
    if s.synthetic in NODES_PER_GRAPH:
        check_graph_memory(s.n_graphs, NODES_PER_GRAPH[s.synthetic], s.hidden, s.batch_size, s.max_memory_gb, MEMORY_FLAG)
    gs, source = load_graphs(s.data, s.synthetic, s.n_graphs, s.seed)
    if s.channels != "gnn" and not s.constant_feature and np.all(gs.x == gs.x[:1]) and gs.x.shape[1] == 1:
        raise InputError(f"{source}: --channels {s.channels} needs node features, but every node has the same "
                         "single feature (add --constant-feature to count nodes, or use --channels gnn)")
    splits = split_indices(gs, s.seed)
    for name in ("train", "test"):
        if len(splits[name]) == 0:
            raise InputError(f"{source}: the {name} split is empty")
    check_graph_memory(gs.n_graphs, gs.graph_ptr[-1] / gs.n_graphs, s.hidden, s.batch_size, s.max_memory_gb, MEMORY_FLAG)
    return FitInputs(s, gs, source, splits)


def fit_one_seed(inputs: FitInputs, seed: int, device: Any, progress: Any) -> dict[str, Any]:
    import torch

    s, gs, splits = inputs.settings, inputs.data, inputs.splits
    cfg = s.fit_config()
    t0 = time.perf_counter()
    model, history = train_model(gs, splits["train"], cfg, seed, device=device, progress=progress,
                                 desc=f"seed {seed}", val_idx=splits[selection_split(splits)])
    seconds = time.perf_counter() - t0
    everything = np.arange(gs.n_graphs)
    pred = predict(model, gs, everything, device=device)
    metrics = {name: split_metrics(gs, idx, {k: (None if v is None or k == "mask" else v[idx])
                                             for k, v in pred.items()})
               for name, idx in splits.items() if len(idx)}
    rel = model.relevance()
    test_auroc = explanation_auroc(gs, splits["test"], _subset_mask(gs, pred["mask"], splits["test"]))
    row = {"seed": seed, "selected_epoch": model.selected_epoch, **{f"{sp}_{k}": v for sp, m in metrics.items() for k, v in m.items()},
           "gnn_relevance": None if rel is None else rel[0], "rule_relevance": None if rel is None else rel[1],
           "channel": None if rel is None else channel_used(rel), "explanation_auroc": test_auroc}
    train_pred = {k: None if v is None or k == "mask" else v[splits["train"]] for k, v in pred.items()}
    return {"row": row, "rule": export_rule(model, gs, train_pred), "history": history, "train_seconds": seconds,
            "temperature": model.temperature, "state_dict": {k: v.cpu() for k, v in model.state_dict().items()},
            "mask": None if pred["mask"] is None else torch.from_numpy(pred["mask"].astype(np.float32))}


def _fit_seed_worker(inputs: FitInputs, seed: int, threads: int) -> dict[str, Any]:
    import torch

    torch.set_num_threads(threads)
    return fit_one_seed(inputs, seed, "cpu", lambda it, **_: it)


def fit_seeds_in_parallel(inputs: FitInputs, seeds: list[int], jobs: int,
                          on_done: Callable[[int, dict[str, Any]], None]) -> None:
    """Train ``seeds`` in up to ``jobs`` processes (each seed seeds its own model, so the results do not
    depend on the split), handing each result to ``on_done`` as it finishes; nothing when one process is
    enough, and the caller trains them in turn."""
    workers = min(jobs, len(seeds))
    if workers <= 1:
        return
    from concurrent.futures import as_completed

    from paperkit.core.resources import process_pool

    with process_pool(workers) as pool:
        futures = {pool.submit(_fit_seed_worker, inputs, seed, max(1, jobs // workers)): seed for seed in seeds}
        for f in as_completed(futures):
            on_done(futures[f], f.result())


def _subset_mask(gs: GraphSet, mask: np.ndarray | None, idx: np.ndarray) -> np.ndarray | None:
    from paperkit.methods.dcgnn.train import edge_positions
    return None if mask is None else mask[edge_positions(gs, idx)]


def _mean_std(rows: list[dict], key: str) -> dict[str, float] | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    if not vals:
        return None
    return {"mean": float(np.mean(vals)), "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0}


def execute_fit(inputs: FitInputs, run: Any, progress: Any = default_progress) -> FitResult:
    from paperkit.core.devices import resolve_device

    s, gs = inputs.settings, inputs.data
    device = resolve_device(s.device)
    todo = [seed for seed in s.seeds if not run.has_checkpoint(f"seed{seed}.pt")]
    if str(device) == "cpu":   # each seed's stage is saved as it finishes: an interrupt keeps those
        fit_seeds_in_parallel(inputs, todo, resolve_jobs(s.jobs),
                              on_done=lambda seed, result: run.save_checkpoint(f"seed{seed}.pt", result))
    results = [run.cached(f"seed{seed}", lambda seed=seed: fit_one_seed(inputs, seed, device, progress), fmt="pt")
               for seed in s.seeds]
    rows = [r["row"] for r in results]
    keys = [k for k in rows[0] if k not in ("seed", "channel", "selected_epoch")]
    metrics = {"source": inputs.source, "graphs": gs.n_graphs, "classes": gs.class_names,
               "split_sizes": {k: int(len(v)) for k, v in inputs.splits.items()},
               "model": model_name(s), "seeds": list(s.seeds),
               "selection": {"rule": s.select, "split": selection_split(inputs.splits),
                             "epochs": [r["selected_epoch"] for r in rows]},
               "summary": {k: _mean_std(rows, k) for k in keys}, "per_seed": rows}
    masks = [None if r["mask"] is None else np.asarray(r["mask"]) for r in results]
    torch_model = {"config": asdict(s.fit_config()), "d_in": int(gs.x.shape[1]),
                   "n_classes": gs.n_classes, "feature_names": gs.feature_names, "class_names": gs.class_names,
                   "seeds": list(s.seeds), "state_dicts": [r["state_dict"] for r in results],
                   "temperatures": [r["temperature"] for r in results]}
    return FitResult(metrics=metrics, per_seed=rows,
                     rules=[{"seed": r["row"]["seed"], **(r["rule"] or {})} for r in results],
                     edge_masks=None if masks[0] is None else np.stack(masks),
                     model=torch_model, data=gs, splits=inputs.splits)


def model_name(s: FitSettings) -> str:
    base = "GIN" if s.segnn == "none" else s.segnn.upper() if s.segnn != "smgnn" else "SMGNN"
    if s.channels == "rule":
        return "rule"
    return f"DC-{base}" + ("" if s.combiner == "len" else f"[{s.combiner}]") if s.channels == "dual" else base


# ------------------------------------------------------------------------------------ saved models
_CHOICES = {"segnn": SEGNNS, "channels": CHANNELS, "combiner": COMBINERS, "average_edge_attn": ("mean", "none"),
            "pool": ("sum", "mean"), "norm": ("none", "bn"), "select": ("best-val", "last"),
            "temp_schedule": ("warmup", "official"), "combiner_init": ("equal", "random"),
            "rule_init": ("zero", "default")}
_POSITIVE = ("hidden", "epochs", "batch_size", "end_temp", "combiner_temp")   # 0 would build or divide by nothing
MAX_HIDDEN = 65_536   # far above any trained width; a larger value only serves to exhaust memory


def _not_model(path: str | Path, why: str) -> InputError:
    return InputError(f"{path}: not a dcgnn-fit model.pt ({why})")


def _fit_config(raw: Any, path: str | Path) -> FitConfig:
    """The saved FitConfig, each field of the type and range dcgnn-fit writes (older files may lack fields)."""
    if not isinstance(raw, dict):
        raise _not_model(path, f"'config' is a {type(raw).__name__}; expected a mapping")
    defaults = asdict(FitConfig())
    for key, value in raw.items():
        if key not in defaults:
            raise _not_model(path, f"unknown key config.{key}")
        want = type(defaults[key])
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not want:
            raise _not_model(path, f"config.{key} is {value!r}; expected a {want.__name__}")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise _not_model(path, f"config.{key} is {value!r}; expected one of {', '.join(_CHOICES[key])}")
        if want is float and not np.isfinite(value) or isinstance(value, (int, float)) and not isinstance(value, bool) \
                and (value <= 0 if key in _POSITIVE else value < 0):
            raise _not_model(path, f"config.{key} is {value!r}; expected a {'positive' if key in _POSITIVE else 'non-negative'} "
                                   "finite number")
    if raw.get("hidden", 0) > MAX_HIDDEN:
        raise _not_model(path, f"config.hidden is {raw['hidden']}; expected at most {MAX_HIDDEN}")
    return FitConfig(**{k: float(v) if isinstance(defaults[k], float) else v for k, v in raw.items()})


def _names(blob: dict, key: str, path: str | Path) -> list[str]:
    names = blob[key]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _not_model(path, f"'{key}' is not a list of strings")
    return names


def read_model_file(path: str | Path) -> tuple[FitConfig, dict]:
    """The checked contents of a model.pt written by dcgnn-fit: its FitConfig and the blob. Every field is checked
    (types, ranges, one class/feature name per class/feature, one finite state dict per seed) before a model is
    built, so a corrupt or foreign file is refused in one line instead of failing inside PyTorch."""
    from paperkit.core.validate import check_finite_weights
    from paperkit.methods.dcgnn.data import MAX_CLASSES

    src = io.require_file(path)
    try:
        blob = io.load_torch(src)
    except Exception as e:
        raise _not_model(path, str(e).splitlines()[0][:120]) from None
    need = ("config", "d_in", "n_classes", "state_dicts", "feature_names", "class_names")
    if not isinstance(blob, dict) or any(k not in blob for k in need):
        raise _not_model(path, f"expected keys {', '.join(need)}")
    cfg = _fit_config(blob["config"], path)
    features, classes = _names(blob, "feature_names", path), _names(blob, "class_names", path)
    for key, names, low, high in (("d_in", "feature_names", 1, None), ("n_classes", "class_names", 2, MAX_CLASSES)):
        v, n = blob[key], len(features if key == "d_in" else classes)
        if type(v) is not int or v < low or (high is not None and v > high) or v != n:
            raise _not_model(path, f"'{key}' is {v!r}; expected the number of '{names}' ({n})"
                                   + (f", at least {low}" + (f" and at most {high}" if high else "")))
    sds = blob["state_dicts"]
    if not isinstance(sds, list) or not all(isinstance(sd, dict) for sd in sds):
        raise _not_model(path, "'state_dicts' is not a list of state dicts")
    if not sds:   # a file fact, not an option: dcgnn-faith has no --seed-index
        raise InputError(f"{path}: the model holds no trained seeds ('state_dicts' is empty)")
    seeds = blob.setdefault("seeds", list(range(len(sds))))
    if not isinstance(seeds, list) or len(seeds) != len(sds) or not all(type(x) is int for x in seeds):
        raise _not_model(path, f"'seeds' is {seeds!r}; expected one integer per state dict ({len(sds)})")
    if "temperatures" in blob:
        temps = blob["temperatures"]
        if not isinstance(temps, list) or len(temps) != len(sds) or not all(
                isinstance(t, (int, float)) and not isinstance(t, bool) and np.isfinite(t) and t > 0 for t in temps):
            raise _not_model(path, f"'temperatures' is {temps!r}; expected one positive number per state dict ({len(sds)})")
    check_finite_weights(sds, str(path), "state_dicts")
    _check_shapes(cfg, blob, path)
    return cfg, blob


def _check_shapes(cfg: FitConfig, blob: dict, path: str | Path) -> None:
    """Every state dict has the tensors, of the shapes, of the model the config describes (built on the meta
    device: nothing is allocated, so a foreign width cannot exhaust memory)."""
    import torch

    with torch.device("meta"):
        want = {k: tuple(v.shape) for k, v in build_model(cfg, blob["d_in"], blob["n_classes"]).state_dict().items()}
    for i, sd in enumerate(blob["state_dicts"]):
        got = {k: tuple(v.shape) if isinstance(v, torch.Tensor) else None for k, v in sd.items()}
        key = next((k for k in sorted(want.keys() | got.keys()) if want.get(k) != got.get(k)), None)
        if key is not None:
            why = ("is missing" if key not in got else "is not in the model" if key not in want
                   else f"has shape {list(got[key] or [])}, expected {list(want[key])}")
            raise _not_model(path, f"state_dicts[{i}].{key} {why}")


def build_saved_model(cfg: FitConfig, blob: dict, seed_index: int, path: str | Path) -> Any:
    """The ``seed_index``-th seed of a checked model file, rebuilt in eval mode."""
    model = build_model(cfg, blob["d_in"], blob["n_classes"])
    try:
        model.load_state_dict(blob["state_dicts"][seed_index])
    except (RuntimeError, ValueError, TypeError) as e:
        raise _not_model(path, f"state_dicts[{seed_index}]: {str(e).splitlines()[0][:120]}") from None
    # the channel temperature of the kept epoch (older files: the last epoch's)
    model.temperature = float(blob.get("temperatures", [cfg.end_temp if cfg.epochs > cfg.warmup else 1.0]
                                       * len(blob["state_dicts"]))[seed_index])
    model.eval()
    return model


def load_model(path: str | Path, *, seed_index: int = 0) -> tuple[Any, dict]:
    """A model.pt written by dcgnn-fit, rebuilt in eval mode (the ``seed_index``-th seed)."""
    cfg, blob = read_model_file(path)
    if not 0 <= seed_index < len(blob["state_dicts"]):
        raise UsageError(f"--seed-index {seed_index}: the model holds {len(blob['state_dicts'])} seeds")
    return build_saved_model(cfg, blob, seed_index, path), blob


def check_compatible(blob: dict, gs: GraphSet, source: str) -> None:
    """The data fit the model: the same node features, and labels among the model's classes (data that use only
    some of them, say one class's graphs, are fine: the model's class names are used)."""
    if gs.x.shape[1] != blob["d_in"]:
        raise InputError(f"{source}: {gs.x.shape[1]} node features; the model was trained on {blob['d_in']}")
    top = int(gs.y.max())
    if top >= blob["n_classes"]:
        raise InputError(f"{source}: 'y' holds label {top}; the model knows {blob['n_classes']} classes "
                         f"(0..{blob['n_classes'] - 1}: {', '.join(blob['class_names'])})")


# ------------------------------------------------------------------------------------------ faith
@dataclass(frozen=True)
class FaithSettings:
    model: str = ""
    data: str | None = None
    synthetic: str | None = None
    n_graphs: int = 2000
    split: str = "test"
    ratio: float = 0.3
    budgets: tuple[float, ...] = (0.01, 0.05, 0.1)   # the official NECALPHA values
    samples: int = 8                                  # the official expval_budget
    max_graphs: int = 300
    seed: int = 0
    device: str = "auto"


@dataclass
class FaithInputs:
    settings: FaithSettings
    data: GraphSet
    idx: np.ndarray
    models: list[Any]
    blob: dict
    source: str


def prepare_faith(settings: FaithSettings) -> FaithInputs:
    s = settings
    _choice(s.split, SPLITS + ("all",), "--split")
    if not s.budgets or any(not 0 < b <= 1 for b in s.budgets):
        raise UsageError(f"--budgets {list(s.budgets)}: each budget is a fraction in (0, 1] of the mean edge count")
    cfg, blob = read_model_file(s.model)
    if cfg.channels == "rule":
        raise UsageError(f"{s.model}: a rule-only model has no edge explanation to test")
    models = [build_saved_model(cfg, blob, i, s.model) for i in range(len(blob["state_dicts"]))]
    gs, source = load_graphs(s.data, s.synthetic, s.n_graphs, s.seed)
    check_compatible(blob, gs, source)
    idx = np.arange(gs.n_graphs) if s.split == "all" else split_indices(gs, s.seed)[s.split]
    idx = idx[np.diff(gs.edge_ptr())[idx] > 0][:s.max_graphs]
    if len(idx) == 0:
        raise InputError(f"{source}: no graph with edges in split '{s.split}'")
    return FaithInputs(s, gs, idx, models, blob, source)


def execute_faith(inputs: FaithInputs, run: Any, progress: Any = default_progress) -> list[dict[str, Any]]:
    from paperkit.core.devices import resolve_device
    from paperkit.methods.dcgnn.faith import evaluate_faith
    from paperkit.methods.dcgnn.train import edge_positions

    s, gs = inputs.settings, inputs.data
    device = resolve_device(s.device)
    kinds = ["model", "random"] + (["ground_truth"] if gs.edge_gt is not None else [])
    rows = []
    for i, model in enumerate(progress(inputs.models, desc="faith", unit="model")):
        model.to(device)
        mask = predict(model, gs, inputs.idx, device=device)["mask"]
        if mask is None:   # plain GIN: no mask, every edge equal → the explanation is a random pick
            mask = np.zeros(len(edge_positions(gs, inputs.idx)), np.float32)

        def compute(model: Any = model, mask: np.ndarray = mask, i: int = i) -> list[dict]:
            out = []
            for kind in kinds:
                m = gs.edge_gt[edge_positions(gs, inputs.idx)].astype(float) if kind == "ground_truth" else mask
                sc = evaluate_faith(model, gs, inputs.idx, m, ratio=s.ratio, budgets=list(s.budgets),
                                    n_samples=s.samples, seed=s.seed + i, random_explanation=kind == "random",
                                    device=device)
                out += [{"seed": inputs.blob["seeds"][i], "explanation": kind, "budget": b,
                         **{k: _number(v[j]) for k, v in sc.items()}} for j, b in enumerate(s.budgets)]
            return out
        rows += run.cached(f"faith_seed{inputs.blob['seeds'][i]}", compute, fmt="json")
    return rows


def _number(v: Any) -> float | int | None:
    """A JSON-safe number: counts as int, NaN (no graph had the test) as None."""
    if isinstance(v, np.integer):
        return int(v)
    return None if np.isnan(v) else float(v)


def faith_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean FAITH per explanation kind and the paper's ratio FAITH(random) / FAITH(model), per budget and
    overall (Table 11 averages the ratio over the budgets)."""
    def mean(kind: str, budget: float | None = None) -> float | None:
        vals = [r["faith"] for r in rows if r["explanation"] == kind and r["faith"] is not None
                and (budget is None or r["budget"] == budget)]
        return float(np.mean(vals)) if vals else None

    kinds = sorted({r["explanation"] for r in rows})
    budgets = sorted({r["budget"] for r in rows})
    ratios = [(mean("random", b) or 0.0) / m for b in budgets if (m := mean("model", b))]
    return {"mean_faith": {k: mean(k) for k in kinds},
            "random_over_model": float(np.mean(ratios)) if ratios else None}


# ---------------------------------------------------------------------------------------- explain
@dataclass(frozen=True)
class ExplainSettings:
    model: str = ""
    data: str | None = None
    synthetic: str | None = None
    n_graphs: int = 2000
    top_k: int = 6
    seed_index: int = 0
    max_graphs: int = 0
    seed: int = 0
    device: str = "auto"


@dataclass
class ExplainInputs:
    settings: ExplainSettings
    data: GraphSet
    model: Any
    blob: dict


def prepare_explain(settings: ExplainSettings) -> ExplainInputs:
    model, blob = load_model(settings.model, seed_index=settings.seed_index)
    gs, source = load_graphs(settings.data, settings.synthetic, settings.n_graphs, settings.seed)
    check_compatible(blob, gs, source)
    # labels, predictions, probabilities and the rule read in the model's classes: data whose labels use only
    # some of them would otherwise name (and keep) fewer classes than the model outputs
    gs = replace(gs, class_names=list(blob["class_names"]))
    return ExplainInputs(settings, gs, model, blob)


def explain_graphs(inputs: ExplainInputs) -> list[dict[str, Any]]:
    """One record per graph: prediction, channel relevances, the rule's terms on this graph, top-k edges."""
    from paperkit.core.devices import resolve_device

    s, gs, model = inputs.settings, inputs.data, inputs.model
    device = resolve_device(s.device)
    model.to(device)
    n = gs.n_graphs if s.max_graphs == 0 else min(gs.n_graphs, s.max_graphs)
    idx = np.arange(n)
    pred = predict(model, gs, idx, device=device)
    rule = export_rule(model, gs, pred) if model.channels != "gnn" else None
    rel = model.relevance()
    eptr, names = gs.edge_ptr(), list(gs.feature_names) + (["nodes"] if rule and model.rule.constant else [])
    counts = np.add.reduceat(gs.x, gs.graph_ptr[:-1], axis=0)
    if rule and model.rule.constant:
        counts = np.concatenate([counts, np.diff(gs.graph_ptr)[:, None]], axis=1)
    out = []
    for g in idx:
        rec: dict[str, Any] = {"graph": int(g), "label": gs.class_names[gs.y[g]],
                               "prediction": gs.class_names[int(pred["probs"][g].argmax())],
                               "probs": {c: float(p) for c, p in zip(gs.class_names, pred["probs"][g], strict=True)},
                               "gnn_relevance": None if rel is None else rel[0],
                               "rule_relevance": None if rel is None else rel[1]}
        if rule and rule["kind"] == "binary":
            rec["rule_terms"] = {n: float(rule["terms"][n] * c) for n, c in zip(names, counts[g], strict=True)}
            rec["rule_score"] = float(sum(rec["rule_terms"].values()) + rule["bias"])
        if pred["mask"] is not None:
            ea, eb = eptr[g], eptr[g + 1]
            m, local = pred["mask"][ea:eb], gs.edge_index[:, ea:eb] - gs.graph_ptr[g]
            pairs = set(zip(local[0].tolist(), local[1].tolist(), strict=True))
            one_way = np.array([j for j, (u, v) in enumerate(local.T.tolist()) if u < v or (v, u) not in pairs],
                               dtype=np.int64)   # an undirected edge once
            top = one_way[np.argsort(-m[one_way], kind="stable")[:s.top_k]]
            rec["top_edges"] = [[int(local[0, j]), int(local[1, j]), float(m[j])] for j in top]
        out.append(rec)
    return out

