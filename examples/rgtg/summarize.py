"""Mean ± s.e. over seeds of each method's rgtg-generate summary for one task (run dirs OUT/<prefix><seed>):
OUT/table-<task>.csv, OUT/reward_vs_rm_calls-<task>.png, and the markdown table on stdout."""

import csv
import json
import sys
from pathlib import Path

import numpy as np

COLS = ("score_mean", "gap_closed", "lm_calls_per_generation", "rm_calls_per_generation", "seconds_per_token",
        "diversity_rouge_l")
TASKS = {"seed": "toy", "char": "char"}


def main(out: Path, prefix: str) -> None:
    task = TASKS[prefix]
    runs = sorted(out.glob(f"{prefix}[0-9]*/gen/summary.json"))
    per = {}
    for f in runs:
        for m in json.loads(f.read_text())["methods"]:
            per.setdefault(m["method"], []).append(m)
    rows = []
    for name, ms in per.items():
        row = {"method": name, "seeds": len(ms)}
        for c in COLS:
            v = np.array([np.nan if m.get(c) is None else m[c] for m in ms], dtype=float)
            row[c] = v.mean()
            row[c + "_se"] = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
        row["w"] = "/".join(f"{m['w']:g}" for m in ms) if all("w" in m for m in ms) else "—"
        rows.append(row)
    with open(out / f"table-{task}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for r in rows:
        ax.errorbar(r["rm_calls_per_generation"], r["score_mean"], yerr=2 * r["score_mean_se"], fmt="o", capsize=3)
        ax.annotate(r["method"], (r["rm_calls_per_generation"], r["score_mean"]), textcoords="offset points",
                    xytext=(5, 4))
    ax.set(xscale="symlog", xlabel="RM calls per generation", ylabel="true reward (mean ± 2 s.e. over seeds)",
           title=f"rgtg, {task} task, {len(runs)} seeds")
    fig.tight_layout()
    fig.savefig(out / f"reward_vs_rm_calls-{task}.png", dpi=120)
    print(f"| method | true reward | gap closed | w (per seed) | LM calls/gen | RM calls/gen | µs/token | ROUGE-L |  "
          f"({task}, {len(runs)} seeds)")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        gap = "—" if np.isnan(r["gap_closed"]) else f"{r['gap_closed']:.3f} ± {r['gap_closed_se']:.3f}"
        print(f"| {r['method']} | {r['score_mean']:.2f} ± {r['score_mean_se']:.2f} | {gap} | {r['w']} | "
              f"{r['lm_calls_per_generation']:.0f} | {r['rm_calls_per_generation']:.0f} | "
              f"{1e6 * r['seconds_per_token']:.0f} | {r['diversity_rouge_l']:.3f} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
