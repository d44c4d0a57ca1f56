"""Table (Markdown) and side-by-side plots of the ferret example runs: accuracy and communication per algorithm.

    python3 ferret/summarize.py ferret/out > ferret/out/table.md     (writes ferret/out/<task>-curves.png too)
"""

import csv
import json
import sys
from pathlib import Path


def main(out: Path) -> None:
    sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "lib")]
    from paperkit.core.plots import save_figure
    from paperkit.methods.ferret.plots import curves_figure

    print("| task | algorithm | params d | uplink floats / client / round | share of d | total uplink MB | "
          "local s / client / round | final test loss | final test acc | Rouge-L |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for task in ("digits", "instruct"):
        hists = {}
        for run in sorted(out.glob(f"{task}-*/summary.json")):
            s = json.loads(run.read_text())
            rows = list(csv.DictReader(open(run.parent / "history.csv")))
            timing = list(csv.DictReader(open(run.parent / "timing.csv")))
            hists[s["algo"]] = [{k: (v if k == "algo" else float(v)) for k, v in r.items()} for r in rows]
            local = sum(float(t["local_s"]) + float(t["proj_s"]) for t in timing) / len(timing)
            f = s["final"]
            rouge = f"{f['rouge_l']:.3f}" if "rouge_l" in f else "–"
            print(f"| {task} | {s['algo']} | {s['params']:,} | {s['totals']['uplink_floats_per_client_round']:,.0f} | "
                  f"{s['totals']['uplink_fraction_of_d']:.2%} | {s['totals']['uplink_bytes'] / 1e6:.3f} | "
                  f"{local:.3f} | {f['test_loss']:.3f} | {f['test_acc']:.3f} | {rouge} |")
        if hists:
            save_figure(curves_figure(hists, title=f"{task}: test loss / accuracy vs round and vs uplink bytes"),
                        out / f"{task}-curves.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
