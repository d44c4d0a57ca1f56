"""Inputs for the commands: captured Q/K/V files and synthetic specs, validated at the boundary.

Captured tensors come from any model, dumped elsewhere: ``.npz`` with arrays ``q``, ``k``, ``v`` (and an
optional ``modality`` vector, 0 = text, 1 = vision), or a ``.pt`` dict with the same keys (loaded
weights-only). Both are read by the shared readers (``paperkit.core.io``: truncated files and pickled
objects are one-line input errors); this module checks what the arrays hold. Shapes are [H, N, D] or [L, H, N, D]; the loader returns [L, H, N, D].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit.core import io
from paperkit.core.errors import ConfigError, InputError
from paperkit.methods.mm_prefill.index import check_magnitude, check_scores
from paperkit.methods.mm_prefill.synthetic import SyntheticSpec, generate

PRESETS: dict[str, dict[str, Any]] = {
    # pure video (text prefix/suffix): one head of each single-modality type
    "video": {"frames": 16, "height": 16, "width": 16, "text_prefix": 64, "text_suffix": 64,
              "heads": ["grid", "vs", "a_shape", "block"]},
    # text segments between frames: boundary heads next to the others
    "mixed": {"frames": 24, "height": 8, "width": 8, "text_prefix": 32, "text_suffix": 32, "text_len": 24,
              "text_every": 1, "heads": ["grid", "vs", "a_shape", "block", "q_boundary", "2d_boundary"]},
}


def _as_tensor(value: Any, key: str, name: str) -> torch.Tensor:
    """A tensor from a loaded array/tensor; numbers only (strings, objects and dates are refused)."""
    if isinstance(value, torch.Tensor):
        return value
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{name}: {key} has dtype {arr.dtype}; expected "
                         + ("integers 0 (text) / 1 (vision)" if key == "modality" else "floating-point numbers"))
    return torch.from_numpy(np.ascontiguousarray(arr))


def load_qkv(path: str | Path) -> dict[str, Any]:
    """q, k, v as float tensors [L, H, N, D] (same shape and dtype, finite, in fp32 range) and ``modality``."""
    name = io.display_name(path)
    io.require_file(path)
    suffix = Path(path).suffix.lower()
    if suffix == ".npz":
        data = {key: _as_tensor(a, key, name) for key, a in io.read_arrays(path).items()}
    elif suffix == ".pt":
        obj = io.load_torch(path)
        if not isinstance(obj, dict):
            raise InputError(f"{name}: holds a {type(obj).__name__}; expected a dict with q, k, v")
        data = {}
        for key, val in obj.items():
            if key in ("q", "k", "v", "modality"):
                try:
                    data[key] = _as_tensor(val if isinstance(val, (torch.Tensor, np.ndarray)) else np.asarray(val),
                                           key, name)
                except (TypeError, ValueError) as e:
                    reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                    raise InputError(f"{name}: {key} is not an array of numbers ({reason})") from None
    else:
        raise InputError(f"{name}: unsupported file type '{suffix}'; expected .npz or .pt")
    missing = [key for key in "qkv" if key not in data]
    if missing:
        raise InputError(f"{name}: missing array(s) {missing}; expected q, k, v (and optionally modality)")
    q, k, v = data["q"], data["k"], data["v"]
    for key, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() not in (3, 4):
            raise InputError(f"{name}: {key} has shape {tuple(t.shape)}; expected [H, N, D] or [L, H, N, D]")
        if not t.dtype.is_floating_point:
            raise InputError(f"{name}: {key} has dtype {t.dtype}; expected floating point")
        if not t.numel():
            raise InputError(f"{name}: {key} is empty (shape {tuple(t.shape)}); expected at least one token")
    if not (q.shape == k.shape == v.shape):
        raise InputError(f"{name}: q, k, v shapes differ: {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise InputError(f"{name}: q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    if q.dim() == 3:
        q, k, v = q[None], k[None], v[None]
    for key, t in (("q", q), ("k", k), ("v", v)):
        bad = int((~torch.isfinite(t)).sum())
        if bad:
            raise InputError(f"{name}: {key} has {bad} non-finite value(s) (NaN or inf); expected finite numbers")
        check_magnitude(t, key, name)
    check_scores(q, k, name)
    modality = data.get("modality")
    if modality is not None:
        modality = modality.flatten()
        if modality.numel() != q.shape[2]:
            raise InputError(f"{name}: modality has {modality.numel()} entries for {q.shape[2]} tokens")
        codes = modality.double()
        if not bool(((codes == codes.round()) & (codes >= 0) & (codes <= 127)).all()):
            raise InputError(f"{name}: modality holds values other than small non-negative integers; expected "
                             "0 (text) and 1 (vision)")
        modality = modality.to(torch.int8)
    return {"q": q, "k": k, "v": v, "modality": modality, "source": name}


def resolve_spec(value: str) -> SyntheticSpec:
    """A preset name (video, mixed) or a YAML file of :class:`SyntheticSpec` keys (bad content: InputError)."""
    if value in PRESETS:
        return SyntheticSpec.from_mapping(dict(PRESETS[value]), source=f"preset '{value}'")
    if not Path(value).is_file():
        raise ConfigError(f"--synthetic '{value}' is neither a preset ({', '.join(PRESETS)}) nor a YAML file")
    data = io.read_yaml(value)
    if not isinstance(data, dict):
        raise InputError(f"{value}: holds a {type(data).__name__}; expected a mapping of synthetic-spec keys")
    return SyntheticSpec.from_mapping(data, source=value)


def synthetic_qkv(spec: SyntheticSpec, seed: int | None = None, block: int = 64) -> dict[str, Any]:
    if seed is not None:
        spec.seed = seed
    g = generate(spec, block=block)
    return {"q": torch.from_numpy(g["q"]), "k": torch.from_numpy(g["k"]), "v": torch.from_numpy(g["v"]),
            "modality": torch.from_numpy(g["modality"]), "source": "synthetic", "truth": g["truth"],
            "spec": spec.to_dict()}
