"""Figures of disempower-sim (matplotlib on a private canvas via ``paperkit.core.plots``)."""

from __future__ import annotations

from typing import Any

from paperkit.core.plots import new_figure
from paperkit.methods.disempower.registry import SYSTEMS


def systems_figure(rows: list[dict[str, Any]], title: str) -> Any:
    """AI share, implicit and explicit channels, alignment per system, HII and K."""
    t = [r["t"] for r in rows]
    fig, axes = new_figure(2, 2, figsize=(10, 7), layout="constrained")
    for ax, prefix, label in ((axes[0, 0], "a", "AI share a_s"), (axes[0, 1], "A", "alignment A_s"),
                              (axes[1, 0], "I", "implicit channel I_s (solid), explicit X_s (dashed)")):
        for s in SYSTEMS:
            line, = ax.plot(t, [r[f"{prefix}_{s}"] for r in rows], label=s)
            if prefix == "I":
                ax.plot(t, [r[f"X_{s}"] for r in rows], ls="--", color=line.get_color())
        ax.set_title(label)
        ax.set_xlabel("year")
        ax.legend(fontsize=8)
    ax = axes[1, 1]
    ax.plot(t, [r["HII"] for r in rows], label="HII", color="black")
    ax.plot(t, [r["K"] for r in rows], label="response capacity K", color="tab:purple")
    ax.plot(t, [r["LS"] for r in rows], label="labour share", color="tab:green")
    ax.set_xlabel("year")
    ax.legend(fontsize=8)
    fig.suptitle(title)
    return fig


def hii_welfare_figure(rows: list[dict[str, Any]], theta: float, title: str) -> Any:
    """Relative vs absolute disempowerment: HII (left axis) and human consumption C_H (right axis)."""
    t = [r["t"] for r in rows]
    fig, ax = new_figure(figsize=(7, 4.5), layout="constrained")
    ax.plot(t, [r["HII"] for r in rows], color="black", label="HII")
    ax.axhline(theta, color="grey", ls=":", label="theta")
    ax.set_xlabel("year")
    ax.set_ylabel("human influence index")
    ax2 = ax.twinx()
    ax2.plot(t, [r["C_H"] for r in rows], color="tab:orange", label="C_H")
    ax2.set_ylabel("human consumption C_H", color="tab:orange")
    ax.legend(loc="lower left", fontsize=8)
    ax.set_title(title)
    return fig


def compare_figure(curves: dict[str, dict[str, list[float]]], theta: float) -> Any:
    fig, axes = new_figure(1, 2, figsize=(12, 4.5), layout="constrained")
    for name, cv in curves.items():
        axes[0].plot(cv["t"], cv["HII"], label=name)
        axes[1].plot(cv["t"], cv["C_H"], label=name)
    axes[0].axhline(theta, color="grey", ls=":")
    axes[0].set_title("human influence index")
    axes[1].set_title("human consumption C_H")
    for ax in axes:
        ax.set_xlabel("year")
    axes[1].legend(fontsize=7)
    return fig


def oat_figure(rows: list[dict[str, Any]], param: str, metric: str) -> Any:
    fig, ax = new_figure(figsize=(6, 4), layout="constrained")
    ax.plot([r["value"] for r in rows], [r[metric] for r in rows], marker="o")
    ax.set_xlabel(param)
    ax.set_ylabel(metric)
    return fig


def tornado_figure(rows: list[dict[str, Any]], metric: str, base: float) -> Any:
    rows = sorted(rows, key=lambda r: abs(r["high"] - r["low"]))
    fig, ax = new_figure(figsize=(7, 0.3 * len(rows) + 1.5), layout="constrained")
    for i, r in enumerate(rows):
        ax.barh(i, r["low"] - base, left=base, color="tab:blue")
        ax.barh(i, r["high"] - base, left=base, color="tab:red")
    ax.set_yticks(range(len(rows)), [r["param"] for r in rows], fontsize=8)
    ax.axvline(base, color="black", lw=0.8)
    ax.set_xlabel(f"{metric} (blue: prior low, red: prior high)")
    return fig


def indices_figure(rows: list[dict[str, Any]], keys: tuple[str, ...], title: str) -> Any:
    rows = sorted(rows, key=lambda r: r[keys[-1]])
    fig, ax = new_figure(figsize=(7, 0.3 * len(rows) + 1.5), layout="constrained")
    h = 0.8 / len(keys)
    for j, k in enumerate(keys):
        ax.barh([i + j * h for i in range(len(rows))], [r[k] for r in rows], height=h, label=k)
    ax.set_yticks(range(len(rows)), [r["param"] for r in rows], fontsize=8)
    ax.legend()
    ax.set_title(title)
    return fig


def mc_figure(values: list[float], metric: str, theta: float | None) -> Any:
    fig, ax = new_figure(figsize=(6, 4), layout="constrained")
    ax.hist(values, bins=40)
    if theta is not None:
        ax.axvline(theta, color="black", ls=":")
    ax.set_xlabel(metric)
    ax.set_ylabel("draws")
    return fig
