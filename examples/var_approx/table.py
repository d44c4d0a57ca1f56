"""Collect the var_approx example runs into markdown tables (mean ± standard error over seeds) and one PNG:
the width slopes per L, attention vs no-attn on context, VAR's scale list vs a geometric one (fit and
tokenizer), and the flow head vs regress.

    python table.py OUT_DIR > OUT_DIR/tables.md      # also writes OUT_DIR/compare.png
"""

import csv
import json
import sys
from pathlib import Path

import numpy as np

from paperkit.core.plots import new_figure, save_figure


def mean_se(values):
    v = np.asarray(values, dtype=float)
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
    return f"{v.mean():.4g} ± {se:.2g}"


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def by(table, *keys):
    out = {}
    for r in table:
        out.setdefault(tuple(r[k] for k in keys), []).append(float(r["test_rmse"]))
    return out


def scaling(out):
    print("## Width scaling (fourier; slope of log median test RMSE vs log width, 95% bootstrap interval)\n")
    print("| L | slope | interval | Spearman | RMSE at smallest m | RMSE at largest m |")
    print("|---|---|---|---|---|---|")
    for s in sorted(json.loads((out / "scaling" / "summary.json").read_text())["slopes"], key=lambda s: float(s["lipschitz"])):
        print(f"| {s['lipschitz']:g} | {s['slope']:.3f} | [{s['slope_lo']:.3f}, {s['slope_hi']:.3f}] | "
              f"{s['spearman']:.2f} | {s['rmse_first']:.4g} (m={s['width_first']}) | "
              f"{s['rmse_last']:.4g} (m={s['width_last']}) |")
    print("\nPer width (test RMSE, mean ± s.e. over seeds):\n")
    cells = by(rows(out / "scaling" / "sweep.csv"), "lipschitz", "width")
    lips = sorted({k[0] for k in cells}, key=float)
    widths = sorted({k[1] for k in cells}, key=int)
    print("| width | " + " | ".join(f"L={float(lip):g}" for lip in lips) + " |")
    print("|---" * (len(lips) + 1) + "|")
    for w in widths:
        print(f"| {w} | " + " | ".join(mean_se(cells[(lip, w)]) for lip in lips) + " |")


def context(out, ax):
    print("\n## Attention vs no-attn on context (products of two tokens; test MSE, mean ± s.e.)\n")
    print("| width | attention MSE | no-attn MSE | ratio (≤ 0.5 wanted) |")
    print("|---|---|---|---|")
    att = by(rows(out / "context-none" / "sweep.csv"), "width")
    no = by(rows(out / "context-no-attn" / "sweep.csv"), "width")
    widths = sorted(att, key=lambda k: int(k[0]))
    for (w,) in widths:
        a, n = np.square(att[(w,)]), np.square(no[(w,)])
        print(f"| {w} | {mean_se(a)} | {mean_se(n)} | {a.mean() / n.mean():.2f} |")
    x = np.arange(len(widths))
    ax.bar(x - 0.2, [np.square(att[w]).mean() for w in widths], 0.4, label="attention")
    ax.bar(x + 0.2, [np.square(no[w]).mean() for w in widths], 0.4, label="no-attn")
    ax.set_xticks(x, [f"m={w[0]}" for w in widths])
    ax.set_ylabel("test MSE")
    ax.set_title("context target", fontsize=9)
    ax.legend(fontsize=7)


def schedules(out, ax):
    print("\n## VAR's scale list vs a geometric one\n")
    print("| model | schedule | tokens | width | test RMSE |")
    print("|---|---|---|---|---|")
    table = rows(out / "schedules" / "sweep.csv")
    cells = by(table, "scales", "width")
    tokens = {r["scales"]: r["tokens"] for r in table}
    for (sched, w), v in sorted(cells.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
        print(f"| fit, fourier L=4 | {sched} | {tokens[sched]} | {w} | {mean_se(v)} |")
    for name in sorted(p.name for p in out.glob("tokenize-*")):
        tok = rows(out / name / "tokenize.csv")[-1]
        print(f"| tokenizer, digits 16x16 | {name.removeprefix('tokenize-')} | {tok['tokens']} | – | "
              f"{float(tok['test_rmse']):.4g} |")
    for sched in sorted({k[0] for k in cells}):
        ws = sorted({int(k[1]) for k in cells if k[0] == sched})
        ax.plot(ws, [np.mean(cells[(sched, str(w))]) for w in ws], "o-", label=f"{sched} ({tokens[sched]} tokens)")
    ax.set_xscale("log")
    ax.set_xlabel("FFN width m")
    ax.set_ylabel("test RMSE")
    ax.set_title("scale schedules (fourier L=4)", fontsize=9)
    ax.legend(fontsize=7)


def flow(out, ax):
    print("\n## Flow head vs regress (fourier L=2; per seed)\n")
    print("| seed | regress test MSE | flow sample-mean MSE | ratio (≤ 2 wanted) | sliced W start → end |")
    print("|---|---|---|---|---|")
    ratios = []
    for run in sorted(out.glob("flow-seed*")):
        seed = run.name.removeprefix("flow-seed")
        f = json.loads((run / "metrics.json").read_text())
        r = json.loads((out / f"regress-seed{seed}" / "metrics.json").read_text())
        ratios.append(f["sample_mean_mse"] / r["test_rmse"] ** 2)
        print(f"| {seed} | {r['test_rmse'] ** 2:.4g} | {f['sample_mean_mse']:.4g} | {ratios[-1]:.2f} | "
              f"{f['sliced_wasserstein_start']:.3g} → {f['sliced_wasserstein_end']:.3g} |")
        hist = rows(run / "flow_history.csv")
        ax.plot([int(h["step"]) for h in hist], [float(h["sliced_wasserstein"]) for h in hist], "o-",
                label=f"seed {seed}")
    print(f"\nMean ratio {np.mean(ratios):.2f} over {len(ratios)} seeds.")
    ax.set_xlabel("training step")
    ax.set_ylabel("sliced Wasserstein (test)")
    ax.set_title("flow head during training", fontsize=9)
    ax.legend(fontsize=7)


def main(out: Path) -> None:
    fig, axes = new_figure(1, 3, figsize=(13, 3.8))
    scaling(out)
    context(out, axes[0])
    schedules(out, axes[1])
    flow(out, axes[2])
    save_figure(fig, out / "compare.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
