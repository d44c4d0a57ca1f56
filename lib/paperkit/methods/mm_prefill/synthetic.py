"""Synthetic long video+text Q/K/V with planted head types (the offline stand-in for a VLM's activations).

A sequence is a text prefix, T frames of h×w patches (optionally a text segment after every few frames)
and a text suffix. Queries and keys are sums of low-rank codes, each in its own directions of R^D, so the
logit q·k/√D is a sum of planted terms:

* sink: the first keys get a constant bonus;
* locality / slashes: rotary codes at a few frequencies, the query's code shifted by an offset o puts a
  peak on the diagonal i − j = o (o = 0 is local attention);
* verticals: chosen keys get a bonus from every query;
* grid: an exact patch code (Fourier basis of the row and column index) shared across frames, so a
  query peaks on the same patch of every earlier frame (stride h·w), plus frame-start columns (phase);
* block: each key block has a random code; a query block adds the codes of a few target blocks;
* modality: text keys carry a text code that text queries seek (boundary heads).

``sharpness`` multiplies every term (inverse temperature); noise adds isotropic Gaussian directions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from paperkit.core.errors import InputError

HEAD_TYPES = ("grid", "vs", "a_shape", "block", "q_boundary", "2d_boundary")
SHARPNESS_MAX, NOISE_MAX = 1e3, 1e2


@dataclass
class SyntheticSpec:
    frames: int = 16
    height: int = 16
    width: int = 16
    text_prefix: int = 64
    text_suffix: int = 64
    text_len: int = 0  # text tokens inserted after every `text_every` frames (0: none)
    text_every: int = 1
    heads: list[str] = field(default_factory=lambda: ["grid", "vs", "a_shape", "block"])
    layers: int = 1
    dim: int = 64
    sharpness: float = 18.0
    noise: float = 0.05
    seed: int = 0

    @classmethod
    def from_mapping(cls, data: dict[str, Any], source: str = "spec") -> SyntheticSpec:
        """A spec from a mapping (a YAML file's content): unknown keys, wrong types and out-of-range values are
        InputErrors naming ``source`` and the key."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(map(str, data)) - known)
        if unknown:
            raise InputError(f"{source}: unknown key(s) {unknown}; expected some of {sorted(known)}")
        for key, value in data.items():
            want = _FIELD_TYPES[key]
            if want == "heads":
                if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
                    raise InputError(f"{source}: heads = {value!r}; expected a list of head types "
                                     f"({', '.join(HEAD_TYPES)})")
            elif want is int:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InputError(f"{source}: {key} = {value!r}; expected an integer")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InputError(f"{source}: {key} = {value!r}; expected a finite number")
        spec = cls(**data)
        spec.validate(source)
        return spec

    def validate(self, source: str = "spec") -> None:
        bad = [h for h in self.heads if h not in HEAD_TYPES]
        if bad:
            raise InputError(f"{source}: unknown head type(s) {bad}; expected some of {list(HEAD_TYPES)}")
        if not self.heads:
            raise InputError(f"{source}: heads is empty")
        for name in ("frames", "height", "width", "dim", "layers", "text_every"):
            if int(getattr(self, name)) < 1:
                raise InputError(f"{source}: {name} = {getattr(self, name)}; expected ≥ 1")
        for name in ("text_prefix", "text_suffix", "text_len", "seed"):
            if int(getattr(self, name)) < 0:
                raise InputError(f"{source}: {name} = {getattr(self, name)}; expected ≥ 0")
        # bounded far above the presets (18, 0.05): beyond them q·k overflows float32 and every run fails later
        for name, high in (("sharpness", SHARPNESS_MAX), ("noise", NOISE_MAX)):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0 <= value <= high):
                raise InputError(f"{source}: {name} = {value!r} is out of range; expected a number in [0, {high:g}]")
        if self.dim < 48:
            raise InputError(f"{source}: dim = {self.dim} is too small for the planted codes; expected ≥ 48")

    def tokens(self) -> int:
        """Sequence length N, from the sizes alone (nothing is generated)."""
        inserts = (self.frames - 1) // max(1, self.text_every) if self.text_len else 0
        return (self.text_prefix + self.frames * self.height * self.width + inserts * self.text_len
                + self.text_suffix)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_FIELD_TYPES: dict[str, Any] = {name: ("heads" if name == "heads" else float if name in ("sharpness", "noise")
                                       else int) for name in SyntheticSpec.__dataclass_fields__}


@dataclass
class Layout:
    """Token roles: modality (0 text, 1 vision), frame and patch index (−1 for text)."""

    modality: np.ndarray
    frame: np.ndarray
    patch: np.ndarray
    height: int
    width: int

    @property
    def n(self) -> int:
        return int(self.modality.size)

    @property
    def stride(self) -> int:
        return self.height * self.width

    @property
    def phase(self) -> int:
        """Residue (mod stride) of the frame-start tokens when frames are back to back, else −1."""
        starts = np.flatnonzero(self.patch == 0)
        res = np.unique(starts % self.stride)
        return int(res[0]) if res.size == 1 else -1


def make_layout(spec: SyntheticSpec) -> Layout:
    mod, frame, patch = [], [], []

    def text(count: int) -> None:
        mod.extend([0] * count)
        frame.extend([-1] * count)
        patch.extend([-1] * count)

    text(spec.text_prefix)
    P = spec.height * spec.width
    for t in range(spec.frames):
        mod.extend([1] * P)
        frame.extend([t] * P)
        patch.extend(range(P))
        if spec.text_len and (t + 1) % max(1, spec.text_every) == 0 and t + 1 < spec.frames:
            text(spec.text_len)
    text(spec.text_suffix)
    return Layout(np.array(mod, np.int8), np.array(frame, np.int64), np.array(patch, np.int64), spec.height,
                  spec.width)


def _fourier_delta(index: np.ndarray, period: int) -> np.ndarray:
    """Rows whose dot products are (period·[a ≡ b] − 1)/(period − 1): 1 on a match, −1/(period−1) else.

    Σ_{f=1}^{m−1} cos(2πfδ/m) = m·[δ ≡ 0] − 1; frequencies f and m − f share one (cos, sin) pair, weighted
    2, and f = m/2 (m even) is a single cosine, weighted 1.
    """
    cols, weights = [], []
    for f in range(1, (period - 1) // 2 + 1):
        ang = 2 * np.pi * f * index / period
        cols += [np.cos(ang), np.sin(ang)]
        weights += [2.0, 2.0]
    if period % 2 == 0:
        cols.append(np.cos(np.pi * index))
        weights.append(1.0)
    if not cols:
        return np.zeros((index.size, 0))
    return np.stack(cols, 1) * np.sqrt(np.array(weights) / (period - 1))


def _rotary(pos: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    ang = pos[:, None] * freqs[None, :]
    return np.concatenate([np.cos(ang), np.sin(ang)], 1) / np.sqrt(len(freqs))


class _Dims:
    """Hands out orthonormal directions of R^D; a head that needs more than D fails loudly."""

    def __init__(self, dim: int, rng: np.random.Generator):
        self.basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
        self.used = 0

    def take(self, count: int) -> np.ndarray:
        if self.used + count > self.basis.shape[1]:
            raise InputError(f"the planted codes need more than dim = {self.basis.shape[1]} directions; "
                              "raise dim or use a smaller frame")
        out = self.basis[:, self.used:self.used + count]
        self.used += count
        return out


def _head(kind: str, lay: Layout, spec: SyntheticSpec, rng: np.random.Generator, block: int
          ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    n, D = lay.n, spec.dim
    beta = spec.sharpness
    dims = _Dims(D, rng)
    q = np.zeros((n, D))
    k = np.zeros((n, D))
    pos = np.arange(n, dtype=np.float64)
    truth: dict[str, Any] = {"type": kind}

    def add(qc: np.ndarray, kc: np.ndarray) -> None:
        basis = dims.take(qc.shape[1])
        q[:] += qc @ basis.T
        k[:] += kc @ basis.T

    def sink(weight: float, count: int = 4) -> None:
        add(np.full((n, 1), beta * weight), (pos < count)[:, None].astype(float))

    def slashes(offsets: list[int], weights: list[float], n_freq: int, max_freq: float,
                rows: np.ndarray | None = None) -> None:
        freqs = rng.uniform(0.02, max_freq, n_freq) * np.pi
        qc = sum(w * _rotary(pos - o, freqs) for o, w in zip(offsets, weights, strict=True))
        if rows is not None:
            qc = qc * rows[:, None]
        add(beta * qc, _rotary(pos, freqs))

    vision = lay.modality == 1
    if kind == "a_shape":
        sink(0.9)
        slashes([0], [1.0], 20, 0.08)
    elif kind == "vs":
        sink(0.8)
        cols = np.sort(rng.choice(np.arange(8, n), 8, replace=False))
        kc = np.zeros((n, 1))
        kc[cols, 0] = rng.uniform(0.85, 1.0, cols.size)
        add(np.full((n, 1), beta), kc)
        # one far diagonal besides the local one: each rotary slash adds background variance
        offs = [0, int(rng.integers(64, max(65, n // 2)))]
        slashes(offs, [1.0, 0.95], 28, 0.5)
        truth.update(columns=cols.tolist(), offsets=offs)
    elif kind == "block":
        sink(0.6)
        nb = -(-n // block)
        r = D - dims.used
        codes = rng.standard_normal((nb, r)) / np.sqrt(r)
        own = np.arange(n) // block
        targets = [np.r_[b, rng.choice(b, min(2, b), replace=False)] if b else np.array([0]) for b in range(nb)]
        qc = np.stack([codes[t].sum(0) for t in targets])[own]
        add(beta * 0.9 * qc, codes[own])
        truth["targets"] = [t.tolist() for t in targets]
    elif kind == "grid":
        sink(0.7)
        rows = np.where(vision, lay.patch // lay.width, 0)
        colsx = np.where(vision, lay.patch % lay.width, 0)
        code = np.concatenate([_fourier_delta(rows, lay.height), _fourier_delta(colsx, lay.width)], 1) / np.sqrt(2)
        code = code * vision[:, None]
        add(beta * code, code)
        frame_start = (lay.patch == 0).astype(float)[:, None]
        add(np.full((n, 1), beta * 0.6), frame_start)
        truth.update(stride=lay.stride, phase=lay.phase)
    elif kind == "q_boundary":
        # text queries read every text token (instruction-following), vision queries stay local
        sink(0.6)
        text = (~vision).astype(float)[:, None]
        add(beta * 0.7 * text, text)
        slashes([0], [1.0], 20, 0.08, rows=vision.astype(float))
    elif kind == "2d_boundary":
        sink(0.6)
        text = (~vision).astype(float)[:, None]
        add(beta * 0.7 * text, text)
        rows = np.where(vision, lay.patch // lay.width, 0)
        colsx = np.where(vision, lay.patch % lay.width, 0)
        code = np.concatenate([_fourier_delta(rows, lay.height), _fourier_delta(colsx, lay.width)], 1) / np.sqrt(2)
        code = code * vision[:, None]
        add(beta * code, code)
        truth.update(stride=lay.stride)
    q += spec.noise * rng.standard_normal((n, D))
    k += spec.noise * rng.standard_normal((n, D))
    return q, k, truth


def generate(spec: SyntheticSpec, block: int = 64) -> dict[str, Any]:
    """Q, K, V as float32 arrays [L, H, N, D] with the layout and per-head ground truth.

    Logits are q·k/√D, as in attention; codes are scaled by D^¼ on both sides so the planted terms keep
    their size in logit units.
    """
    spec.validate()
    rng = np.random.default_rng(spec.seed)
    lay = make_layout(spec)
    L, H, n, D = spec.layers, len(spec.heads), lay.n, spec.dim
    q = np.zeros((L, H, n, D), np.float32)
    k = np.zeros_like(q)
    truth = []
    for layer in range(L):
        row = []
        for h, kind in enumerate(spec.heads):
            qh, kh, t = _head(kind, lay, spec, rng, block)
            q[layer, h] = qh * D ** 0.25
            k[layer, h] = kh * D ** 0.25
            row.append(t)
        truth.append(row)
    v = rng.standard_normal((L, H, n, D)).astype(np.float32)
    return {"q": q, "k": k, "v": v, "layout": lay, "truth": truth, "modality": lay.modality}
