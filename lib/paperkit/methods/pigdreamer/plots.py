"""Figures: a run's evaluation return, cost and λ against env steps; the tabular bound's two value curves;
several runs' evaluation curves side by side (mean ± s.e. over seeds per variant)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _eval_curve(evals: list[dict], key: str) -> tuple[np.ndarray, np.ndarray]:
    steps = np.array(sorted({e["step"] for e in evals}), dtype=np.float64)
    return steps, np.array([np.mean([e[key] for e in evals if e["step"] == s]) for s in steps])


def training_figure(metrics: list[dict], evals: list[dict], cost_limit: float, title: str) -> Any:
    from paperkit.core.plots import new_figure

    fig, axes = new_figure(1, 3, figsize=(13, 3.4), layout="constrained")
    for ax, key, label in ((axes[0], "return", "evaluation return"), (axes[1], "cost", "evaluation cost")):
        steps, values = _eval_curve(evals, key)
        ax.plot(steps, values, marker="o")
        ax.set_ylabel(label)
    axes[1].axhline(cost_limit, color="red", linestyle="--", label=f"cost limit {cost_limit:g}")
    axes[1].legend(fontsize=8)
    axes[2].plot([m["step"] for m in metrics], [m["lambda"] for m in metrics], label="λ")
    axes[2].plot([m["step"] for m in metrics], [m["c"] for m in metrics], label="c")
    axes[2].set_ylabel("Lagrange multiplier λ, penalty c")
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.set_xlabel("env steps")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    return fig


def bound_figure(result: dict) -> Any:
    from paperkit.core.plots import new_figure

    fig, axes = new_figure(1, 2, figsize=(10, 3.6), layout="constrained")
    b = result["belief_right"]
    for ax, key, label in ((axes[0], "reward", "max reward"), (axes[1], "cost", "min expected cost")):
        ax.plot(b, result[f"{key}_asym"], label="Σ b(s) V*_MDP(s)  (asymmetric)")
        ax.plot(b, result[f"{key}_pomdp"], label="V*_POMDP(b)  (belief grid)")
        ax.set_xlabel("belief P(tiger right)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Tiger CPOMDP: state-value average bounds the belief value (reward ≥, cost ≤)")
    return fig


def compare_figure(runs: list[tuple[dict, list[dict]]], cost_limit: float) -> Any:
    """Evaluation return and cost per variant, mean ± s.e. over the seeds given (runs of equal schedules)."""
    from paperkit.core.plots import new_figure

    fig, axes = new_figure(1, 2, figsize=(11, 3.6), layout="constrained")
    for variant in dict.fromkeys(s["variant"] for s, _ in runs):
        per_seed = [evals for s, evals in runs if s["variant"] == variant]
        for ax, key in zip(axes, ("return", "cost"), strict=True):
            curves = [_eval_curve(e, key) for e in per_seed]
            n = min(len(c[0]) for c in curves)
            vals = np.array([c[1][:n] for c in curves])
            mean = vals.mean(0)
            se = vals.std(0, ddof=1) / np.sqrt(len(vals)) if len(vals) > 1 else np.zeros(n)
            ax.plot(curves[0][0][:n], mean, label=f"{variant} (n={len(vals)})")
            ax.fill_between(curves[0][0][:n], mean - se, mean + se, alpha=0.2)
    axes[1].axhline(cost_limit, color="red", linestyle="--", label="cost limit")
    axes[0].set_ylabel("evaluation return")
    axes[1].set_ylabel("evaluation cost per episode")
    for ax in axes:
        ax.set_xlabel("env steps")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig
