"""``--device auto|cpu|cuda`` for torch code: one resolution rule for every command."""

from __future__ import annotations

from typing import Any

from paperkit.core.errors import ResourceError, UsageError


def resolve_device(name: str = "auto") -> Any:
    """A ``torch.device``: ``auto`` picks CUDA when available, else CPU; ``cuda`` without a GPU is an error."""
    import torch

    name = (name or "auto").lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ResourceError("--device cuda was asked for, but no CUDA device is available; use --device cpu or auto")
        return torch.device(name)
    raise UsageError(f"unknown device '{name}'; expected auto, cpu or cuda")
