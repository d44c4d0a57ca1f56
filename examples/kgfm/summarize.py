"""Tables of the kgfm example: Table 1 (ConnectHub accuracy, mean ± s.e. over seeds, and a PNG), the WL
separations, and zero-shot MRR on rule KGs.  Usage: python summarize.py table1|wl|rules OUT_DIR"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np


def mean_se(xs: list[float]) -> str:
    a = np.asarray(xs, dtype=float)
    se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0
    return f"{a.mean():.3f} ± {se:.3f} (n={len(a)})"


def table1(out: Path) -> None:
    from paperkit.core.plots import new_figure, save_figure

    rows: dict[tuple[int, str], list[tuple[float, int, float]]] = {}  # (accuracy, epochs, wall s) per seed
    for man in sorted(out.glob("ch*/*-seed*/manifest.json")):  # finished runs (the manifest comes last)
        run = man.parent
        k = int(run.parent.name[2:])
        fam = run.name.rsplit("-seed", 1)[0]
        epochs = len((run / "curve.csv").read_text().strip().splitlines()) - 1
        wall = json.loads(man.read_text()).get("wall_time_s", float("nan"))
        rows.setdefault((k, fam), []).append((json.loads((run / "metrics.json").read_text())["test_accuracy"],
                                              epochs, wall))
    print("| k | model | test accuracy | epochs (per seed) | wall time per run (min, mean) |\n|---|---|---|---|---|")
    fig, ax = new_figure(figsize=(6, 3.5))
    for k in sorted({k for k, _ in rows}):
        fams = [f for kk, f in rows if kk == k]
        fams.sort(key=lambda f: (f != "ultra", len(f), f))
        for f in fams:
            acc, ep, wall = zip(*rows[(k, f)], strict=True)
            print(f"| {k} | {f} | {mean_se(list(acc))} | {', '.join(map(str, ep))} | {np.mean(wall) / 60:.1f} |")
        ax.plot(range(len(fams)), [np.mean([a for a, _, _ in rows[(k, f)]]) for f in fams], marker="o", label=f"k={k}")
        ax.set_xticks(range(len(fams)), fams)
    ax.set(ylabel="ConnectHub test accuracy", ylim=(0.4, 1.05), title="MOTIF Table 1: only star(k+1) separates")
    ax.legend()
    save_figure(fig, out / "table1.png")


def wl(out: Path) -> None:
    from paperkit.methods.kgfm.run import WlSettings, run_wl

    print("| graph | query | family | relation colours | link colours | tied relation pairs |\n|---|---|---|---|---|---|")
    for d in sorted(out.glob("data-*")):
        g = d / "train.tsv"
        if d.name.startswith("data-ch"):
            k = int(d.name[7:])
            s = WlSettings(str(g), ("ultra", "f2", "f3", f"star{k}", f"star{k + 1}"), "g0:r0", "g0:u")
        elif d.name == "data-search":
            with open(d / "labels.csv", newline="") as f:
                pair = next(csv.DictReader(f))
            s = WlSettings(str(g), ("ultra", "f2", "f3"), pair["query"])
        else:
            continue
        for item in run_wl(s)["summary"]:
            print(f"| {d.name[5:]} | {s.query} | {item['family']} | {item['relation_classes']} | "
                  f"{item.get('link_classes', '-')} | {item['relations_tied']} |")


def rules(out: Path) -> None:
    res: dict[str, dict[str, float]] = {}
    for f in sorted((out / "rules").glob("*-seed*.json")):
        if f.name.endswith(".manifest.json"):
            continue
        fam, seed = f.stem.rsplit("-seed", 1)
        res.setdefault(fam, {})[seed] = json.loads(f.read_text())["mrr"]
    seeds = sorted({s for v in res.values() for s in v})
    print("| motifs | zero-shot filtered MRR (mean ± s.e.) | " + " | ".join(f"seed {s}" for s in seeds) + " |")
    print("|---|---|" + "---|" * len(seeds))
    for fam in ("none", "f2", "f3"):
        if fam in res:
            cells = " | ".join(f"{res[fam][s]:.3f}" if s in res[fam] else "-" for s in seeds)
            print(f"| {fam} | {mean_se(list(res[fam].values()))} | {cells} |")
    if {"none", "f2", "f3"} <= set(res):
        m = {f: float(np.mean(list(res[f].values()))) for f in ("none", "f2", "f3")}
        print(f"\nmin(f2, f3) / none = {min(m['f2'], m['f3']) / m['none']:.2f} (claim: >= 3); "
              f"f3 - f2 = {m['f3'] - m['f2']:+.3f} (claim: >= -0.02)")


if __name__ == "__main__":
    {"table1": table1, "wl": wl, "rules": rules}[sys.argv[1]](Path(sys.argv[2]))
