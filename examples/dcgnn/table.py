"""Collect the dcgnn example runs into one markdown table: accuracy ± std, channel relevances, channel
used per seed, explanation AUROC, the epoch kept per seed (lowest in-distribution validation loss), and the rules
of the DC runs. Accuracies give mean ± std (s.e. = std / √seeds).

    python table.py OUT_DIR > table.md
"""

import json
import sys
from pathlib import Path


def cell(s, key, spec=".3f", n=None):
    v = s.get(key)
    if v is None:
        return "–"
    se = "" if n is None else f" (s.e. {v['std'] / n ** 0.5:{spec}})"
    return f"{v['mean']:{spec}} ± {v['std']:{spec}}{se}"


def main(out: Path) -> None:
    print("| dataset | model | test acc | ID test acc | GNN relevance | rule relevance | channel per seed "
          "| expl. AUROC | kept epoch per seed |")
    print("|---|---|---|---|---|---|---|---|---|")
    rules = []
    for run in sorted(p for p in out.iterdir() if (p / "metrics.json").is_file()):
        m = json.loads((run / "metrics.json").read_text())
        s = m["summary"]
        chans = ",".join(r["channel"] or "–" for r in m["per_seed"])
        kept = ",".join(str(r.get("selected_epoch", "last")) for r in m["per_seed"])
        n = len(m["per_seed"])
        print(f"| {run.name.split('-')[0]} | {m['model']} | {cell(s, 'test_acc', n=n)} | {cell(s, 'id_test_acc', n=n)} "
              f"| {cell(s, 'gnn_relevance', '.2f')} "
              f"| {cell(s, 'rule_relevance', '.2f')} | {chans} | {cell(s, 'explanation_auroc', '.2f')} | {kept} |")
        if m["model"].startswith("DC") and m["classes"] and len(m["classes"]) == 2:
            for r in json.loads((run / "rules.json").read_text()):
                rules.append(f"- {run.name.split('-')[0]}, seed {r['seed']}: `{r['text']}` → {r['positive_class']}")
    faith = out / "faith-motif" / "faith.csv"
    if faith.is_file():
        lines = faith.read_text().splitlines()
        col = lines[0].split(",")
        rows = [dict(zip(col, line.split(","), strict=True)) for line in lines[1:]]
        print("\nFAITH of the DC-SMGNN motif model (the example: ID-test graphs), mean over seeds and budgets:\n")
        for kind in ("model", "random", "ground_truth"):
            vals = [float(r["faith"]) for r in rows if r["explanation"] == kind and r["faith"]]
            if vals:
                print(f"- {kind}: {sum(vals) / len(vals):.3f}")
        summary = out / "faith-motif.summary.json"
        if summary.is_file():
            ratio = json.loads(summary.read_text()).get("random_over_model")
            if ratio is not None:
                print(f"- FAITH(random) / FAITH(model), the paper's Table 11 ratio (lower is better): {ratio:.2f}")
    if rules:
        print("\nRules of the DC-SMGNN rule channel (class 1 iff the sum is positive):\n")
        print("\n".join(rules))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
