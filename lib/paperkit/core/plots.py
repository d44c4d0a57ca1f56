"""PNG figures without touching matplotlib's global state.

A :class:`matplotlib.figure.Figure` drawn on its own Agg canvas needs no backend switch, so calling
paperkit from a notebook or a GUI program leaves the caller's backend (``matplotlib.use``) alone.
"""

from __future__ import annotations

import os
from typing import Any

from paperkit.core.io import atomic_write


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs: Any) -> tuple[Any, Any]:
    """``(fig, axes)`` like ``plt.subplots``, but on a private Agg canvas (no pyplot, no global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig_kw = {k: kwargs.pop(k) for k in ("figsize", "dpi", "layout", "constrained_layout", "tight_layout")
              if k in kwargs}
    fig = Figure(**fig_kw)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def save_figure(fig: Any, path: str | os.PathLike, *, dpi: int = 120) -> None:
    """Save a figure as PNG atomically, with no timestamp metadata (same figure, same bytes)."""
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
