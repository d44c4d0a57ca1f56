"""PNG figures: loss/accuracy against rounds and against cumulative uplink bytes; reconstruction study."""

from __future__ import annotations

from typing import Any

from paperkit.core.plots import new_figure


def curves_figure(rows: list[dict] | dict[str, list[dict]], title: str = "") -> Any:
    """2×2 panels: test loss and accuracy vs round (top) and vs cumulative uplink bytes (bottom, log x).

    ``rows`` is one run's history or {label: history} for several algorithms side by side.
    """
    runs = rows if isinstance(rows, dict) else {rows[0]["algo"] if rows else "run": rows}
    fig, axes = new_figure(2, 2, figsize=(10, 7))
    for label, hist in runs.items():
        if not hist:
            continue
        r = [x["round"] for x in hist]
        cum, total = [], 0.0
        for x in hist:
            total += x["uplink_bytes"] * x["clients"]
            cum.append(total)
        for j, key in enumerate(("test_loss", "test_acc")):
            y = [x[key] for x in hist]
            axes[0][j].plot(r, y, marker=".", label=label)
            axes[1][j].plot(cum, y, marker=".", label=label)
    for j, name in enumerate(("test loss", "test accuracy")):
        axes[0][j].set_xlabel("round")
        axes[1][j].set_xlabel("cumulative uplink bytes (all clients)")
        axes[1][j].set_xscale("log")
        for i in range(2):
            axes[i][j].set_ylabel(name)
            axes[i][j].grid(alpha=0.3)
    axes[0][0].legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def recon_figure(rows: list[dict], title: str = "") -> Any:
    """Cosine similarity and relative error against K, Ferret vs zeroth-order reconstruction."""
    fig, axes = new_figure(1, 2, figsize=(10, 4))
    for method in sorted({r["method"] for r in rows}):
        sel = sorted((r for r in rows if r["method"] == method), key=lambda r: r["k"])
        ks = [r["k"] for r in sel]
        axes[0].errorbar(ks, [r["cosine_mean"] for r in sel], yerr=[r["cosine_std"] for r in sel], marker="o",
                         label=method, capsize=3)
        axes[1].plot(ks, [r["rel_error_mean"] for r in sel], marker="o", label=method)
    return _against_k(fig, axes, ("cosine(Delta_hat, Delta)", "||Delta_hat − Delta|| / ||Delta||"), title)


def bias_variance_figure(rows: list[dict], title: str = "") -> Any:
    """The estimate's bias (trials' noise taken out; linear axis, 0 = below the noise, whose level
    sqrt(variance / trials) is dashed) and its standard deviation (log-log) against K, per method."""
    fig, axes = new_figure(1, 2, figsize=(10, 4))
    for method in sorted({r["method"] for r in rows}):
        sel = sorted((r for r in rows if r["method"] == method), key=lambda r: r["k"])
        ks = [r["k"] for r in sel]
        line = axes[0].plot(ks, [r["bias_debiased"] for r in sel], marker="o", label=method)[0]
        axes[0].plot(ks, [(r["variance"] / r["trials"]) ** 0.5 for r in sel], ls="--", color=line.get_color(),
                     alpha=0.6, label=f"{method}: noise level")
        axes[1].plot(ks, [max(r["variance"], 1e-12) ** 0.5 for r in sel], marker="o", label=method)
    return _against_k(fig, axes, ("bias ||E[Delta_hat] − Delta|| / ||Delta||", "sqrt(variance) / ||Delta||"), title)


def _against_k(fig: Any, axes: Any, ylabels: tuple[str, str], title: str) -> Any:
    """The two panels' shared layout: log K on x, a linear left panel from 0, a log right panel."""
    for ax, name in zip(axes, ylabels, strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("K (bases)")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[1].set_yscale("log")
    axes[0].set_ylim(bottom=0)
    axes[0].legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
