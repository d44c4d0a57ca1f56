"""The sve example table: primitive vs counts pretraining and router vs equal vs global-only, mean ± standard
error over the seeds found in OUT (primitives-seedN/ and counts-seedN/ run dirs)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def mean_se(values: list[float]) -> str:
    m = sum(values) / len(values)
    if len(values) < 2:
        return f"{m:.3f}"
    se = math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1) / len(values))
    return f"{m:.3f} ± {se:.3f}"


def main(out: Path) -> None:
    runs = {kind: [json.loads(p.read_text()) for p in sorted(out.glob(f"{kind}-seed*/metrics.json"))]
            for kind in ("primitives", "counts")}
    types = ("all", "count", "on_line", "centre", "parallel")
    print(f"seeds: {len(runs['primitives'])} (primitives), {len(runs['counts'])} (counts)\n")
    print("| pretraining | mAP@0.5 | junction F1@4px | boundary F1@2px | " + " | ".join(f"probe {t}" for t in types) + " |")
    print("|---" * (4 + len(types)) + "|")
    for kind, ms in runs.items():
        if ms:
            cells = [mean_se([m["map50"] for m in ms]), mean_se([m["junction"]["f1"] for m in ms]),
                     mean_se([m["boundary"]["f1"] for m in ms])]
            cells += [mean_se([m["probe_accuracy"].get(t, float("nan")) for m in ms]) for t in types]
            print(f"| {kind} | " + " | ".join(cells) + " |")
    if runs["primitives"] and len(runs["primitives"]) == len(runs["counts"]):   # paired by seed
        pairs = list(zip(runs["primitives"], runs["counts"], strict=True))
        cells = [mean_se([p["map50"] - c["map50"] for p, c in pairs]),
                 mean_se([p["junction"]["f1"] - c["junction"]["f1"] for p, c in pairs]),
                 mean_se([p["boundary"]["f1"] - c["boundary"]["f1"] for p, c in pairs])]
        cells += [mean_se([p["probe_accuracy"].get(t, float("nan")) - c["probe_accuracy"].get(t, float("nan"))
                           for p, c in pairs]) for t in types]
        print("| gain (primitives - counts, paired) | " + " | ".join(cells) + " |")
    prim = runs["primitives"]
    if prim and "router_baselines" in prim[0]:
        print("\n| router (primitive encoders) | " + " | ".join(f"probe {t}" for t in types) + " |")
        print("|---" * (1 + len(types)) + "|")
        rows = {"on": [m["probe_accuracy"] for m in prim]}
        for mode in ("equal", "global-only"):
            rows[mode] = [m["router_baselines"][mode]["probe_accuracy"] for m in prim]
        for mode, accs in rows.items():
            print(f"| {mode} | " + " | ".join(mean_se([a.get(t, float("nan")) for a in accs]) for t in types) + " |")
        print("\n| question type | " + " | ".join(prim[0]["router_weights"]["count"]) + " |  (mean router weight, seed 0)")
        print("|---" * (1 + len(prim[0]["router_weights"]["count"])) + "|")
        for t, w in prim[0]["router_weights"].items():
            print(f"| {t} | " + " | ".join(f"{v:.3f}" for v in w.values()) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
