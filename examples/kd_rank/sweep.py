"""Collect the k / gamma sweep of kd-rank into one table (CSV) and a plot (PNG).

    python sweep.py OUT.csv OUT.png RUN_DIR...
"""

import sys

from paperkit.core import plots, tables


def main(out_csv: str, out_png: str, runs: list[str]) -> None:
    rows = []
    for run in runs:
        summary = {r["rank"]: r for r in tables.read_table(f"{run}/summary.csv").records()}
        off, on = summary["off"], summary["on"]
        rows.append({"rank_k": on["rank_k"], "rank_weight": on["rank_weight"],
                     "tau_off": off["kendall_tau_mean"], "tau_on": on["kendall_tau_mean"],
                     "tau_gain": on["kendall_tau_mean"] - off["kendall_tau_mean"],
                     "top1_off": off["top1_mean"], "top1_on": on["top1_mean"],
                     "top1_gain": on["top1_mean"] - off["top1_mean"], "top1_on_std": on["top1_std"]})
    rows.sort(key=lambda r: (r["rank_weight"], r["rank_k"]))
    tables.write_table(out_csv, rows)
    fig, axes = plots.new_figure(1, 2, figsize=(11, 3.6))
    fig.subplots_adjust(wspace=0.6)
    for ax, key, label in ((axes[0], "rank_k", "k (γ = 1)"), (axes[1], "rank_weight", "γ (k = 1)")):
        other = "rank_weight" if key == "rank_k" else "rank_k"
        pts = sorted((r[key], r["tau_gain"], r["top1_gain"]) for r in rows if r[other] == 1.0)
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], "o-", color="#dd8452", label="Δ Kendall τ")
        ax.set_xscale("log", base=2)
        ax.set_xlabel(label)
        ax.set_ylabel("Δ Kendall τ (rank on − off)")
        ax.axhline(0, color="grey", lw=0.8)
        twin = ax.twinx()
        twin.plot(xs, [p[2] for p in pts], "s--", color="#4c72b0", label="Δ top-1")
        twin.set_ylabel("Δ top-1 (points)")
    fig.suptitle("kd-rank on synth100 (KD base, 3 seeds): gain of the rank loss", fontsize=10)
    plots.save_figure(fig, out_png)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
