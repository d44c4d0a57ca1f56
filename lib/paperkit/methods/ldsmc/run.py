"""Orchestration of ldsmc-train, ldsmc-restore and ldsmc-bench: settings (every default), input checks
(``prepare_*``: everything is read and validated before a run dir exists) and the runs (``execute_*``:
long parts are ``run.cached`` stages, the one checkpoint/resume mechanism).

Data files are the same bytes for the same seed: wall times go to ``timing.csv``, never into metrics.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError
from paperkit.methods.ldsmc.restore import RestoreParams as _SAMPLER

CLASSIFIER_FILE = "classifier.npz"
TIMING_KEYS = ("seconds", "seconds_per_image")
SWEEPABLE = ("particles", "s", "kappa1", "kappa2", "rho", "gibbs", "steps")
INT_SWEEPS = ("particles", "s", "gibbs", "steps")
# each swept value gets the range of its own option (--kappa1 etc.; a test compares them with the CLI's)
SWEEP_RANGES: dict[str, tuple[float, float | None]] = {
    "particles": (1, None), "s": (0, None), "kappa1": (0, 1e3), "kappa2": (0, 1e3), "rho": (0, 1),
    "gibbs": (1, 1000), "steps": (1, None)}


# ------------------------------------------------------------------------------------------- inputs
def _read_png(path: Path) -> np.ndarray:
    import matplotlib.image as mpimg

    try:
        img = np.asarray(mpimg.imread(path), dtype=np.float32)
    except Exception as e:
        raise InputError(f"{path}: not a readable PNG image ({type(e).__name__})") from None
    if img.max() > 1.0:
        img = img / 255.0
    if img.ndim == 2:
        img = img[None]
    else:
        img = np.moveaxis(img[..., :3], -1, 0)
    return img * 2.0 - 1.0


def load_user_images(paths: list[str | Path], image_shape: tuple[int, ...]) -> np.ndarray:
    """Images from .npy files ((n, C, H, W), (C, H, W), (n, H, W) or (H, W), values in [−1, 1]) or PNG files
    (scaled to [−1, 1]); every image must have the prior's (C, H, W)."""
    from paperkit.core.readers import read_numeric

    c, h, w = image_shape
    out = []
    for p in map(Path, paths):
        io.require_file(p)
        if p.suffix.lower() == ".png":
            a = _read_png(p)
            if a.shape[0] != c and c == 1:
                a = a[:3].mean(0, keepdims=True)  # grey prior, colour file: use the luminance-like mean
            a = a[None]
        elif p.suffix.lower() == ".npy":
            a = read_numeric(p, "images", ndim=(2, 3, 4), dtype=np.float32)
            if a.ndim == 2:
                a = a[None, None]
            elif a.ndim == 3:
                a = a[None] if a.shape[0] == c and c != a.shape[1] else a[:, None]
        else:
            raise InputError(f"{p}: expected a .npy or .png image file")
        if a.ndim != 4 or tuple(a.shape[1:]) != (c, h, w):
            raise InputError(f"{p}: images of shape {tuple(a.shape[1:]) if a.ndim == 4 else a.shape} do not fit the "
                             f"model; expected (n, {c}, {h}, {w}) ({c} channel(s), {h}×{w} pixels)")
        if not np.isfinite(a).all():
            raise InputError(f"{p}: contains NaN or inf")
        if a.min() < -1.001 or a.max() > 1.001:
            raise InputError(f"{p}: values in [{a.min():.3g}, {a.max():.3g}]; expected images scaled to [-1, 1]")
        out.append(a)
    if not out:
        raise InputError("no images given")
    return np.concatenate(out).astype(np.float32)


def read_mask(path: str | os.PathLike, image_shape: tuple[int, ...], n: int) -> Any:
    """A 0/1 inpainting mask file for ``n`` images: (H, W), (C, H, W) or (1 or n, C, H, W)."""
    from paperkit.core.readers import read_numeric
    from paperkit.methods.ldsmc import operators as ops

    name = io.display_name(path)
    arr = read_numeric(path, "mask", dtype=np.float32)
    c, h, w = image_shape
    if arr.ndim not in (2, 3, 4) or tuple(arr.shape[-2:]) != (h, w):
        raise InputError(f"{name}: mask of shape {arr.shape} does not fit images of shape {tuple(image_shape)}; "
                         f"expected ({h}, {w}), ({c}, {h}, {w}) or (n, {c}, {h}, {w})")
    try:
        m = ops.check_mask(arr, image_shape)
    except InputError as e:
        raise InputError(f"{name}: {e}") from None
    if m.shape[0] not in (1, n):
        raise InputError(f"{name}: {m.shape[0]} masks for {n} images; expected 1 or {n}")
    return ops.MaskOperator(m.expand(n, *m.shape[1:]).contiguous(), "mask")


def save_classifier(path: str | Path, classifier) -> None:
    io.write_arrays(path, classifier.weights)


def load_classifier(model_dir: str | Path, n_features: int | None = None):
    """The digits classifier of a model folder (None if it has none); its arrays are checked for the keys, the
    shapes (``n_features`` inputs: the prior's pixels) and finiteness, since it is first used after the run
    dir exists."""
    from paperkit.core.validate import check_finite_weights

    from .metrics import DigitsClassifier

    p = Path(model_dir) / CLASSIFIER_FILE
    if not p.exists():
        return None
    arrays = io.read_arrays(p)
    missing = [k for k in ("W1", "b1", "W2", "b2", "classes") if k not in arrays]
    if missing:
        raise InputError(f"{p}: no {', '.join(missing)} array(s); expected W1, b1, W2, b2 and classes as "
                         "'paperkit ldsmc-train' writes them")
    for k in ("W1", "b1", "W2", "b2", "classes"):
        if arrays[k].dtype.kind not in "iuf":
            raise InputError(f"{p}: {k} holds {arrays[k].dtype} values; expected numbers")
    w1, classes = arrays["W1"], arrays["classes"]
    if w1.ndim != 2 or classes.ndim != 1 or 0 in (*w1.shape, *classes.shape):
        name, arr = ("W1", w1) if w1.ndim != 2 or 0 in w1.shape else ("classes", classes)
        raise InputError(f"{p}: {name} has shape {arr.shape}; expected W1 (pixels, hidden) and classes (classes,)")
    d = n_features if n_features is not None else w1.shape[0]
    h, k = w1.shape[1], classes.shape[0]
    for name, shape in {"W1": (d, h), "b1": (h,), "W2": (h, k), "b2": (k,)}.items():
        if tuple(arrays[name].shape) != shape:
            raise InputError(f"{p}: {name} has shape {tuple(arrays[name].shape)}; expected {shape} for {d} "
                             f"pixels, {h} hidden units and {k} classes")
    check_finite_weights(arrays, str(p))
    return DigitsClassifier.from_arrays(arrays)


def user_prior(path: str | os.PathLike):
    """Import the user's Python file and call its build_prior() (this runs the file's code: the CLI accepts
    it only from the command line)."""
    import importlib.util

    from paperkit.methods.ldsmc.models import LatentPrior

    if not Path(path).is_file():
        raise InputError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location("paperkit_user_prior", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise InputError(f"{path}: importing it failed ({type(e).__name__}: {e})") from None
    if not callable(getattr(module, "build_prior", None)):
        raise InputError(f"{path}: defines no build_prior() function")
    prior = module.build_prior()
    if not isinstance(prior, LatentPrior):
        raise InputError(f"{path}: build_prior() returned {type(prior).__name__}, expected a LatentPrior")
    if len(prior.image_shape) != 3:
        raise InputError(f"{path}: the prior's image_shape {prior.image_shape} is not (C, H, W)")
    return prior


# ------------------------------------------------------------------------------------- ldsmc-train
@dataclass(frozen=True)
class LdsmcTrainSettings:
    """Every parameter of ``paperkit ldsmc-train`` and its default."""

    data: str = "digits"
    vae_iters: int = 1500
    ldm_iters: int = 4000
    vae_width: int = 32
    ldm_width: int = 256
    diffusion_steps: int = 200
    batch_size: int = 128
    classifier_iters: int = 300
    seed: int = 0
    device: str = "auto"
    max_memory_gb: float | None = None


@dataclass
class TrainInputs:
    settings: LdsmcTrainSettings
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


@dataclass
class TrainResult:
    prior: Any
    vae: Any
    eps: Any
    schedule: Any
    shift: float
    scale: float
    recon_rmse: float
    classifier: Any
    classifier_accuracy: float | None
    log: list[dict]
    samples: np.ndarray


def train_memory_bytes(s: LdsmcTrainSettings) -> float:
    """Parameters (×4: weights, gradients, two Adam moments) and activations of both networks, from the options."""
    w, lw, b = float(s.vae_width), float(s.ldm_width), float(s.batch_size)
    vae_params = 9 * (w * w * 3 + w * w / 2 * 2) + 10 * w
    ldm_params = 3 * lw * lw + 64 * lw
    activations = b * 16 * 16 * w * 8 + 2 * b * lw * 8
    return 4 * 4 * (vae_params + ldm_params) + 4 * activations


def prepare_ldsmc_train(s: LdsmcTrainSettings) -> TrainInputs:
    from paperkit.core.devices import resolve_device
    from paperkit.core.errors import ResourceError
    from paperkit.core.resources import MEMORY_FLAG, check_memory
    from paperkit.methods.ldsmc.data import load_dataset

    try:  # here, not in execute: a missing GPU must be refused before the run dir exists
        resolve_device(s.device)
    except ResourceError as e:
        raise UsageError(str(e)) from None
    check_memory(train_memory_bytes(s), f"a VAE of width {s.vae_width} and an ε-network of width {s.ldm_width} "
                 f"at batch size {s.batch_size}", limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)
    x_train, y_train = load_dataset(s.data, "train", s.seed)
    x_test, y_test = load_dataset(s.data, "test", s.seed)
    return TrainInputs(s, x_train, y_train, x_test, y_test)


def execute_ldsmc_train(inputs: TrainInputs, run: Any, progress: Callable[..., Any] | None = None) -> TrainResult:
    """Stages vae → ldm → classifier (digits), each a ``run.cached`` checkpoint; then prior samples."""
    import torch

    from paperkit.core.devices import resolve_device
    from paperkit.methods.ldsmc import train as tr
    from paperkit.methods.ldsmc.metrics import DigitsClassifier
    from paperkit.methods.ldsmc.models import ConvVAE, EpsMLP, Schedule, prior_from_trained
    from paperkit.methods.ldsmc.sampling import sample_prior

    if progress is None:
        from paperkit.core.progress import progress
    s = inputs.settings
    device = resolve_device(s.device)

    def fit(name: str, iters: int, train: Callable[..., tuple]) -> tuple:
        with progress(total=iters, desc=f"ldsmc-train {name}", unit="step") as bar:
            return train(lambda step, loss: (bar.update(1), bar.set_postfix(loss=f"{loss:.4f}")))

    def vae_stage() -> dict:
        vae, log = fit("vae", s.vae_iters, lambda on: tr.train_vae(
            inputs.x_train, iters=s.vae_iters, batch=s.batch_size, width=s.vae_width, seed=s.seed, on_step=on,
            device=device))
        return {"config": vae.config, "state_dict": _cpu(vae.state_dict()), "log": log}

    v = run.cached("vae", vae_stage, fmt="pt")
    vae = ConvVAE(**v["config"])
    vae.load_state_dict(v["state_dict"])
    vae.eval()
    latents, shift, scale = tr.latent_stats(vae, inputs.x_train)
    rmse = tr.reconstruction_rmse(vae, inputs.x_test)

    def ldm_stage() -> dict:
        eps, sched, log = fit("ldm", s.ldm_iters, lambda on: tr.train_ldm(
            (latents - shift) / scale, T=s.diffusion_steps, iters=s.ldm_iters, batch=s.batch_size * 2,
            width=s.ldm_width, seed=s.seed, on_step=on, device=device))
        return {"config": eps.config, "schedule": sched.state(), "state_dict": _cpu(eps.state_dict()), "log": log}

    m = run.cached("ldm", ldm_stage, fmt="pt")
    eps = EpsMLP(tuple(m["config"]["latent_shape"]), m["config"]["width"], m["config"]["depth"],
                 m["config"]["emb_dim"])
    eps.load_state_dict(m["state_dict"])
    eps.eval()
    sc = m["schedule"]
    schedule = Schedule(sc["T"], sc["beta_start"], sc["beta_end"])
    clf = acc = None
    if s.data == "digits":
        weights = run.cached("classifier", lambda: DigitsClassifier(seed=s.seed).fit(
            inputs.x_train, inputs.y_train, max_iter=s.classifier_iters).weights, fmt="npz")
        clf = DigitsClassifier.from_arrays(weights)
        acc = clf.accuracy(inputs.x_test, inputs.y_test)
    log = [{"stage": "vae", **r} for r in v["log"]] + [{"stage": "ldm", **r} for r in m["log"]]
    with torch.no_grad():
        prior = prior_from_trained(vae, eps, schedule, shift, scale, rmse)
    prior.data = s.data
    samples = sample_prior(prior, 32, steps=50, seed=s.seed)
    return TrainResult(prior, vae, eps, schedule, shift, scale, rmse, clf, acc, log, samples)


def _cpu(state: dict) -> dict:
    return {k: v.detach().cpu().clone() for k, v in state.items()}


# --------------------------------------------------------------------------- ldsmc-restore / -bench
@dataclass(frozen=True)
class ProblemSettings:
    """The inverse problem and the sampler: shared by ldsmc-restore and ldsmc-bench."""

    task: str = "box"
    tau: float = 0.05
    n_images: int = 16
    box: int = 8
    box_top: int | None = None
    box_left: int | None = None
    random_box: bool = False
    missing: float = 0.7
    # the sampler: defaults are the library's RestoreParams (one source; restore.py says why)
    particles: int = _SAMPLER.particles
    steps: int = _SAMPLER.steps
    s: int = _SAMPLER.s
    kappa1: float = _SAMPLER.kappa1
    kappa2: float = _SAMPLER.kappa2
    rho: float = _SAMPLER.rho
    gibbs: int = _SAMPLER.gibbs
    loglik: str = _SAMPLER.loglik
    aux_var: str = _SAMPLER.aux_var
    refine_iters: int = _SAMPLER.refine_iters
    lsq_iters: int = _SAMPLER.lsq_iters
    zeta: float = _SAMPLER.zeta
    gamma: float = _SAMPLER.gamma
    cauchy_scale: float = _SAMPLER.cauchy_scale
    pfld_stage: float = _SAMPLER.pfld_stage
    ode_steps: int = _SAMPLER.ode_steps
    langevin_steps: int = _SAMPLER.langevin_steps
    langevin_lr: float = _SAMPLER.langevin_lr
    seed: int = 0
    device: str = "auto"
    max_memory_gb: float | None = None

    def restore_params(self) -> Any:
        from paperkit.methods.ldsmc.restore import RestoreParams

        names = {f.name for f in fields(RestoreParams)}
        return RestoreParams(**{k: getattr(self, k) for k in names if hasattr(self, k)})


@dataclass(frozen=True)
class LdsmcRestoreSettings(ProblemSettings):
    """Every parameter of ``paperkit ldsmc-restore`` and its default."""

    method: str = "ldsmc"


@dataclass(frozen=True)
class LdsmcBenchSettings(ProblemSettings):
    """Every parameter of ``paperkit ldsmc-bench`` and its default."""

    methods: tuple[str, ...] = ("ldsmc", "ltds", "ldps", "psld", "pfld", "latentdaps", "resample", "bootstrap", "lsq")
    sweep: str | None = None
    values: tuple[float, ...] | None = None
    n_seeds: int = 1


@dataclass
class Problem:
    prior: Any
    classifier: Any
    truth: np.ndarray
    labels: np.ndarray | None
    op: Any
    y: Any
    seed: int


@dataclass
class RestoreInputs:
    settings: ProblemSettings
    problems: list[Problem]
    entries: list[tuple[str, str, Any]]      # (name, method, RestoreParams)
    files: list[str] = field(default_factory=list)


def _check_device(name: str) -> None:
    """The samplers run on the CPU: ``cuda`` is refused rather than silently ignored."""
    if name == "cuda":
        raise UsageError("--device cuda: the LD-SMC samplers run on the CPU only (their tensors and random "
                         "generators are CPU ones); use --device cpu or auto")


def _load_model(model: str | os.PathLike) -> tuple[Any, Any]:
    from paperkit.methods.ldsmc.train import load_prior

    if str(model).endswith(".py"):
        return user_prior(model), None
    if not Path(model).exists():
        raise InputError(f"{model}: no such folder; expected one written by 'paperkit ldsmc-train'")
    prior = load_prior(model)
    return prior, load_classifier(model, int(np.prod(prior.image_shape)))


def _problem(s: ProblemSettings, prior: Any, classifier: Any, model: Any, images: list[str], mask: Any,
             seed: int) -> Problem:
    import torch

    from paperkit.methods.ldsmc import operators as ops
    from paperkit.methods.ldsmc.data import load_dataset

    labels = None
    if images:
        truth = load_user_images(list(images), prior.image_shape)
    else:
        if prior.image_shape != (1, 16, 16) or prior.data not in ("digits", "shapes"):
            raise InputError(f"{model}: no built-in test images for this model (trained on {prior.data}, images "
                             f"{prior.image_shape}); pass --images")
        truth, labels = load_dataset(prior.data, "test", seed=0)
        if s.n_images > len(truth):  # not silently fewer than asked for
            raise UsageError(f"--n-images {s.n_images}: the {prior.data} test split has {len(truth)} images; use "
                             f"--n-images {len(truth)} or fewer, or pass --images")
        truth, labels = truth[:s.n_images], labels[:s.n_images]
        if prior.data != "digits":
            labels = None  # the classifier metrics are for digits
    n = len(truth)
    if mask is not None:
        op = read_mask(mask, prior.image_shape, n)
    else:
        _, h, w = prior.image_shape
        if s.task == "box" and (s.box >= min(h, w) or (s.box_top or 0) + s.box > h or (s.box_left or 0) + s.box > w):
            raise UsageError(f"--box {s.box} (top {s.box_top}, left {s.box_left}) does not leave observed pixels "
                             f"inside the model's {h}×{w} images (it covers everything); use a smaller box")
        op = ops.make_operator(s.task, n, prior.image_shape, seed=seed, box=s.box, box_top=s.box_top,
                               box_left=s.box_left, random_box=s.random_box, missing=s.missing)
    y = ops.measure(op, torch.from_numpy(truth), s.tau, seed=seed)
    return Problem(prior, classifier if labels is not None else None, truth, labels, op, y, seed)


def _check_sizes(s: ProblemSettings, prior: Any, n_images: int, entries: list[tuple[str, str, Any]]) -> None:
    from paperkit.core.resources import MEMORY_FLAG, check_memory

    usable = prior.schedule.T - 1
    for name, _, p in entries:
        if p.steps > usable:
            raise UsageError(f"--steps {p.steps} ({name}) is more than the model's {usable} usable diffusion steps "
                             f"(it was trained with {prior.schedule.T}); use --steps {usable} or fewer")
    c, h, w = prior.image_shape
    latent = int(np.prod(prior.latent_shape))
    most = max(p.particles for _, _, p in entries)
    # particles.npy (float64 and float32 copies), decoded images and their gradients, latents, per image
    need = float(n_images) * float(most) * (float(c * h * w) * 4 * 8 + latent * 8 * 8)
    check_memory(need, f"{n_images} images × {most} particles", limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)


def prepare_ldsmc_restore(s: ProblemSettings, model: str | os.PathLike, images: list[str] = (),
                          mask: str | os.PathLike | None = None) -> RestoreInputs:
    """Read the prior, the images and the mask, check the sizes, and measure y (one problem per seed)."""
    _check_device(s.device)
    params = s.restore_params()
    if isinstance(s, LdsmcBenchSettings):
        if s.values is not None and s.sweep is None:
            raise UsageError("--values is for --sweep; name the parameter they are values of (--sweep NAME)")
        if s.sweep is not None:
            if not s.values:
                raise UsageError("--sweep needs --values V1,V2,...")
            vals: list[Any] = list(s.values)
            if s.sweep in INT_SWEEPS:
                if any(v != int(v) for v in vals):
                    raise UsageError(f"--values: {s.sweep} takes whole numbers, got {', '.join(f'{v:g}' for v in vals)}")
                vals = [int(v) for v in vals]
            low, high = SWEEP_RANGES[s.sweep]
            bad = [v for v in vals if v < low or (high is not None and v > high)]
            if bad:
                span = f"lie in [{low:g}, {high:g}]" if high is not None else f"be at least {low:g}"
                raise UsageError(f"--values {_value_name(bad[0])}: {s.sweep} must {span}, as --{s.sweep} must")
            entries = [(f"{s.sweep}={_value_name(v)}", "ldsmc", replace(params, **{s.sweep: v})) for v in vals]
        else:
            entries = [(m, m, params) for m in s.methods]
        seeds = [s.seed + k for k in range(s.n_seeds)]
    else:
        entries = [(s.method, s.method, params)]
        seeds = [s.seed]
    prior, classifier = _load_model(model)
    first = _problem(s, prior, classifier, model, list(images), mask, seeds[0])
    _check_sizes(s, prior, len(first.truth), entries)
    problems = [first] + [_problem(s, prior, classifier, model, list(images), mask, k) for k in seeds[1:]]
    files = [os.fspath(f) for f in [*images, *([mask] if mask else [])]]
    if str(model).endswith(".py"):
        files.append(os.fspath(model))
    return RestoreInputs(s, problems, entries, files)


@dataclass
class RestoreRun:
    metrics: dict            # no wall times (same seed, same bytes)
    timing: dict             # seconds, seconds_per_image
    restoration: Any         # Restoration (ldsmc-restore) or None
    restored: np.ndarray | None


def split_timing(m: dict) -> tuple[dict, dict]:
    return {k: v for k, v in m.items() if k not in TIMING_KEYS}, {k: m[k] for k in TIMING_KEYS if k in m}


def execute_ldsmc_restore(inputs: RestoreInputs, run: Any = None) -> RestoreRun:
    """One restoration (the first entry on the first problem) and its metrics."""
    from paperkit.methods.ldsmc.restore import evaluate, restore

    s = inputs.settings
    name, method, p = inputs.entries[0]
    pr = inputs.problems[0]
    res = restore(method, pr.prior, pr.op, pr.y, s.tau, p, seed=pr.seed)
    m = evaluate(res, pr.truth, pr.op, pr.y, classifier=pr.classifier, labels=pr.labels)
    m.update({"task": pr.op.name, "tau": s.tau, "n_images": len(pr.truth), "particles": res.particles.shape[1],
              "steps": p.steps, "seed": pr.seed, "vae_recon_rmse": pr.prior.recon_rmse})
    metrics, timing = split_timing(m)
    return RestoreRun(metrics, timing, res, res.restored)


@dataclass
class BenchResult:
    rows: list[dict]
    timing: list[dict]
    summary: list[dict]
    shown: dict[str, np.ndarray]

    def seconds_per_image(self, name: str) -> float:
        """Mean wall seconds per image of one entry over the seeds (from ``timing``)."""
        return float(np.mean([t["seconds_per_image"] for t in self.timing if t["method"] == name]))


def execute_ldsmc_bench(inputs: RestoreInputs, run: Any, progress: Callable[..., Any] | None = None) -> BenchResult:
    """Every (entry, seed) as a ``run.cached`` stage; mean, std and standard error over seeds per entry."""
    import torch

    from paperkit.methods.ldsmc.restore import evaluate, restore

    if progress is None:
        from paperkit.core.progress import progress
    s = inputs.settings
    rows, timing, shown = [], [], {}
    with progress(total=len(inputs.entries) * len(inputs.problems), desc="ldsmc-bench", unit="run") as bar:
        for name, method, p in inputs.entries:
            for k, pr in enumerate(inputs.problems):
                def compute(name=name, method=method, p=p, pr=pr, k=k) -> dict:
                    bar.set_postfix_str(name)
                    res = restore(method, pr.prior, pr.op, pr.y, s.tau, p, seed=pr.seed)
                    m = evaluate(res, pr.truth, pr.op, pr.y, classifier=pr.classifier, labels=pr.labels)
                    m["method"], m["seed"] = name, pr.seed
                    return {"metrics": m, "restored": torch.from_numpy(res.restored.copy()) if k == 0 else None}

                done = run.cached(f"{_stage_name(name)}_{k}", compute, fmt="pt")
                metrics, t = split_timing(done["metrics"])
                rows.append(metrics)
                timing.append({"method": name, "seed": metrics["seed"], **t})
                if k == 0:
                    shown[name] = done["restored"].numpy()
                bar.update(1)
    summary = []
    for name, _, _ in inputs.entries:
        mine = [r for r in rows if r["method"] == name]
        out: dict[str, Any] = {"method": name}
        for key in mine[0]:
            if key not in ("method", "seed") and isinstance(mine[0][key], (int, float)):
                vals = np.array([r[key] for r in mine], dtype=float)
                out[key], out[key + "_std"] = float(vals.mean()), float(vals.std())
                out[key + "_se"] = float(vals.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else 0.0
        summary.append(out)
    return BenchResult(rows, timing, summary, shown)


def _value_name(v: float) -> str:
    """A sweep value as it names its entry and checkpoint: ``:g`` (the names older runs used) when that reads
    back as the same number, else the exact ``repr``: 0.1 and 0.1000001 must not share a checkpoint."""
    if isinstance(v, int):
        return str(v)
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


def _stage_name(name: str) -> str:
    return name.replace("=", "-")


__all__ = ["CLASSIFIER_FILE", "LdsmcBenchSettings", "LdsmcRestoreSettings", "LdsmcTrainSettings", "ProblemSettings",
           "execute_ldsmc_bench", "execute_ldsmc_restore", "execute_ldsmc_train", "load_classifier",
           "load_user_images", "prepare_ldsmc_restore", "prepare_ldsmc_train", "read_mask", "save_classifier",
           "user_prior"]
