"""Targets, losses, training loops, decoding and evaluation of the SVE networks.

Coordinates: pixel ``j`` has its centre at ``x = j``; a feature cell ``u`` at stride ``s`` covers pixels
``[s*u - 0.5, s*(u + 1) - 0.5)``, so a point maps to cell ``(x + 0.5)/s`` and back with ``s*c - 0.5``.
Losses: CenterNet focal loss on heatmaps, L1 on size and offsets (the grounding terms on P2 and, averaged, on
P3-P5), BCE + Dice on the boundary, Poisson NLL on class counts; the probe is trained with cross-entropy on
frozen encoders.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import IterableDataset, get_worker_info

from paperkit.methods.sve import metrics
from paperkit.methods.sve.model import (
    N_CLASSES,
    N_OPTIONS,
    GlobalEncoder,
    PrimitiveEncoder,
    Probe,
    Router,
    question_features,
    to_tokens,
)
from paperkit.methods.sve.render import ARRAYS, CLASSES, QUESTION_TYPES, labels_of, pack, render_diagram

CENTRE_STRIDE, JUNCTION_STRIDE = 4, 2
JUNCTION_SIGMA = 2.0      # px (spec: junction heatmaps with sigma = 2 px)


# --------------------------------------------------------------------------------------------- data
class DiagramStream(IterableDataset):
    """Diagrams ``start..start+n-1`` of data set ``seed``, rendered on the fly. Worker ``w`` of ``W`` renders
    indices ``w, w+W, ...``: each diagram's seed is its index, so the set does not depend on the split."""

    def __init__(self, seed: int, n: int, size: int, max_primitives: int, start: int = 0):
        self.seed, self.n, self.size, self.max_primitives, self.start = seed, n, size, max_primitives, start

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        w, nw = (0, 1) if info is None else (info.id, info.num_workers)
        for k in range(self.start + w, self.start + self.n, nw):
            yield k, render_diagram(self.seed, k, self.size, self.max_primitives)


def _one_thread_per_worker(_: int) -> None:
    """Spawned loader workers start numba with one thread per core (torch's loader sets only torch's count to
    1), so W workers would each run the parallel rasteriser on every core. Oversubscribed like that, 2 workers
    rendered 8k diagrams of 128 px in 80 s on 2 cores, against 11 s with one thread each (12 s in one process)."""
    from paperkit.core import resources

    resources.set_threads(1)


def stream_loader(stream: IterableDataset, workers: int) -> Any:
    """An unbatched loader over ``stream``: ``workers`` spawned processes of one thread each (0: in process)."""
    from torch.utils.data import DataLoader

    return DataLoader(stream, batch_size=None, num_workers=workers, multiprocessing_context="spawn" if workers else None,
                      worker_init_fn=_one_thread_per_worker if workers else None)


def render_dataset(seed: int, n: int, size: int, max_primitives: int, workers: int = 0,
                   progress: Callable = lambda it, **_: it) -> dict[str, np.ndarray]:
    """Render and pack ``n`` diagrams, in index order whatever the number of loader workers."""
    loader = stream_loader(DiagramStream(seed, n, size, max_primitives), workers)
    got = dict(progress(loader, total=n, desc="render", unit="img"))
    return pack([got[k] for k in range(n)])


# Row counts and dtypes of the label arrays as sve-render writes them (the model's one-hot and Linear layers
# need exactly these dtypes, so other integer or float widths are cast after the checks).
_LABEL_SHAPES = {"box_image": (), "box_class": (), "boxes": (4,), "junction_image": (), "junctions": (2,),
                 "q_image": (), "q_type": (), "q_class": (), "q_points": (N_OPTIONS, 2), "q_values": (N_OPTIONS,),
                 "q_options": (), "q_answer": ()}
_FLOAT_ARRAYS = ("boxes", "junctions", "q_points", "q_values")


def check_arrays(data: dict[str, np.ndarray], name: str) -> None:
    """Refuse a packed set that misses arrays or has inconsistent shapes, dtypes or values (InputError); cast
    the label arrays in place to the dtypes sve-render writes (int64, float32)."""
    from paperkit.core.errors import InputError

    missing = [k for k in ARRAYS if k not in data]
    if missing:
        raise InputError(f"{name}: missing arrays {', '.join(missing)}; expected the arrays written by sve-render")
    imgs = data["images"]
    if imgs.ndim != 3 or imgs.dtype != np.uint8:
        raise InputError(f"{name}: 'images' must be uint8 (N, H, W), got {imgs.dtype} {imgs.shape}")
    if data["boundary"].shape != imgs.shape:
        raise InputError(f"{name}: 'boundary' has shape {data['boundary'].shape}, expected {imgs.shape}")
    for key, tail in _LABEL_SHAPES.items():
        a = data[key]
        want = "floats" if key in _FLOAT_ARRAYS else "integers"
        ok = a.dtype.kind in ("iu" if want == "integers" else "iuf")
        if not ok or a.ndim != 1 + len(tail) or a.shape[1:] != tail:
            shape = "(rows" + ("".join(f", {t}" for t in tail) if tail else ",") + ")"
            raise InputError(f"{name}: '{key}' must hold {want} of shape {shape}, got {a.dtype} {a.shape}")
        if key in _FLOAT_ARRAYS and not np.isfinite(a).all():
            raise InputError(f"{name}: '{key}' holds NaN or infinite values")
        data[key] = a.astype(np.float32 if key in _FLOAT_ARRAYS else np.int64, copy=False)
    n, h, w = imgs.shape
    for key, idx in (("boxes", "box_image"), ("junctions", "junction_image"), ("q_points", "q_image")):
        if len(data[key]) != len(data[idx]) or (len(data[idx]) and not (0 <= data[idx].min() and data[idx].max() < n)):
            raise InputError(f"{name}: '{idx}' must index the {n} images, one entry per row of '{key}'")
    b = data["boxes"]
    if len(b) and ((b[:, [0, 2]] < -0.5).any() or (b[:, [0, 2]] > w - 0.5).any() or (b[:, [1, 3]] < -0.5).any()
                   or (b[:, [1, 3]] > h - 0.5).any() or (b[:, 2] <= b[:, 0]).any() or (b[:, 3] <= b[:, 1]).any()):
        raise InputError(f"{name}: some boxes lie outside the {w}x{h} image or are empty; expected x0 < x1, y0 < y1 inside it")
    if len(data["box_class"]) != len(b):
        raise InputError(f"{name}: 'box_class' has {len(data['box_class'])} rows, expected one per row of 'boxes' ({len(b)})")
    if len(data["box_class"]) and not (0 <= data["box_class"].min() and data["box_class"].max() < N_CLASSES):
        raise InputError(f"{name}: 'box_class' must be in 0..{N_CLASSES - 1} ({', '.join(CLASSES)})")
    _check_questions(data, name, w, h)


def _check_questions(data: dict[str, np.ndarray], name: str, w: int, h: int) -> None:
    """The question arrays: one row per 'q_image' row, codes in range, answers among the options, points inside
    the image (an option without a point has x < 0)."""
    from paperkit.core.errors import InputError

    nq = len(data["q_image"])
    for key in ("q_type", "q_class", "q_values", "q_options", "q_answer"):
        if len(data[key]) != nq:
            raise InputError(f"{name}: '{key}' has {len(data[key])} rows, expected one per row of 'q_image' ({nq})")
    if not nq:
        return
    for key, lo, hi, what in (("q_type", 0, len(QUESTION_TYPES) - 1, f" ({', '.join(QUESTION_TYPES)})"),
                              ("q_class", -1, N_CLASSES - 1, " (-1: no class)"), ("q_options", 2, N_OPTIONS, "")):
        a = data[key]
        if a.min() < lo or a.max() > hi:
            raise InputError(f"{name}: '{key}' must be in {lo}..{hi}{what}, got values {a.min()}..{a.max()}")
    bad = (data["q_answer"] < 0) | (data["q_answer"] >= data["q_options"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}: 'q_answer' must be in 0..q_options-1; row {i} has answer {data['q_answer'][i]} "
                         f"with {data['q_options'][i]} options")
    p = data["q_points"]
    present = p[..., 0] >= 0
    if ((p[..., 0] > w - 0.5) | (present & ((p[..., 1] < -0.5) | (p[..., 1] > h - 0.5)))).any():
        raise InputError(f"{name}: some 'q_points' lie outside the {w}x{h} image (an option without a point has x = -1)")


# ------------------------------------------------------------------------------------------ targets
def _gaussian(shape: tuple[int, int], cx: float, cy: float, sigma: float) -> np.ndarray:
    ys, xs = np.arange(shape[0])[:, None], np.arange(shape[1])[None, :]
    return np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma * sigma))


def _cell(p: np.ndarray, stride: int) -> np.ndarray:
    return (np.asarray(p, np.float64) + 0.5) / stride


COARSE_STRIDES = (8, 16, 32)     # P3, P4, P5: deep supervision of the grounding head (training only)


def _centre_targets(boxes: np.ndarray, classes: np.ndarray, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Class-centre heatmaps (5, h, h) and (w, h, dx, dy, mask) (5, h, h) of one image at ``stride``."""
    hc = size // stride
    heat = np.zeros((N_CLASSES, hc, hc), np.float32)
    reg = np.zeros((5, hc, hc), np.float32)
    for (x0, y0, x1, y1), c in zip(boxes, classes, strict=True):
        centre = _cell(((x0 + x1) / 2, (y0 + y1) / 2), stride)
        u = np.minimum(np.floor(centre).astype(int), hc - 1)
        sigma = max(0.5, 0.1 * np.sqrt((x1 - x0) * (y1 - y0)) / stride)
        heat[c] = np.maximum(heat[c], _gaussian((hc, hc), u[0], u[1], sigma))
        reg[:, u[1], u[0]] = [(x1 - x0) / size, (y1 - y0) / size, centre[0] - u[0], centre[1] - u[1], 1.0]
    return heat, reg


def targets(data: dict[str, np.ndarray], idx: np.ndarray, coarse: bool = False) -> dict[str, torch.Tensor]:
    """Training targets of images ``idx``: centre heatmaps, sizes and offsets at stride 4 (with a mask),
    junction heatmap and offsets at stride 2, boundary map; with ``coarse``, the centre targets at the strides
    of P3-P5 too (``coarse``: one (heat, reg) pair per level)."""
    n, size = len(idx), data["images"].shape[1]
    strides = (CENTRE_STRIDE,) + (COARSE_STRIDES if coarse else ())
    centres = [(np.zeros((n, N_CLASSES, size // s, size // s), np.float32), np.zeros((n, 5, size // s, size // s), np.float32))
               for s in strides]
    hj = size // JUNCTION_STRIDE
    jheat = np.zeros((n, 1, hj, hj), np.float32)
    jreg = np.zeros((n, 3, hj, hj), np.float32)           # dx, dy, mask
    for r, i in enumerate(idx):
        boxes, classes, junctions = labels_of(data, int(i))
        for (heat, reg), stride in zip(centres, strides, strict=True):
            heat[r], reg[r] = _centre_targets(boxes, classes, size, stride)
        for p in junctions:
            cell = _cell(p, JUNCTION_STRIDE)
            u = np.minimum(np.floor(cell).astype(int), hj - 1)
            g = _gaussian((hj, hj), u[0], u[1], JUNCTION_SIGMA / JUNCTION_STRIDE)
            jheat[r, 0] = np.maximum(jheat[r, 0], g)
            jreg[r, :, u[1], u[0]] = [cell[0] - u[0], cell[1] - u[1], 1.0]
    t = {"heat": torch.from_numpy(centres[0][0]), "reg": torch.from_numpy(centres[0][1]), "jheat": torch.from_numpy(jheat),
         "jreg": torch.from_numpy(jreg), "boundary": torch.from_numpy(data["boundary"][idx].astype(np.float32))[:, None]}
    if coarse:
        t["coarse"] = [(torch.from_numpy(h), torch.from_numpy(r)) for h, r in centres[1:]]
    return t


def images_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, H, W) paper-white images to float (N, 1, H, W) ink in [0, 1] (ink = 1 - grey)."""
    return torch.from_numpy(1.0 - images.astype(np.float32) / 255.0)[:, None]


# ------------------------------------------------------------------------------------------- losses
def focal_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss (alpha 2, beta 4), normalised by the number of peaks."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p**2 * (1 - target) ** 4 * (1 - pos)).sum()
    return (pos_loss + neg_loss) / pos.sum().clamp(min=1.0)


def masked_l1(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (F.l1_loss(pred, target, reduction="none") * mask).sum() / (mask.sum() * pred.shape[1]).clamp(min=1.0)


def dice_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(logits)
    inter = (p * target).sum((1, 2, 3))
    return (1 - (2 * inter + 1) / (p.sum((1, 2, 3)) + target.sum((1, 2, 3)) + 1)).mean()


def grounding_terms(g: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor) -> dict[str, torch.Tensor]:
    """The grounding losses of one level's head output: focal loss on the centre heatmaps, L1 on the size (x5)
    and offset where a box centre lies."""
    mask = reg[:, 4:5]
    return {"centre": focal_loss(g[:, :N_CLASSES], heat),
            "size": 5.0 * masked_l1(g[:, N_CLASSES:N_CLASSES + 2], reg[:, :2], mask),
            "offset": masked_l1(g[:, N_CLASSES + 2:], reg[:, 2:4], mask)}


def primitive_losses(out: dict[str, Any], t: dict[str, Any]) -> dict[str, torch.Tensor]:
    jmask = t["jreg"][:, 2:3]
    p2 = torch.cat([out["centre"], out["size"], out["offset"]], dim=1)
    coarse = {}
    if "grounding_coarse" in out:   # the mean over P3-P5 of the same grounding loss as on P2
        levels = zip(out["grounding_coarse"], t["coarse"], strict=True)
        coarse["coarse_grounding"] = torch.stack([sum(grounding_terms(g, h, r).values()) for g, (h, r) in levels]).mean()
    return {
        **grounding_terms(p2, t["heat"], t["reg"]),
        **coarse,
        "junction": focal_loss(out["junction"], t["jheat"]),
        "junction_offset": masked_l1(out["junction_offset"], t["jreg"][:, :2], jmask),
        "boundary": F.binary_cross_entropy_with_logits(out["boundary"], t["boundary"]) + dice_loss(out["boundary"], t["boundary"]),
    }


def counts_of(data: dict[str, np.ndarray], idx: np.ndarray) -> torch.Tensor:
    n_img = len(data["images"])
    counts = np.zeros((n_img, N_CLASSES), np.float32)
    np.add.at(counts, (data["box_image"], data["box_class"]), 1.0)
    return torch.from_numpy(counts[idx])


# ----------------------------------------------------------------------------------------- training
def _batches(n: int, batch_size: int, gen: torch.Generator) -> list[np.ndarray]:
    order = torch.randperm(n, generator=gen).numpy()
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


TRAIN_DTYPES = ("float32", "bfloat16")


def _to(t: dict[str, Any], device: torch.device) -> dict[str, Any]:
    return {k: [tuple(x.to(device) for x in pair) for pair in v] if k == "coarse" else v.to(device) for k, v in t.items()}


def encoder_forward(model: torch.nn.Module, x: torch.Tensor, dtype: str = "float32", **kwargs: Any) -> dict[str, Any]:
    """``model(x, **kwargs)``; with ``dtype`` 'bfloat16' under bfloat16 autocast on channels-last input, the outputs
    cast back to float32 so the losses are computed in float32."""
    if dtype != "bfloat16":
        return model(x, **kwargs)
    with torch.autocast(x.device.type, dtype=torch.bfloat16):
        out = model(x.contiguous(memory_format=torch.channels_last), **kwargs)
    return {k: v.float() if torch.is_tensor(v) else [m.float() for m in v] for k, v in out.items()}


def train_encoder(model: torch.nn.Module, data: dict[str, np.ndarray], *, kind: str, epochs: int, batch_size: int,
                  lr: float, seed: int, device: torch.device, train_parts: Callable | None = None,
                  dtype: str = "float32", progress: Callable = lambda it, **_: it) -> list[dict[str, float]]:
    """Train ``model`` on ``data``: ``kind`` 'primitives' (all heads), 'counts' (image-level counts) or
    'heads' (the primitive heads on a frozen backbone + FPN). Returns one row of mean losses per epoch.

    ``dtype`` 'bfloat16': mixed precision (the forward pass under bfloat16 autocast, channels-last maps; weights,
    optimiser state and losses in float32), ~1.4x the images/s of float32 on a CPU with AVX512-BF16."""
    if dtype not in TRAIN_DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {TRAIN_DTYPES}")
    mixed = dtype == "bfloat16"
    # P3-P5 are supervised only when they train (kind 'primitives'); on a frozen trunk ('heads') the coarse loss
    # would only pull the shared grounding head away from P2, the level it decodes.
    coarse = kind == "primitives"
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    params = [p for p in (train_parts(model) if train_parts else model.parameters()) if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
    steps = epochs * -(-len(data["images"]) // batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(1, steps), pct_start=0.15)
    model.to(device)
    if mixed:
        model.to(memory_format=torch.channels_last)
    curves = []
    for epoch in range(epochs):
        model.train()
        if kind == "heads":
            model.backbone.eval()
            model.fpn.eval()
        sums: dict[str, float] = {}
        batches = _batches(len(data["images"]), batch_size, gen)
        for idx in progress(batches, desc=f"{kind} epoch {epoch}", unit="batch"):
            x = images_tensor(data["images"][idx]).to(device)
            if kind == "counts":
                out = encoder_forward(model, x, dtype)
                losses = {"counts": F.poisson_nll_loss(out["counts"], counts_of(data, idx).to(device), log_input=True)}
            else:
                out = encoder_forward(model, x, dtype, coarse=coarse)
                losses = primitive_losses(out, _to(targets(data, idx, coarse=coarse), device))
            loss = sum(losses.values())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 5.0)
            opt.step()
            sched.step()
            for k, v in losses.items():
                sums[k] = sums.get(k, 0.0) + float(v.detach()) * len(idx)
        curves.append({"stage": kind, "epoch": epoch, **{k: v / len(data["images"]) for k, v in sums.items()}})
    if mixed:
        model.to(memory_format=torch.contiguous_format)
    model.eval()
    return curves


def head_parameters(model: PrimitiveEncoder) -> list[torch.nn.Parameter]:
    """Everything but the backbone and FPN (frozen when the encoder was pretrained on counts)."""
    frozen = {id(p) for p in list(model.backbone.parameters()) + list(model.fpn.parameters())}
    for p in model.parameters():
        p.requires_grad_(id(p) not in frozen)
    return [p for p in model.parameters() if id(p) not in frozen]


# ----------------------------------------------------------------------------------------- decoding
def _peaks(heat: torch.Tensor) -> torch.Tensor:
    return heat * (F.max_pool2d(heat, 3, 1, 1) == heat).float()


@torch.no_grad()
def decode(out: dict[str, torch.Tensor], size: int, *, top_k: int = 20, junction_threshold: float = 0.3) -> list[dict]:
    """Per image: boxes (x0, y0, x1, y1 in px), classes, scores (top ``top_k`` centre peaks), junctions
    (peaks of the junction heatmap above ``junction_threshold``, offset-refined) with scores."""
    heat = _peaks(torch.sigmoid(out["centre"]))
    n, c, h, w = heat.shape
    scores, flat = heat.flatten(1).topk(min(top_k, c * h * w), dim=1)
    cls, cell = flat // (h * w), flat % (h * w)
    ys, xs = (cell // w).float(), (cell % w).float()
    jheat = _peaks(torch.sigmoid(out["junction"]))[:, 0]
    results = []
    for i in range(n):
        off = out["offset"][i].flatten(1)[:, cell[i]]
        wh = out["size"][i].flatten(1)[:, cell[i]].clamp(min=0) * size
        cx = CENTRE_STRIDE * (xs[i] + off[0]) - 0.5
        cy = CENTRE_STRIDE * (ys[i] + off[1]) - 0.5
        boxes = torch.stack([cx - wh[0] / 2, cy - wh[1] / 2, cx + wh[0] / 2, cy + wh[1] / 2], 1)
        jy, jx = torch.nonzero(jheat[i] >= junction_threshold, as_tuple=True)
        joff = out["junction_offset"][i][:, jy, jx]
        pts = torch.stack([JUNCTION_STRIDE * (jx + joff[0]) - 0.5, JUNCTION_STRIDE * (jy + joff[1]) - 0.5], 1)
        results.append({"boxes": boxes.cpu().numpy().astype(np.float64), "classes": cls[i].cpu().numpy(),
                        "scores": scores[i].cpu().numpy().astype(np.float64), "junctions": pts.cpu().numpy().astype(np.float64),
                        "junction_scores": jheat[i, jy, jx].cpu().numpy().astype(np.float64)})
    return results


# ------------------------------------------------------------------------------------------- probe
def probe_inputs(data: dict[str, np.ndarray], qidx: np.ndarray, device: torch.device) -> dict[str, torch.Tensor]:
    size = data["images"].shape[1]
    qvec, opt, anchors = question_features(torch.from_numpy(data["q_type"][qidx]), torch.from_numpy(data["q_class"][qidx]),
                                           torch.from_numpy(data["q_points"][qidx]), torch.from_numpy(data["q_values"][qidx]),
                                           size)
    return {"qvec": qvec.to(device), "opt": opt.to(device), "anchors": anchors.to(device),
            "n_options": torch.from_numpy(data["q_options"][qidx]).to(device),
            "answer": torch.from_numpy(data["q_answer"][qidx]).to(device)}


@torch.no_grad()
def frozen_features(encoder: PrimitiveEncoder, global_encoder: GlobalEncoder, x: torch.Tensor, grid: int) -> tuple:
    """(global tokens Q, the four primitive levels as tokens) of a batch, both encoders frozen."""
    q = global_encoder.tokens(x, grid)
    return q, [to_tokens(level, grid) for level in encoder.router_levels(x)]


def answer(router: Router, probe: Probe, q: torch.Tensor, levels: list[torch.Tensor], inp: dict[str, torch.Tensor]) -> tuple:
    qemb = probe.embed_question(inp["qvec"])
    tokens, weights = router(q, levels, qemb)
    return probe(tokens, qemb, inp["opt"], inp["n_options"], inp["anchors"]), weights


def _feature_cache(encoder, global_encoder, data, grid, batch_size, device) -> tuple:
    qs, lv = [], []
    for i in range(0, len(data["images"]), batch_size):
        q, levels = frozen_features(encoder, global_encoder, images_tensor(data["images"][i:i + batch_size]).to(device), grid)
        qs.append(q)
        lv.append(levels)
    return torch.cat(qs), [torch.cat([b[k] for b in lv]) for k in range(len(lv[0]))]


PROBE_WEIGHT_DECAYS = (1e-4, 1e-2, 1e-1)
PROBE_VALIDATION = 0.2      # fraction of the training diagrams whose questions select weight decay and epoch


def _probe_split(data: dict[str, np.ndarray], gen: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) question indices, split by diagram so no diagram is on both sides."""
    n_img = len(data["images"])
    held = torch.randperm(n_img, generator=gen).numpy()[: int(round(PROBE_VALIDATION * n_img))]
    in_val = np.isin(data["q_image"], held)
    return np.flatnonzero(~in_val), np.flatnonzero(in_val)


def train_probe(encoder: PrimitiveEncoder, global_encoder: GlobalEncoder, router: Router, probe: Probe,
                data: dict[str, np.ndarray], *, epochs: int, batch_size: int, lr: float, grid: int, seed: int,
                device: torch.device, progress: Callable = lambda it, **_: it) -> list[dict[str, float]]:
    """Train router + probe on frozen encoders (features computed once per image, standardised with the
    statistics of the training part). The questions of 20% of the diagrams are held out: the weight decay
    (from ``PROBE_WEIGHT_DECAYS``) and the epoch with the best held-out accuracy are kept."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    encoder.eval()
    global_encoder.eval()
    q_all, levels_all = _feature_cache(encoder, global_encoder, data, grid, batch_size, device)
    train_q, val_q = _probe_split(data, gen)
    if len(val_q) == 0:
        train_q = val_q = np.arange(len(data["q_image"]))   # too few diagrams to hold any out
    fit_images = torch.from_numpy(np.unique(data["q_image"][train_q])).to(device)
    router.fit_standardisation(q_all[fit_images], [lv[fit_images] for lv in levels_all])
    initial = copy.deepcopy((router.state_dict(), probe.state_dict()))
    features = (q_all, levels_all)
    best, curves = (-1.0, None), []
    for wd in PROBE_WEIGHT_DECAYS:
        router.load_state_dict(initial[0])
        probe.load_state_dict(initial[1])
        params = list(router.parameters()) + list(probe.parameters())
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=wd)
        steps = epochs * -(-len(train_q) // batch_size)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(1, steps), pct_start=0.1)
        for epoch in range(epochs):
            router.train()
            probe.train()
            total, right = 0.0, 0
            for b in progress(_batches(len(train_q), batch_size, gen), desc=f"probe wd {wd:g} epoch {epoch}", unit="batch"):
                qidx = train_q[b]
                img = torch.from_numpy(data["q_image"][qidx]).to(device)
                inp = probe_inputs(data, qidx, device)
                logits, _ = answer(router, probe, q_all[img], [lv[img] for lv in levels_all], inp)
                loss = F.cross_entropy(logits, inp["answer"])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                total += float(loss.detach()) * len(qidx)
                right += int((logits.argmax(1) == inp["answer"]).sum())
            router.eval()
            probe.eval()
            answers, _ = probe_predict(None, None, router, probe, _questions(data, val_q), grid=grid,
                                       batch_size=batch_size, device=device, features=features)
            val_acc = float((answers == data["q_answer"][val_q]).mean())
            curves.append({"stage": "probe", "epoch": epoch, "weight_decay": wd, "probe": total / len(train_q),
                           "probe_train_accuracy": right / len(train_q), "probe_val_accuracy": val_acc})
            if val_acc > best[0]:
                best = (val_acc, copy.deepcopy((router.state_dict(), probe.state_dict())))
    router.load_state_dict(best[1][0])
    probe.load_state_dict(best[1][1])
    router.eval()
    probe.eval()
    return curves


def _questions(data: dict[str, np.ndarray], qidx: np.ndarray) -> dict[str, np.ndarray]:
    """``data`` with only the questions ``qidx`` (images and their labels unchanged)."""
    return {**data, **{k: v[qidx] for k, v in data.items() if k.startswith("q_")}}


# ----------------------------------------------------------------------------------------- evaluate
@torch.no_grad()
def predict(encoder: PrimitiveEncoder, images: np.ndarray, *, batch_size: int, device: torch.device,
            junction_threshold: float = 0.3, boundary_threshold: float = 0.5, global_encoder: GlobalEncoder | None = None,
            grid: int = 0) -> tuple:
    """Decoded primitives per image and the boundary maps (uint8) of uint8 images (N, H, W); with
    ``global_encoder``, also the router's input tokens (Q, levels) from the same forward pass."""
    encoder.eval()
    preds, edges, qs, levels = [], [], [], []
    for i in range(0, len(images), batch_size):
        x = images_tensor(images[i:i + batch_size]).to(device)
        out = encoder(x)
        preds += decode(out, images.shape[1], junction_threshold=junction_threshold)
        edges.append((torch.sigmoid(out["boundary"][:, 0]) >= boundary_threshold).to(torch.uint8).cpu().numpy())
        if global_encoder is not None:
            qs.append(global_encoder.tokens(x, grid))
            levels.append([to_tokens(v, grid) for v in [out["fused"], *out["pyramid"][1:]]])
    edges = np.concatenate(edges) if edges else np.zeros((0,) + images.shape[1:], np.uint8)
    if global_encoder is None:
        return preds, edges
    return preds, edges, (torch.cat(qs), [torch.cat([b[k] for b in levels]) for k in range(len(levels[0]))])


@torch.no_grad()
def probe_predict(encoder, global_encoder, router, probe, data, *, grid: int, batch_size: int, device,
                  features: tuple | None = None) -> tuple:
    """(answers, router weights per question) of every question in ``data`` (``features``: precomputed tokens)."""
    q_all, levels_all = features or _feature_cache(encoder, global_encoder, data, grid, batch_size, device)
    answers, weights = [], []
    for i in range(0, len(data["q_image"]), batch_size):
        qidx = np.arange(i, min(i + batch_size, len(data["q_image"])))
        img = torch.from_numpy(data["q_image"][qidx]).to(device)
        logits, w = answer(router, probe, q_all[img], [lv[img] for lv in levels_all], probe_inputs(data, qidx, device))
        answers.append(logits.argmax(1).cpu().numpy())
        weights.append(w.cpu().numpy().astype(np.float64))
    if not answers:
        return np.zeros(0, np.int64), np.zeros((0, router.n_levels))
    return np.concatenate(answers), np.concatenate(weights)


LEVEL_NAMES = ("fused_p2", "p3", "p4", "p5")


def primitive_metrics(preds: list[dict], data: dict[str, np.ndarray]) -> dict[str, Any]:
    """mAP@0.5 (and AP per class) and junction P/R/F1@4px of decoded predictions against ``data``'s labels."""
    truths = [labels_of(data, i) for i in range(len(data["images"]))]
    det = metrics.mean_average_precision([(p["boxes"], p["classes"], p["scores"]) for p in preds],
                                         [(b, c) for b, c, _ in truths], N_CLASSES)
    return {"map50": det["map50"], "ap50_per_class": {CLASSES[c]: v for c, v in det["ap_per_class"].items()},
            "junction": metrics.junction_scores([p["junctions"] for p in preds], [j for _, _, j in truths])}


def evaluate(models: dict[str, Any], data: dict[str, np.ndarray], *, grid: int, batch_size: int, device,
             junction_threshold: float = 0.3) -> dict[str, Any]:
    """Every metric of the spec on a labelled packed set."""
    preds, edges, features = predict(models["encoder"], data["images"], batch_size=batch_size, device=device,
                                     junction_threshold=junction_threshold, global_encoder=models["global"], grid=grid)
    return {
        **primitive_metrics(preds, data),
        "boundary": metrics.boundary_scores(edges, data["boundary"]),
        **probe_metrics(models, data, grid=grid, batch_size=batch_size, device=device, features=features),
        "n_images": len(data["images"]), "n_questions": len(data["q_image"]),
    }


def probe_metrics(models: dict[str, Any], data: dict[str, np.ndarray], *, grid: int, batch_size: int, device,
                  features: tuple | None = None) -> dict:
    """Probe accuracy per question type and the mean router weight of each level per question type."""
    answers, weights = probe_predict(models["encoder"], models["global"], models["router"], models["probe"], data,
                                     grid=grid, batch_size=batch_size, device=device, features=features)
    router_table = {}
    for t, name in enumerate(QUESTION_TYPES):
        m = data["q_type"] == t
        if m.any() and models["router"].mode != "global-only":
            router_table[name] = dict(zip(LEVEL_NAMES, (float(v) for v in weights[m].mean(0)), strict=True))
    return {"probe_accuracy": metrics.probe_accuracy(answers, data["q_answer"], data["q_type"], QUESTION_TYPES),
            "router_weights": router_table}


def build_models(config: dict[str, Any]) -> dict[str, Any]:
    """Fresh networks for a model config (widths, channels, width, grid, router, concat)."""
    widths, channels = tuple(int(w) for w in config["widths"]), int(config["channels"])
    encoder = PrimitiveEncoder(widths, channels, float(config.get("drop", 0.1)))
    global_encoder = GlobalEncoder(widths, channels, float(config.get("drop", 0.1)))
    router = Router(encoder.level_channels, channels, mode=config["router"], concat=config["concat"])
    grid = int(config["grid"])
    n_tokens = grid * grid * (1 + router.n_levels if router.concat == "sequence" and router.mode != "global-only" else 1)
    probe = Probe(router.out_width(channels), channels, n_tokens, grid)
    return {"encoder": encoder, "global": global_encoder, "router": router, "probe": probe}
