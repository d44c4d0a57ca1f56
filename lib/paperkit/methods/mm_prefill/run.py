"""Orchestration of mm-prefill, mm-prefill-search and mm-prefill-bench: settings (every default), input
checks (``prepare_*``: every input is read and validated, and the memory a run needs is estimated from the
shapes, before a run dir exists) and the runs (``execute_*``: each layer is a ``run.cached`` stage, the one
checkpoint/resume mechanism), plus the measurements themselves: a layer's patterns against dense attention
and the dense-vs-sparse speed benchmark.

Data files are the same bytes for the same inputs and seed: wall times go to ``timing.csv`` and
``bench.csv`` (the benchmark's subject), never into ``heads.csv``/``metrics.json``.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.methods.mm_prefill import index as sparse_index
from paperkit.methods.mm_prefill.attention import (
    dense_attention,
    last_backend,
    recall_from_lse,
    rel_l2,
    sdpa_causal,
    sparse_prefill,
)
from paperkit.methods.mm_prefill.search import PATTERNS, build_head, check_patterns, index_from_patterns

log = logging.getLogger("paperkit.mm_prefill")

BLOCK_SIZES = (16, 32, 64, 128)
APPLY_PATTERNS = PATTERNS + ("dense",)
BOUNDARY = ("q_boundary", "2d_boundary")
DTYPES = ("float32", "bfloat16", "float16")


class Uncached:
    """Stands in for a run dir where a command keeps no checkpoints: every stage is just computed."""

    def cached(self, name: str, compute: Callable[[], Any], *, fmt: str = "json") -> Any:
        return compute()


# ------------------------------------------------------------------------------------------- inputs
@dataclass
class Sample:
    """Q/K/V [L, H, N, D] (captured or synthetic), the tokens' modality, and where they came from."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    modality: torch.Tensor | None
    files: list[str]
    truth: list | None = None

    @property
    def planted(self) -> list[list[str]] | None:
        return [[t["type"] for t in layer] for layer in self.truth] if self.truth else None


def stored_bytes(path: str | os.PathLike) -> int:
    """Uncompressed size of the arrays in an .npz (its zip directory), else the file's size."""
    import zipfile

    try:
        if str(path).lower().endswith(".npz") and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                return sum(i.file_size for i in z.infolist())
        return os.path.getsize(path)
    except (OSError, zipfile.BadZipFile):
        return 0  # unreadable: the loader names the problem


def load_sample(qkv_path: str | None, synthetic: str | None, *, seed: int, block_size: int,
                estimate: Callable[[int, int, int, int, int], float], max_memory_gb: float | None,
                what: str) -> Sample:
    """The sample from ``--qkv`` or ``--synthetic`` (exactly one of them).

    ``estimate(layers, heads, tokens, dim, itemsize)`` gives the run's bytes; it is checked against
    ``max_memory_gb`` before a synthetic sample is generated (from the spec's sizes), and for captured
    tensors before loading (from the stored sizes) and again once the shapes are known.
    """
    from paperkit.core.resources import MEMORY_FLAG, check_memory
    from paperkit.methods.mm_prefill import data, memory

    if (qkv_path is None) == (synthetic is None):
        raise UsageError("give exactly one of --qkv FILE or --synthetic SPEC")
    if qkv_path is not None:
        check_memory(2 * stored_bytes(qkv_path), f"loading {qkv_path}", limit_gb=max_memory_gb, flag=MEMORY_FLAG)
        d = data.load_qkv(qkv_path)
        L, H, n, dim = d["q"].shape
        check_memory(estimate(L, H, n, dim, d["q"].element_size()), what, limit_gb=max_memory_gb, flag=MEMORY_FLAG)
        return Sample(d["q"], d["k"], d["v"], d["modality"], [str(qkv_path)])
    spec = data.resolve_spec(synthetic)
    n = spec.tokens()
    need = estimate(spec.layers, len(spec.heads), n, spec.dim, 4) + memory.synthetic_bytes(1, 1, n, spec.dim)
    check_memory(need, f"{what} on the synthetic sample ({n:,} tokens)", limit_gb=max_memory_gb, flag=MEMORY_FLAG)
    d = data.synthetic_qkv(spec, seed=seed, block=block_size)
    files = [synthetic] if synthetic not in data.PRESETS else []
    return Sample(d["q"], d["k"], d["v"], d["modality"], files, d["truth"])


def require_modality(patterns: tuple[str, ...], modality: torch.Tensor | None, qkv_path: str | None,
                     option: str) -> None:
    """UsageError (exit 2) when only boundary patterns were asked for and the input has one modality."""
    asked = [p for p in patterns if p in BOUNDARY]
    if not asked or len(asked) < len(patterns):
        return
    if modality is None or int(modality.min()) == int(modality.max()):
        why = (f"--qkv {qkv_path} has no 'modality' array" if modality is None
               else "every token has the same modality")
        raise UsageError(f"{option} {','.join(asked)}: boundary patterns need text and vision tokens, but {why}; "
                         "add a 'modality' array (0 text, 1 vision) beside q, k, v, or choose a_shape, vs, block "
                         "or grid")


def check_block_size(block_size: int) -> int:
    if block_size not in BLOCK_SIZES:
        raise UsageError(f"--block-size {block_size}: expected one of {', '.join(map(str, BLOCK_SIZES))}")
    return int(block_size)


# ------------------------------------------------------------------------------------ density budget
BUDGET_TOLERANCE = 0.01  # relative: a head within 1% of --density meets it


def diagonal_share(n: int, block_size: int) -> float:
    """Fraction of the N(N+1)/2 causal pairs inside the diagonal tiles, which every index computes whole:
    a floor under the density of any pattern (about ``block_size / N``)."""
    full, last = divmod(n, block_size)
    pairs = full * block_size * (block_size + 1) // 2 + last * (last + 1) // 2
    return pairs / (n * (n + 1) / 2)


def over_budget(densities: list[float], budget: float) -> list[int]:
    """Positions of the densities above ``budget`` (beyond :data:`BUDGET_TOLERANCE`)."""
    return [i for i, d in enumerate(densities) if d > budget * (1 + BUDGET_TOLERANCE)]


def budget_warning(densities: list[float], budget: float, *, n: int, block_size: int,
                   hint: str = "a smaller --block-size or a longer sequence lowers it", unit: str = "heads") -> str | None:
    """Why ``--density`` was not met, or None when every head is within it.

    Indices are sized by bisection to the largest size whose density is at most the budget; when even
    the smallest index (diagonal tiles, attention sinks, the local window, all rounded up to whole
    tiles) computes more, that smallest index is used, and this says so with the achieved density."""
    over = over_budget(densities, budget)
    if not over:
        return None
    got = [densities[i] for i in over]
    return (f"--density {budget:g} is not met at N = {n} tokens: {len(over)} of {len(densities)} {unit} compute "
            f"more (mean {sum(got) / len(got):.3f}, max {max(got):.3f} of the causal pairs), because every index "
            f"keeps whole {block_size}-token tiles on the diagonal plus the sink and local window (the diagonal "
            f"tiles alone are {diagonal_share(n, block_size):.3f}); {hint}")


# ------------------------------------------------------------------------------------ measurements
def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _timed(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float]:
    _sync(device)
    t0 = time.perf_counter()
    out = fn()
    _sync(device)
    return out, (time.perf_counter() - t0) * 1e3


def layer_index(q: torch.Tensor, k: torch.Tensor, *, layer: int, doc: dict[str, Any] | None, pattern: str | None,
                density: float, block_size: int, modality: torch.Tensor | None) -> sparse_index.SparseIndex:
    """One layer's index (heads of q, k [H, N, D]): from a patterns document, or one pattern for every head."""
    if doc is not None:
        return index_from_patterns(q, k, doc, layer, block_size=block_size, modality=modality, density=density)
    return sparse_index.stack_heads([build_head(pattern, q[h], k[h], density=density, block_size=block_size,
                                                modality=modality) for h in range(q.shape[0])], block_size)


def apply_layer(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, layer: int, doc: dict[str, Any] | None = None,
                pattern: str | None = None, density: float = 0.1, block_size: int = 64, backend: str = "auto",
                modality: torch.Tensor | None = None
                ) -> tuple[list[dict[str, Any]], torch.Tensor, sparse_index.SparseIndex, dict[str, Any]]:
    """One layer (q, k, v [H, N, D]): per-head rows (pattern, density, tile cost, recall, output rel-L2 vs
    dense, backend: the same for the same inputs), the sparse output, the index, and the times in
    milliseconds (index build, sparse attention, dense SDPA), kept apart because they differ run to run.

    A non-finite metric (inputs beyond what fp32 attention can hold) is an InputError, never a NaN row."""
    H = q.shape[0]
    device = q.device
    idx, t_index = _timed(partial(layer_index, q, k, layer=layer, doc=doc, pattern=pattern, density=density,
                                  block_size=block_size, modality=modality), device)
    (out, lse), t_sparse = _timed(partial(sparse_prefill, q, k, v, idx, backend=backend, return_lse=True,
                                          validate=False), device)
    ran = last_backend()
    _, t_dense = _timed(partial(sdpa_causal, q, k, v), device)
    ref, dense_lse = dense_attention(q, k, v)
    rec = recall_from_lse(lse.float(), dense_lse)
    err = rel_l2(out, ref)
    dens, cost = sparse_index.density(idx), sparse_index.tile_cost(idx)
    bad = [h for h in range(H) if not (math.isfinite(float(rec[h])) and math.isfinite(float(err[h])))]
    if bad:
        raise InputError(f"layer {layer} head(s) {bad}: attention produced non-finite values (NaN or inf); the "
                         "inputs are beyond what float32 attention can hold; rescale q, k, v")
    rows = [{"layer": layer, "head": h, "pattern": idx.patterns[h],
             "params": ";".join(f"{a}={b}" for a, b in sorted(idx.params[h].items())),
             "density": round(dens[h], 6), "tile_cost": round(cost[h], 6),
             "recall": round(float(rec[h]), 6), "rel_l2": round(float(err[h]), 6), "backend": ran}
            for h in range(H)]
    timing = {"layer": layer, "index_ms": round(t_index, 3), "sparse_ms": round(t_sparse, 3),
              "dense_ms": round(t_dense, 3), "backend": ran}
    return rows, out, idx, timing


def apply_patterns(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, doc: dict[str, Any] | None = None,
                   pattern: str | None = None, density: float = 0.1, block_size: int = 64, backend: str = "auto",
                   modality: torch.Tensor | None = None, on_layer: Callable[[], None] | None = None
                   ) -> tuple[list[dict[str, Any]], list[torch.Tensor], list[sparse_index.SparseIndex],
                              list[dict[str, Any]]]:
    """:func:`apply_layer` over every layer of q, k, v [L, H, N, D]: rows, outputs, indices, timings."""
    L, H, _, _ = q.shape
    if doc is not None:
        check_patterns(doc, heads=H, layers=L)
    sparse_index.check_qkv(q[0], k[0], v[0], block_size)
    rows, outs, indices, timings = [], [], [], []
    for layer in range(L):
        r, out, idx, t = apply_layer(q[layer], k[layer], v[layer], layer=layer, doc=doc, pattern=pattern,
                                     density=density, block_size=block_size, backend=backend, modality=modality)
        rows += r
        outs.append(out)
        indices.append(idx)
        timings.append(t)
        if on_layer:
            on_layer()
    return rows, outs, indices, timings


def bench_point(n: int, heads: int, dim: int, density: float, *, device: torch.device, backend: str = "auto",
                dtype: torch.dtype = torch.float32, repeats: int = 3, block_size: int = 64, seed: int = 0
                ) -> dict[str, Any]:
    """Dense causal SDPA vs the sparse operator (VS index sized to ``density``) on random q, k, v.

    The VS sizes are found once (bisection, untimed); index building is then timed as it runs online:
    last-query scores, top columns/diagonals, packing. Medians over ``repeats``.
    """
    g = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v = (torch.randn(heads, n, dim, generator=g).to(device=device, dtype=dtype) for _ in range(3))
    if n < block_size:
        raise InputError(f"n = {n} is smaller than one block ({block_size})")
    sizes = build_head("vs", q[0], k[0], density=density, block_size=block_size).params

    def build() -> sparse_index.SparseIndex:
        return sparse_index.stack_heads([build_head("vs", q[h], k[h], params=sizes, block_size=block_size)
                                         for h in range(heads)], block_size)

    def med(fn: Callable[[], Any]) -> tuple[Any, float]:
        out, times = None, []
        fn()  # warm-up (Triton compile, allocator)
        for _ in range(repeats):
            out, ms = _timed(fn, device)
            times.append(ms)
        return out, sorted(times)[len(times) // 2]

    idx, t_index = med(build)
    out, t_sparse = med(lambda: sparse_prefill(q, k, v, idx, backend=backend, validate=False))
    ran = last_backend()
    ref, t_dense = med(lambda: sdpa_causal(q, k, v))
    return {"n": n, "heads": heads, "dim": dim, "dtype": str(dtype).replace("torch.", ""), "device": device.type,
            "backend": ran, "density_target": density, "density": round(sum(sparse_index.density(idx)) / heads, 6),
            "dense_ms": round(t_dense, 3), "sparse_ms": round(t_sparse, 3), "index_ms": round(t_index, 3),
            "speedup": round(t_dense / t_sparse, 4), "speedup_with_index": round(t_dense / (t_sparse + t_index), 4),
            "index_share": round(t_index / t_sparse, 4),
            "rel_l2_vs_dense": round(float(rel_l2(out, ref).mean()), 6)}


def _check_backend(backend: str, device: torch.device) -> None:
    if backend == "triton" and device.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        raise UsageError("--backend triton on CPU needs TRITON_INTERPRET=1 (slow); use --backend torch")


# --------------------------------------------------------------------------------------- mm-prefill
@dataclass(frozen=True)
class MmPrefillSettings:
    """Every parameter of ``paperkit mm-prefill`` and its default."""

    block_size: int = 64
    pattern: str | None = None      # one pattern for every head; None: vs, unless a patterns file is given
    density: float | None = None    # None: the searched density of the patterns file, else DEFAULT_DENSITY
    backend: str = "auto"
    device: str = "auto"
    masks: bool = False
    save_out: bool = False
    max_memory_gb: float | None = None
    seed: int = 0


DEFAULT_PATTERN = "vs"
DEFAULT_DENSITY = 0.1


@dataclass
class MmPrefillInputs:
    settings: MmPrefillSettings
    sample: Sample
    doc: dict[str, Any] | None
    density: float
    device: torch.device


@dataclass
class MmPrefillResult:
    rows: list[dict[str, Any]]
    timings: list[dict[str, Any]]
    summary: dict[str, Any]
    out: torch.Tensor | None                    # [L, H, N, D] float32 with save_out
    masks: list[tuple[str, torch.Tensor, str]] = field(default_factory=list)  # (file name, pooled mask, title)
    backend: str = "torch"


def prepare_mm_prefill(s: MmPrefillSettings, *, qkv_path: str | None = None, synthetic: str | None = None,
                       patterns_path: str | None = None) -> MmPrefillInputs:
    from paperkit.core import io
    from paperkit.core.devices import resolve_device
    from paperkit.methods.mm_prefill import memory

    bs = check_block_size(s.block_size)
    dev = resolve_device(s.device)
    _check_backend(s.backend, dev)
    if s.pattern is not None and s.pattern not in APPLY_PATTERNS:
        raise UsageError(f"--pattern {s.pattern}: expected one of {', '.join(APPLY_PATTERNS)}")
    if patterns_path and s.pattern:
        raise UsageError("give --patterns or --pattern, not both")
    raw_doc = io.read_json(patterns_path) if patterns_path else None
    source = io.display_name(patterns_path) if patterns_path else ""
    searched = check_patterns(raw_doc, source=source).get("density") if raw_doc else None
    budget = s.density if s.density is not None else float(searched) if searched is not None else DEFAULT_DENSITY

    def estimate(L: int, H: int, n: int, dim: int, itemsize: int) -> float:
        return memory.apply_bytes(L, H, n, dim, itemsize=itemsize, block_size=bs, density=budget,
                                  save_out=s.save_out)

    sample = load_sample(qkv_path, synthetic, seed=s.seed, block_size=bs, estimate=estimate,
                         max_memory_gb=s.max_memory_gb, what="mm-prefill")
    if s.pattern:
        require_modality((s.pattern,), sample.modality, qkv_path, "--pattern")
    doc = None
    if patterns_path:
        doc = check_patterns(raw_doc, heads=sample.q.shape[1], layers=sample.q.shape[0], tokens=sample.q.shape[2],
                             modality=sample.modality is not None, source=source)
        sample.files.append(str(patterns_path))
    sample.q, sample.k, sample.v = (t.to(dev) for t in (sample.q, sample.k, sample.v))
    if sample.modality is not None:
        sample.modality = sample.modality.to(dev)
    sparse_index.check_qkv(sample.q[0], sample.k[0], sample.v[0], bs)
    return MmPrefillInputs(s, sample, doc, budget, dev)


def execute_mm_prefill(inputs: MmPrefillInputs, run: Any, progress: Callable[..., Any] = default_progress
                       ) -> MmPrefillResult:
    """Each layer is a stage (``layer_<l>``): its rows and times, and with ``masks``/``save_out`` the pooled
    masks and the sparse output, so a resumed run redoes only the layers that had not finished."""
    from paperkit.core.seeding import seed_everything
    from paperkit.methods.mm_prefill.plots import pooled_mask

    s, x = inputs.settings, inputs.sample
    seed_everything(s.seed, torch=True)
    L, H, n, dim = x.q.shape
    pattern = None if inputs.doc else (s.pattern or DEFAULT_PATTERN)

    def compute(layer: int) -> dict[str, Any]:
        rows, out, idx, timing = apply_layer(x.q[layer], x.k[layer], x.v[layer], layer=layer, doc=inputs.doc,
                                             pattern=pattern, density=inputs.density, block_size=int(s.block_size),
                                             backend=s.backend, modality=x.modality)
        return {"rows": rows, "timing": timing,
                "out": out.float().cpu().contiguous() if s.save_out else None,
                "masks": [pooled_mask(idx, h) for h in range(H)] if s.masks else None}

    rows, timings, outs, masks = [], [], [], []
    with progress(total=L, desc="mm-prefill", unit="layer") as bar:
        for layer in range(L):
            done = run.cached(f"layer_{layer:04d}", partial(compute, layer), fmt="pt")
            rows += done["rows"]
            timings.append(done["timing"])
            if s.save_out:
                outs.append(done["out"])
            if s.masks:
                for h, pooled in enumerate(done["masks"]):
                    r = done["rows"][h]
                    masks.append((f"L{layer}_H{h}.png", pooled, f"L{layer} H{h}: {r['pattern']}, density "
                                                                 f"{r['density']:.3f}, recall {r['recall']:.3f}"))
            bar.update(1)
    backend = rows[0]["backend"]
    summary = {"layers": int(L), "heads": int(H), "tokens": int(n), "dim": int(dim), "density_budget": inputs.density,
               "backend": backend,
               "mean_density": round(sum(r["density"] for r in rows) / len(rows), 6),
               "heads_over_budget": len(over_budget([r["density"] for r in rows], inputs.density)),
               "mean_recall": round(sum(r["recall"] for r in rows) / len(rows), 6),
               "mean_rel_l2": round(sum(r["rel_l2"] for r in rows) / len(rows), 6),
               "patterns": {p: sum(r["pattern"] == p for r in rows) for p in sorted({r["pattern"] for r in rows})}}
    if x.planted:
        summary["planted"] = x.planted
    warning = budget_warning([r["density"] for r in rows], inputs.density, n=int(n), block_size=int(s.block_size))
    if warning:
        log.warning("%s", warning)
    out = torch.stack(outs) if s.save_out else None
    return MmPrefillResult(rows, timings, summary, out, masks, backend)


# -------------------------------------------------------------------------------- mm-prefill-search
@dataclass(frozen=True)
class MmPrefillSearchSettings:
    """Every parameter of ``paperkit mm-prefill-search`` and its default."""

    block_size: int = 64
    density: float = 0.1
    candidates: tuple[str, ...] = PATTERNS
    sample_blocks: int = 32
    device: str = "auto"
    max_memory_gb: float | None = None
    seed: int = 0


@dataclass
class MmPrefillSearchInputs:
    settings: MmPrefillSearchSettings
    sample: Sample
    device: torch.device


def prepare_mm_prefill_search(s: MmPrefillSearchSettings, *, qkv_path: str | None = None,
                              synthetic: str | None = None) -> MmPrefillSearchInputs:
    from paperkit.core.devices import resolve_device
    from paperkit.methods.mm_prefill import memory

    bs = check_block_size(s.block_size)
    bad = [c for c in s.candidates if c not in PATTERNS]
    if bad or not s.candidates:
        raise UsageError(f"--candidates: unknown pattern(s) {bad}; expected some of {', '.join(PATTERNS)}")
    dev = resolve_device(s.device)

    def estimate(L: int, H: int, n: int, dim: int, itemsize: int) -> float:
        return memory.search_bytes(L, H, n, dim, itemsize=itemsize, block_size=bs, density=s.density,
                                   sample_blocks=s.sample_blocks or None)

    sample = load_sample(qkv_path, synthetic, seed=s.seed, block_size=bs, estimate=estimate,
                         max_memory_gb=s.max_memory_gb, what="mm-prefill-search")
    require_modality(tuple(s.candidates), sample.modality, qkv_path, "--candidates")
    sparse_index.check_qkv(sample.q[0], sample.k[0], sample.v[0], bs)
    sample.q, sample.k, sample.v = (t.float().to(dev) for t in (sample.q, sample.k, sample.v))
    if sample.modality is not None:
        sample.modality = sample.modality.to(dev)
    return MmPrefillSearchInputs(s, sample, dev)


def execute_mm_prefill_search(inputs: MmPrefillSearchInputs, run: Any = None,
                              progress: Callable[..., Any] = default_progress) -> dict[str, Any]:
    """The patterns document. Each (layer, head) is a stage (``layer_<l>_head_<h>``, JSON) when ``run`` is a
    run dir, so an interrupted search resumes after its last finished head, with the same result as an
    uninterrupted one (head h of layer l samples its query blocks from ``seed + 1000 l + h`` whatever
    else was computed); ``run=None`` keeps no checkpoints."""
    from paperkit.core.seeding import seed_everything
    from paperkit.methods.mm_prefill import search as _search
    from paperkit.methods.mm_prefill.search import patterns_document

    s, x = inputs.settings, inputs.sample
    run = run if run is not None else Uncached()
    seed_everything(s.seed, torch=True)
    L, H, n, _ = x.q.shape
    layers = []
    with progress(total=L * H, desc="mm-prefill-search", unit="head") as bar:
        for layer in range(L):
            row = {}
            for h in range(H):
                def compute(layer: int = layer, h: int = h) -> dict[str, Any]:
                    return _search.search_head(x.q[layer, h], x.k[layer, h], x.v[layer, h], density=s.density,
                                               block_size=int(s.block_size), patterns=tuple(s.candidates),
                                               modality=x.modality, sample_blocks=s.sample_blocks or None,
                                               seed=s.seed + 1000 * layer + h)

                row[str(h)] = run.cached(f"layer_{layer:04d}_head_{h:04d}", compute, fmt="json")
                bar.update(1)
            layers.append(row)
    doc = patterns_document(layers, heads=H, tokens=n, density=s.density, block_size=int(s.block_size))
    if x.planted:
        doc["planted"] = x.planted
    warning = budget_warning([float(e["density"]) for row in layers for e in row.values()], s.density, n=int(n),
                             block_size=int(s.block_size))
    if warning:
        log.warning("%s", warning)
    return doc


# --------------------------------------------------------------------------------- mm-prefill-bench
@dataclass(frozen=True)
class MmPrefillBenchSettings:
    """Every parameter of ``paperkit mm-prefill-bench`` and its default."""

    n: tuple[int, ...] = (4096, 8192)
    heads: int = 8
    dim: int = 64
    density: tuple[float, ...] = (0.05,)
    dtype: str = "float32"
    backend: str = "auto"
    device: str = "auto"
    repeats: int = 3
    max_memory_gb: float | None = None
    seed: int = 0


BENCH_BLOCK = 64


@dataclass
class MmPrefillBenchInputs:
    settings: MmPrefillBenchSettings
    device: torch.device
    dtype: torch.dtype


def prepare_mm_prefill_bench(s: MmPrefillBenchSettings) -> MmPrefillBenchInputs:
    from paperkit.core.devices import resolve_device
    from paperkit.core.resources import MEMORY_FLAG, check_memory
    from paperkit.methods.mm_prefill import memory

    if s.dtype not in DTYPES:
        raise UsageError(f"--dtype {s.dtype}: expected one of {', '.join(DTYPES)}")
    bad = [d for d in s.density if not 0 < d <= 1]
    if bad:
        raise UsageError(f"--density {bad[0]:g}: expected densities in (0, 1]")
    dev = resolve_device(s.device)
    if s.dtype != "float32" and dev.type != "cuda":
        raise UsageError(f"--dtype {s.dtype} is for CUDA; on CPU use float32")
    if s.backend == "triton" and dev.type != "cuda":
        raise UsageError("--backend triton needs a CUDA device (the CPU interpreter is for tests only)")
    if min(s.n) < BENCH_BLOCK:
        raise UsageError(f"--n {min(s.n)} is smaller than one {BENCH_BLOCK}-token block")
    dtype = getattr(torch, s.dtype)
    itemsize = torch.empty((), dtype=dtype).element_size()
    need, at = max((memory.bench_bytes(n, s.heads, s.dim, itemsize=itemsize, block_size=BENCH_BLOCK, density=d),
                    (n, d)) for n in s.n for d in s.density)
    check_memory(need, f"mm-prefill-bench at --n {at[0]} --heads {s.heads} --dim {s.dim} --density {at[1]:g}",
                 limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)
    return MmPrefillBenchInputs(s, dev, dtype)


def execute_mm_prefill_bench(inputs: MmPrefillBenchInputs, run: Any,
                             progress: Callable[..., Any] = default_progress) -> list[dict[str, Any]]:
    """One row of ``bench.csv`` per (N, density); each point is a stage (``point_<N>_<density>``)."""
    s = inputs.settings
    rows = []
    points = [(n, d) for n in s.n for d in s.density]
    with progress(total=len(points), desc="mm-prefill-bench", unit="point") as bar:
        for n, d in points:
            rows.append(run.cached(f"point_{n}_{d:g}", partial(
                bench_point, n, s.heads, s.dim, d, device=inputs.device, backend=s.backend, dtype=inputs.dtype,
                repeats=s.repeats, seed=s.seed, block_size=BENCH_BLOCK)))
            bar.update(1)
    for r in rows:
        warning = budget_warning([r["density"]], r["density_target"], n=r["n"], block_size=BENCH_BLOCK,
                                 hint=f"a larger --n lowers it (the benchmark's tiles are {BENCH_BLOCK} tokens)",
                                 unit="points (mean over heads)")
        if warning:
            log.warning("%s", warning)
    return rows

