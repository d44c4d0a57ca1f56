"""Fitting the VAR transformer and its baselines: Adam on minibatches (MSE for ``regress``, flow matching for
``flow``), one seed at a time or the seeds of one sweep cell as one batched model (``stack_module_state`` +
``vmap``), and the metrics a run reports."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from paperkit.core.seeding import seed_torch, torch_generator
from paperkit.methods.var_approx import pyramid as pyr
from paperkit.methods.var_approx.model import (
    build_model,
    linear_floor,
    parameter_count,
    set_target_scale,
    standardize,
)
from paperkit.methods.var_approx.targets import make_target

LR_SCHEDULES = ("constant", "warmup-cosine")


@dataclass(frozen=True)
class Problem:
    """One fit: target, architecture and optimisation (the fields a sweep varies and those it holds).

    The optimiser's defaults (peak lr 1.5e-2, Adam β2 0.95, a linear warm-up over the first 5% of the steps
    and a cosine decay to 0, targets standardised per channel) were chosen on the example's fourier
    width sweep (validation sets, examples/var_approx/README.md); the spec's were a constant 3e-3, β2 0.999,
    raw targets (``lr=3e-3, lr_schedule="constant", beta2=0.999, standardize_targets=False``).
    """

    target: str = "fourier"
    lipschitz: float = 4.0
    pca_dim: int = 4
    bandwidth: float = 0.15
    init: tuple[int, int] = (2, 2)
    dim: int = 4
    scales: tuple[int, ...] = (2, 4, 8)
    embed: int = 32
    width: int = 64
    mask: str = "none"
    ablate: str = "none"
    readout: str = "last"
    head: str = "regress"
    steps: int = 1500
    batch_size: int = 64
    lr: float = 1.5e-2
    lr_schedule: str = "warmup-cosine"
    warmup_frac: float = 0.05
    beta2: float = 0.95
    standardize_targets: bool = True
    n_train: int = 2000
    n_test: int = 1000
    sample_steps: int = 20


@dataclass
class Data:
    x_train: torch.Tensor
    y_train: torch.Tensor   # (N, T, C): the readout tokens' targets
    x_test: torch.Tensor
    y_test: torch.Tensor
    side: int


def make_data(p: Problem, seed: int, dtype: torch.dtype = torch.float32) -> Data:
    """The seed's target and its train/test sets; inputs uniform on [0,1]^{h1×w1×d}."""
    rng = np.random.default_rng(seed)
    side = p.scales[-1]
    target = make_target(p.target, p.init, p.dim, side, lipschitz=p.lipschitz, pca_dim=p.pca_dim,
                         bandwidth=p.bandwidth, rng=rng)
    xs = [torch.from_numpy(rng.uniform(0, 1, (n, *p.init, p.dim))) for n in (p.n_train, p.n_test)]
    ys = [readout_targets(target(x), p) for x in xs]
    return Data(xs[0].to(dtype), ys[0].to(dtype), xs[1].to(dtype), ys[1].to(dtype), side)


def readout_targets(img: torch.Tensor, p: Problem) -> torch.Tensor:
    """The target of every readout token: the image's pixels (``last``) or its area pyramid (``pyramid``)."""
    if p.readout == "pyramid" and p.ablate != "no-pyramid":
        return pyr.target_pyramid(img, p.scales, p.init)
    return img.reshape(img.shape[0], -1, img.shape[-1])


def new_model(p: Problem, seed: int, dtype: torch.dtype = torch.float32,
              y_train: torch.Tensor | None = None) -> torch.nn.Module:
    """The seed's initial model; with ``p.standardize_targets`` it learns ``y_train`` standardised."""
    seed_torch(seed)
    model = build_model(p.init, p.dim, p.scales, embed=p.embed, width=p.width, mask=p.mask,
                        ablate=p.ablate, readout=p.readout, head=p.head).to(dtype)
    if p.standardize_targets and y_train is not None:
        set_target_scale(model, y_train)
    return model


def _last_scale(y: torch.Tensor, side: int) -> torch.Tensor:
    """The last scale's pixels of readout tokens (all of them for a ``last`` readout)."""
    return y[:, -side * side:]


def error_metrics(pred: torch.Tensor, y: torch.Tensor, side: int) -> dict[str, float]:
    """RMSE, relative L2 (‖pred − y‖/‖y‖) and max |error| on the last scale's image."""
    err = (_last_scale(pred, side) - _last_scale(y, side)).to(torch.float64)
    ref = _last_scale(y, side).to(torch.float64)
    return {"rmse": float(err.square().mean().sqrt()), "rel_l2": float(err.norm() / ref.norm()),
            "max_error": float(err.abs().max())}


def sliced_wasserstein(a: torch.Tensor, b: torch.Tensor, projections: int, generator: torch.Generator) -> float:
    """Sliced 2-Wasserstein distance between two equal-size point clouds (rows), random unit directions."""
    a, b = a.reshape(len(a), -1).to(torch.float64), b.reshape(len(b), -1).to(torch.float64)
    u = torch.randn(a.shape[1], projections, generator=generator, dtype=torch.float64)
    u = u / u.norm(dim=0)
    pa, pb = (a @ u).sort(dim=0).values, (b @ u).sort(dim=0).values
    return float((pa - pb).square().mean().sqrt())


def lr_at(p: Problem, step: int) -> float:
    """The learning rate of update ``step`` (0-based): constant, or a linear warm-up to ``p.lr`` over the first
    ``round(warmup_frac·steps)`` updates, then a cosine decay towards 0 at ``p.steps``."""
    if p.lr_schedule == "constant":
        return p.lr
    warm = round(p.warmup_frac * p.steps)
    if step < warm:
        return p.lr * (step + 1) / warm
    return p.lr * 0.5 * (1.0 + math.cos(math.pi * (step - warm) / max(1, p.steps - warm)))


def _adam(params: Sequence[torch.Tensor], p: Problem) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=lr_at(p, 0), betas=(0.9, p.beta2))


def _set_lr(opt: torch.optim.Optimizer, p: Problem, step: int) -> None:
    for group in opt.param_groups:
        group["lr"] = lr_at(p, step)


def _batches(n: int, p: Problem, seed: int) -> Callable[[], torch.Tensor]:
    g = torch_generator(seed)
    return lambda: torch.randint(n, (p.batch_size,), generator=g)


def train_regress(model: torch.nn.Module, feats: torch.Tensor, y: torch.Tensor, p: Problem, seed: int,
                  tick: Callable[[], None] = lambda: None) -> list[float]:
    """Adam on the minibatch MSE (in the model's standardised units); minibatches drawn from the seed. Returns
    the loss per step."""
    opt, batch, losses = _adam(list(model.parameters()), p), _batches(len(feats), p, seed), []
    z = standardize(model, y)
    for step in range(p.steps):
        _set_lr(opt, p, step)
        idx = batch().to(feats.device)
        loss = (model(feats[idx], standardized=True) - z[idx]).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        tick()
    return losses


def train_vmapped(models: Sequence[torch.nn.Module], feats: torch.Tensor, y: torch.Tensor, p: Problem,
                  seeds: Sequence[int], tick: Callable[[], None] = lambda: None) -> list[dict[str, torch.Tensor]]:
    """The seeds of one cell trained as one batched model: ``feats``/``y`` stacked per seed ``(S, N, ...)``.

    The summed loss has per-seed gradients and Adam is elementwise, so each seed follows exactly the
    trajectory :func:`train_regress` gives it. Returns each seed's trained parameters and buffers.
    """
    from torch.func import functional_call, stack_module_state, vmap

    params, buffers = stack_module_state(list(models))
    params = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    base = copy.deepcopy(models[0]).to("meta")

    def one(par, buf, x):
        return functional_call(base, (par, buf), (x,), {"standardized": True})

    forward = vmap(one)
    opt = _adam(list(params.values()), p)
    draws = [_batches(feats.shape[1], p, s) for s in seeds]
    y = torch.stack([standardize(m, y[i]) for i, m in enumerate(models)])
    for step in range(p.steps):
        _set_lr(opt, p, step)
        idx = torch.stack([d() for d in draws]).to(feats.device)          # (S, B)
        xb = torch.stack([feats[s, idx[s]] for s in range(len(seeds))])
        yb = torch.stack([y[s, idx[s]] for s in range(len(seeds))])
        loss = (forward(params, buffers, xb) - yb).square().mean(dim=tuple(range(1, yb.ndim))).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        tick()
    keep = set(models[0].state_dict())      # parameters and persistent buffers (the target's mean and std)
    return [{k: v[i].detach() for k, v in (*params.items(), *buffers.items()) if k in keep}
            for i in range(len(seeds))]


def train_flow(model: torch.nn.Module, feats: torch.Tensor, y: torch.Tensor, p: Problem, seed: int,
               monitor: Callable[[int], None], tick: Callable[[], None] = lambda: None) -> list[float]:
    """Adam on the flow-matching loss; ``monitor(step)`` is called five times along the way and at the end."""
    opt, batch, losses = _adam(list(model.parameters()), p), _batches(len(feats), p, seed), []
    noise = torch_generator(seed + 1)
    checkpoints = set(np.linspace(0, p.steps, 6).astype(int).tolist())
    for step in range(p.steps):
        if step in checkpoints:
            monitor(step)
        _set_lr(opt, p, step)
        idx = batch().to(feats.device)
        loss = model.loss(feats[idx], y[idx], noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        tick()
    monitor(p.steps)
    return losses


@dataclass
class Fit:
    metrics: dict[str, Any]
    state: dict[str, torch.Tensor]
    pred_test: torch.Tensor          # (N, T, C)
    history: list[dict[str, float]]  # flow: SW distance and sample-mean MSE during training


def _evaluate(model, feats_train, data: Data, p: Problem) -> tuple[dict[str, Any], torch.Tensor]:
    with torch.no_grad():
        tr = error_metrics(model(feats_train), data.y_train, data.side)
        pred = model(model.features(data.x_test))
    te = error_metrics(pred, data.y_test, data.side)
    return _metrics(tr, te, p, parameter_count(model)), pred


def _metrics(tr: dict, te: dict, p: Problem, params: int) -> dict[str, Any]:
    pyramid_model = p.ablate not in ("no-pyramid", "mlp", "linear")
    scales = p.scales if pyramid_model else p.scales[-1:]
    return {"train_rmse": tr["rmse"], "test_rmse": te["rmse"], "test_rel_l2": te["rel_l2"],
            "test_max_error": te["max_error"], "train_rel_l2": tr["rel_l2"], "parameters": params,
            "tokens": pyr.token_count(scales, p.init) if p.ablate not in ("mlp", "linear") else 0,
            "attention_pairs": (pyr.attention_pairs(scales, p.init, p.mask if pyramid_model else "none")
                                if p.ablate not in ("no-attn", "mlp", "linear") else 0)}


def fit(p: Problem, seed: int, *, device: Any = "cpu", dtype: torch.dtype = torch.float32,
        tick: Callable[[], None] = lambda: None) -> Fit:
    """Train one model (or the least-squares floor) on the seed's data and evaluate it."""
    data = make_data(p, seed, dtype)
    if p.ablate == "linear":
        pred_train = linear_floor(data.x_train, data.y_train, data.x_train)
        pred = linear_floor(data.x_train, data.y_train, data.x_test)
        n_in, n_out = data.x_train[0].numel(), data.y_train[0].numel()
        m = _metrics(error_metrics(pred_train, data.y_train, data.side), error_metrics(pred, data.y_test, data.side),
                     p, (n_in + 1) * n_out)
        return Fit(m, {}, pred, [])
    model = new_model(p, seed, dtype, data.y_train).to(device)
    data = Data(*(t.to(device) for t in (data.x_train, data.y_train, data.x_test, data.y_test)), data.side)
    feats = model.features(data.x_train)
    if p.head == "flow":
        return _fit_flow(model, feats, data, p, seed, tick)
    losses = train_regress(model, feats, data.y_train, p, seed, tick)
    metrics, pred = _evaluate(model, feats, data, p)
    metrics["final_train_loss"] = losses[-1]
    return Fit(metrics, {k: v.detach().cpu() for k, v in model.state_dict().items()}, pred.cpu(), [])


def _fit_flow(model, feats, data: Data, p: Problem, seed: int, tick) -> Fit:
    feats_test = model.features(data.x_test)
    history = []
    monitor_n = min(len(data.x_test), 256)

    def samples(n_draws: int, n: int) -> torch.Tensor:
        g = torch_generator(seed + 3)
        return torch.stack([model.sample(feats_test[:n], p.sample_steps, g) for _ in range(n_draws)])

    def monitor(step: int) -> None:
        draw = samples(1, monitor_n)[0]
        history.append({"step": step, "sliced_wasserstein": sliced_wasserstein(
            _last_scale(draw, data.side), _last_scale(data.y_test[:monitor_n], data.side), 64, torch_generator(seed)),
            "sample_rmse": error_metrics(draw, data.y_test[:monitor_n], data.side)["rmse"]})

    train_flow(model, feats, data.y_train, p, seed, monitor, tick)
    mean = samples(8, len(data.x_test)).mean(0)
    te = error_metrics(mean, data.y_test, data.side)
    m = _metrics(te, te, p, parameter_count(model))
    del m["train_rmse"], m["train_rel_l2"]
    m.update(sample_mean_mse=te["rmse"] ** 2, sliced_wasserstein_start=history[0]["sliced_wasserstein"],
             sliced_wasserstein_end=history[-1]["sliced_wasserstein"])
    return Fit(m, {k: v.detach().cpu() for k, v in model.state_dict().items()}, mean.cpu(), history)


def fit_seeds(p: Problem, seeds: Sequence[int], *, device: Any = "cpu", dtype: torch.dtype = torch.float32,
              vmapped: bool = True, tick: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """Metrics for every seed of one cell; the regress models trained together as one vmapped model."""
    if not vmapped or p.head == "flow" or p.ablate == "linear" or len(seeds) == 1:
        return [fit(p, s, device=device, dtype=dtype, tick=tick).metrics for s in seeds]
    datas = [make_data(p, s, dtype) for s in seeds]
    models = [new_model(p, s, dtype, d.y_train).to(device) for s, d in zip(seeds, datas, strict=True)]
    feats = torch.stack([m.features(d.x_train.to(device)) for m, d in zip(models, datas, strict=True)])
    y = torch.stack([d.y_train.to(device) for d in datas])
    states = train_vmapped(models, feats, y, p, seeds, tick)
    out = []
    for model, state, d, f in zip(models, states, datas, feats, strict=True):
        model.load_state_dict(state, strict=True)
        dd = Data(d.x_train.to(device), d.y_train.to(device), d.x_test.to(device), d.y_test.to(device), d.side)
        out.append(_evaluate(model, f, dd, p)[0])
    return out


def problem_dict(p: Problem) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(p).items()}


__all__ = ["LR_SCHEDULES", "lr_at", "Problem", "Data", "Fit", "fit", "fit_seeds", "make_data", "new_model", "train_regress",
           "train_vmapped", "error_metrics", "sliced_wasserstein", "problem_dict"]
