"""Orchestration of the sve commands: settings (the single source of defaults), ``prepare_*`` (read and
check every input before a run dir exists) and ``execute_*`` (stages through ``run.cached``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import resources
from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.methods.sve import inputs as sin
from paperkit.methods.sve.model import CONCAT_MODES, ROUTER_MODES
from paperkit.methods.sve.render import CLASSES, MIN_SIZE

PRETRAIN = ("primitives", "counts")
EVAL_SEED = 1_000_003        # the held-out set's seed when it is rendered (sizes other than the shipped one)
MAX_IMAGES = 1_000_000


def _check_size(size: int) -> None:
    if size < MIN_SIZE or size % 32:
        raise UsageError(f"--size {size}: expected a multiple of 32, at least {MIN_SIZE}")


def _image_bytes(n: int, size: int) -> float:
    return 2.0 * float(n) * size * size        # image + boundary map, uint8


# ------------------------------------------------------------------------------------------- render
@dataclass(frozen=True)
class RenderSettings:
    n: int = 200
    size: int = 128
    max_primitives: int = 4
    seed: int = 0
    jobs: int = 0


def prepare_render(s: RenderSettings) -> RenderSettings:
    _check_size(s.size)
    if not 1 <= s.n <= MAX_IMAGES:
        raise UsageError(f"--n {s.n}: expected 1..{MAX_IMAGES}")
    resources.check_memory(_image_bytes(s.n, s.size) * 1.5, f"rendering {s.n} diagrams of {s.size} px")
    return s


def execute_render(s: RenderSettings, progress: Any = default_progress) -> dict[str, np.ndarray]:
    from paperkit.methods.sve.train import render_dataset

    workers = _loader_workers(s.jobs, s.n)
    return render_dataset(s.seed, s.n, s.size, s.max_primitives, workers=workers, progress=progress)


def _loader_workers(jobs: int, n: int) -> int:
    """Render in worker processes only when there is enough to render to pay for starting them."""
    return 0 if n < 2000 else min(resources.resolve_jobs(jobs), 8)


# ------------------------------------------------------------------------------------------- encode
@dataclass(frozen=True)
class EncodeSettings:
    size: int = 128
    n_train: int = 8000
    epochs: int = 6
    probe_epochs: int = 10
    batch_size: int = 32
    lr: float = 2e-3
    router: str = "on"
    concat: str = "channel"
    pretrain: str = "primitives"
    max_primitives: int = 4
    widths: tuple[int, ...] = (32, 48, 96, 128)
    channels: int = 64
    grid: int = 16
    n_eval: int = 200
    junction_threshold: float = 0.3
    half: bool = False
    dtype: str = "float32"
    router_baselines: bool = False
    seed: int = 0
    device: str = "auto"
    jobs: int = 0

    def model_config(self) -> dict[str, Any]:
        return {"size": self.size, "widths": list(self.widths), "channels": self.channels, "grid": self.grid,
                "router": self.router, "concat": self.concat, "pretrain": self.pretrain, "drop": 0.1,
                "junction_threshold": self.junction_threshold, "max_primitives": self.max_primitives}


@dataclass
class EncodeInputs:
    settings: EncodeSettings
    eval_data: dict[str, np.ndarray]
    eval_source: str
    device: Any


def prepare_encode(s: EncodeSettings, eval_path: str | None = None) -> EncodeInputs:
    from paperkit.core.devices import resolve_device

    _check_size(s.size)
    if s.router not in ROUTER_MODES or s.concat not in CONCAT_MODES or s.pretrain not in PRETRAIN:
        raise UsageError(f"--router {s.router} / --concat {s.concat} / --pretrain {s.pretrain}: unknown value")
    if len(s.widths) != 4 or min(s.widths) < 4:
        raise UsageError(f"--widths {','.join(map(str, s.widths))}: expected 4 stage widths of at least 4")
    if s.channels % 8:
        raise UsageError(f"--channels {s.channels}: expected a multiple of 8 (attention heads and the halved fused map)")
    if s.grid > s.size // 4:
        raise UsageError(f"--grid {s.grid}: at most --size/4 = {s.size // 4} tokens per side")
    resources.check_memory(_image_bytes(s.n_train, s.size) * 2, f"--n-train {s.n_train} diagrams of {s.size} px")
    device = resolve_device(s.device)
    if eval_path:
        data, source = sin.read_packed(eval_path, labels=True), str(eval_path)
    elif s.size == 128 and s.max_primitives == 4 and sin.SHIPPED_EVAL.exists():
        data, source = sin.read_packed(sin.SHIPPED_EVAL, labels=True), "shipped eval200.npz"
    else:
        from paperkit.methods.sve.render import render_set

        data, source = render_set(EVAL_SEED, s.n_eval, s.size, s.max_primitives), f"rendered (seed {EVAL_SEED})"
    if data["images"].shape[1:] != (s.size, s.size):
        raise UsageError(f"{source}: images are {data['images'].shape[2]}x{data['images'].shape[1]} px but --size is {s.size}")
    return EncodeInputs(s, data, source, device)


@dataclass
class EncodeResult:
    models: dict[str, Any]
    state: dict[str, Any]
    metrics: dict[str, Any]
    curves: list[dict[str, Any]]
    preds: list[dict[str, Any]]


def execute_encode(inp: EncodeInputs, run: Any, progress: Any = default_progress) -> EncodeResult:
    """Stages: train data, primitive (or counts) encoder, [heads on a frozen counts encoder], global
    counts encoder, router + probe, evaluation of the saved model."""
    import torch

    from paperkit.methods.sve import train as T

    s, dev = inp.settings, inp.device
    resources.set_threads(s.jobs)
    config = s.model_config()
    data = run.cached("train_data", lambda: T.render_dataset(s.seed, s.n_train, s.size, s.max_primitives,
                                                             workers=_loader_workers(s.jobs, s.n_train),
                                                             progress=progress), fmt="npz")
    def seeded_models(seed: int) -> dict[str, Any]:
        torch.manual_seed(seed)         # initial weights depend on the seed only, not on earlier work
        return T.build_models(config)

    def fit(key: str, kind: str, seed: int, base: dict | None = None, parts: Any = None) -> dict[str, Any]:
        module = seeded_models(seed)[key]
        if base is not None:
            module.load_state_dict(base)
        curves = T.train_encoder(module, data, kind=kind, epochs=s.epochs, batch_size=s.batch_size, lr=s.lr, seed=seed,
                                 device=dev, train_parts=parts, dtype=s.dtype, progress=progress)
        return {"state": {k: v.cpu() for k, v in module.state_dict().items()}, "curves": curves}

    if s.pretrain == "primitives":
        enc = run.cached("encoder", lambda: fit("encoder", "primitives", s.seed), fmt="pt")
        enc_curves = enc["curves"]
    else:   # same-size encoder trained on counts only; its heads are then fitted on frozen features
        counts = run.cached("encoder_counts", lambda: fit("global", "counts", s.seed + 1), fmt="pt")
        trunk = {k: v for k, v in counts["state"].items() if k.startswith(("backbone.", "fpn."))}
        base = {**seeded_models(s.seed)["encoder"].state_dict(), **trunk}
        enc = run.cached("encoder", lambda: fit("encoder", "heads", s.seed, base, T.head_parameters), fmt="pt")
        enc_curves = counts["curves"] + enc["curves"]
    glob = run.cached("global", lambda: fit("global", "counts", s.seed + 2), fmt="pt")

    def fit_probe(cfg: dict[str, Any] = config) -> dict[str, Any]:
        torch.manual_seed(s.seed + 3)
        models = T.build_models(cfg)
        models["encoder"].load_state_dict(enc["state"])
        models["global"].load_state_dict(glob["state"])
        for m in models.values():
            m.to(dev)
        curves = T.train_probe(models["encoder"], models["global"], models["router"], models["probe"], data,
                               epochs=s.probe_epochs, batch_size=4 * s.batch_size, lr=s.lr, grid=s.grid, seed=s.seed + 3,
                               device=dev, progress=progress)
        return {"router": {k: v.cpu() for k, v in models["router"].state_dict().items()},
                "probe": {k: v.cpu() for k, v in models["probe"].state_dict().items()}, "curves": curves}

    probe = run.cached("probe", fit_probe, fmt="pt")
    baselines = {}
    for mode in ([m for m in ROUTER_MODES if m != s.router] if s.router_baselines else []):
        # The same frozen encoders, only the router differs: the controlled comparison of the claim.
        cfg = {**config, "router": mode}
        other = run.cached(f"probe_{mode.replace('-', '_')}", lambda cfg=cfg: fit_probe(cfg), fmt="pt")
        ms = T.build_models(cfg)
        for key, st in (("encoder", enc["state"]), ("global", glob["state"]), ("router", other["router"]),
                        ("probe", other["probe"])):
            ms[key].load_state_dict(st)
            ms[key].to(dev).eval()
        baselines[mode] = T.probe_metrics(ms, inp.eval_data, grid=s.grid, batch_size=64, device=dev)
    models = T.build_models(config)
    for key, state in (("encoder", enc["state"]), ("global", glob["state"]), ("router", probe["router"]),
                       ("probe", probe["probe"])):
        models[key].load_state_dict(state)
    # Evaluate the weights exactly as saved (float16 when --half), so predict reproduces these metrics.
    state = sin.model_state(models, config, {}, s.half)
    for key in models:
        models[key].load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state[key].items()})
        models[key].to(dev).eval()
    metrics = T.evaluate(models, inp.eval_data, grid=s.grid, batch_size=64, device=dev,
                         junction_threshold=s.junction_threshold)
    metrics["eval_set"] = inp.eval_source
    if baselines:
        metrics["router_baselines"] = baselines
    state["metrics"] = metrics
    preds, _ = T.predict(models["encoder"], inp.eval_data["images"][:8], batch_size=8, device=dev,
                         junction_threshold=s.junction_threshold)
    return EncodeResult(models, state, metrics, enc_curves + glob["curves"] + probe["curves"], preds)


# ------------------------------------------------------------------------------------ predict / eval
@dataclass(frozen=True)
class PredictSettings:
    batch_size: int = 32
    score_threshold: float = 0.3
    device: str = "auto"
    jobs: int = 0


@dataclass
class PredictInputs:
    settings: PredictSettings
    names: list[str]
    images: list[np.ndarray]
    data: dict[str, np.ndarray] | None
    models: dict[str, Any]
    config: dict[str, Any]
    stored_metrics: dict[str, Any]
    device: Any
    model_path: Path
    images_path: Path


def _load(model: str, device_name: str) -> tuple:
    from paperkit.core.devices import resolve_device

    device = resolve_device(device_name)
    models, config, stored = sin.load_model(model, device)
    return models, config, stored, device


def prepare_predict(s: PredictSettings, images: str, model: str, *, want_metrics: bool) -> PredictInputs:
    path = sin.BUILTIN_DATA.get(images, Path(images))
    if path.is_dir():
        names, imgs = sin.read_folder(path)
        data = None
    else:
        data = _labelled(path) if want_metrics else sin.read_packed(path, labels=False)
        names = [str(i) for i in range(len(data["images"]))]
        imgs = list(data["images"])
    if want_metrics and data is None:
        raise UsageError("--metrics needs a labelled NPZ (from sve-render) as --images, not a folder of images")
    # the uint8 images, plus one batch of activations (~100 float32 values per pixel across the pyramid)
    largest = max(float(im.size) for im in imgs)
    resources.check_memory(float(sum(im.size for im in imgs)) + s.batch_size * largest * 400, "predicting these images")
    models, config, stored, device = _load(model, s.device)
    return PredictInputs(s, names, imgs, data, models, config, stored, device, sin.resolve_model(model), path)


def _padded(img: np.ndarray) -> np.ndarray:
    """White padding (bottom/right) to a multiple of 32: the FPN needs whole cells; coordinates unchanged."""
    h, w = img.shape
    return np.pad(img, ((0, -h % 32), (0, -w % 32)), constant_values=255)


def execute_predict(inp: PredictInputs, progress: Any = default_progress) -> tuple[list[dict], list[np.ndarray], dict | None]:
    """JSON rows (one per image), boundary maps, and metrics when the input holds labels."""
    import torch

    from paperkit.methods.sve import train as T

    s, cfg = inp.settings, inp.config
    resources.set_threads(s.jobs)
    groups: dict[tuple, list[int]] = {}
    for i, im in enumerate(inp.images):
        groups.setdefault(_padded(im).shape, []).append(i)
    rows: list[dict | None] = [None] * len(inp.images)
    edges: list[np.ndarray | None] = [None] * len(inp.images)
    for idx in progress(list(groups.values()), desc="predict", unit="group"):
        stack = np.stack([_padded(inp.images[i]) for i in idx])
        router = inp.models["router"]
        preds, edge, (q, levels) = T.predict(inp.models["encoder"], stack, batch_size=s.batch_size, device=inp.device,
                                             junction_threshold=cfg["junction_threshold"],
                                             global_encoder=inp.models["global"], grid=cfg["grid"])
        with torch.no_grad():   # the image-only level weights (no question context)
            gates = router(q, levels)[1] if router.mode != "on" else router.weights(q, levels)
        weights = gates.cpu().numpy().astype(np.float64)
        for k, i in enumerate(idx):
            h, w = inp.images[i].shape
            rows[i] = _row(inp.names[i], preds[k], weights[k], s.score_threshold, router.mode)
            edges[i] = edge[k][:h, :w]
    metrics = None
    if inp.data is not None and sin.has_labels(inp.data) and all(im.shape == inp.images[0].shape for im in inp.images):
        metrics = T.evaluate(inp.models, inp.data, grid=cfg["grid"], batch_size=64, device=inp.device,
                             junction_threshold=cfg["junction_threshold"])
    return rows, edges, metrics


def _row(name: str, pred: dict, weights: np.ndarray, threshold: float, mode: str) -> dict:
    from paperkit.methods.sve.train import LEVEL_NAMES

    keep = pred["scores"] >= threshold
    return {"image": name,
            "boxes": [[round(float(v), 3) for v in b] for b in pred["boxes"][keep]],
            "classes": [CLASSES[int(c)] for c in pred["classes"][keep]],
            "scores": [round(float(v), 6) for v in pred["scores"][keep]],
            "junctions": [[round(float(v), 3) for v in p] for p in pred["junctions"]],
            "router_weights": None if mode == "global-only" else
            {n: round(float(v), 6) for n, v in zip(LEVEL_NAMES, weights, strict=True)}}


def _labelled(path: str | Path) -> dict[str, np.ndarray]:
    """A labelled NPZ whose image sides are multiples of 32 (labels are not moved by padding)."""
    packed = sin.read_packed(path, labels=True)
    h, w = packed["images"].shape[1:]
    if h % 32 or w % 32:
        raise InputError(f"{path}: images are {w}x{h} px; scoring needs sides that are multiples of 32 "
                         "(as sve-render writes them)")
    return packed


@dataclass(frozen=True)
class EvalSettings:
    batch_size: int = 64
    device: str = "auto"
    jobs: int = 0


def prepare_eval(s: EvalSettings, data: str, model: str) -> tuple:
    packed = _labelled(data)
    models, config, stored, device = _load(model, s.device)
    return packed, models, config, device


def execute_eval(s: EvalSettings, packed: dict, models: dict, config: dict, device: Any) -> dict[str, Any]:
    from paperkit.methods.sve.train import evaluate

    resources.set_threads(s.jobs)
    return evaluate(models, packed, grid=config["grid"], batch_size=s.batch_size, device=device,
                    junction_threshold=config["junction_threshold"])


def boundary_files(names: list[str], boundary_dir: str | Path, images_path: Path) -> list[Path]:
    """Where sve-predict --boundary-dir writes each image's map: ``<stem>_boundary.png``, or
    ``<name>_boundary.png`` for every image when two share a stem (a.png and a.jpg wrote one file)."""
    folder = Path(boundary_dir)
    if images_path.is_dir() and folder.resolve() == images_path.resolve():
        raise UsageError(f"--boundary-dir {boundary_dir} is the --images folder: the maps would be read as "
                         "images on the next run; write them elsewhere")
    stems = [Path(n).stem for n in names]
    keys = stems if len(set(stems)) == len(stems) else [Path(n).name for n in names]
    return [folder / f"{k}_boundary.png" for k in keys]
