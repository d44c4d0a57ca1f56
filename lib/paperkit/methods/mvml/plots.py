"""Figures of mvml-fit: the ADMM convergence trace."""

from __future__ import annotations

from typing import Any

import numpy as np


def convergence_figure(trace: dict[str, np.ndarray]) -> Any:
    """Objective and loss at G per iteration (left); residual max|W − G| and penalty μ, log scale (right)."""
    from paperkit.core import plots

    fig, axes = plots.new_figure(1, 2, figsize=(9, 3.4))
    it = trace["iteration"]
    axes[0].plot(it, trace["objective"], label="objective")
    axes[0].plot(it, trace["loss"], label="loss", linestyle="--")
    axes[0].set_xlabel("iteration")
    axes[0].set_title("objective at G")
    axes[0].legend()
    axes[1].semilogy(it, np.maximum(trace["primal_residual"], 1e-300), label="max|W − G|")
    axes[1].semilogy(it, trace["mu"], label="μ", linestyle=":")
    axes[1].set_xlabel("iteration")
    axes[1].set_title("residual and penalty μ")
    axes[1].legend()
    fig.tight_layout()
    return fig
