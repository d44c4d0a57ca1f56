"""Pick the samplers' step sizes, LD-SMC's twist schedule and the DDIM steps on the VALIDATION digits.

    python examples/ldsmc/tune.py --model examples/ldsmc/out/model --out examples/ldsmc/out/tune [--n-images 100]

The validation split (``load_digits16("val")``, ≈200 images held apart from the prior's training images
and from the test images every table reports) is restored on two tasks, box inpainting and random-mask
inpainting (τ = 0.05, seed 0), 64 images by default. Each method's parameters are searched one coordinate at a time (one
pass, in the order of GRID, each value tried with the others at their current best) on the score

    accuracy − 0.05 · Fréchet digits distance      (mean over the two tasks)

so that one accuracy point weighs as much as 0.2 Fréchet units (the paper tunes on FID alone; we keep the
classifier's accuracy in the score because the issue asks for both). Every evaluation is appended to
``tune.csv`` (a rerun skips what is there) and the winners go to ``chosen.json``; copy them into
``RestoreParams`` (lib/paperkit/methods/ldsmc/restore.py), which is what the CLI's defaults read. The search
starts from the current ``RestoreParams`` (for the shipped defaults it started from the previous ones:
κ1 = κ2 = 0.5, ρ = 0.25, ζ = 0.5, γ = 0.1, Cauchy scale 0.1, Langevin step 0.5).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "lib")]

TASKS = ("box", "random")
TAU = 0.05
FD_WEIGHT = 0.05
# method → [(parameter, values)], searched in this order. The DDIM steps (25), LD-SMC's s (66) and Gibbs sweeps (1),
# PFLD's stage and LatentDAPS's ODE/Langevin step counts stay fixed: each LD-SMC evaluation took 2–4 minutes on
# the shared machine, so the search covers the step sizes and the weighting (loglik, aux_var) only.
GRID = {
    "ldsmc": [("loglik", ["mean", "sum"]), ("kappa1", [0.5, 1.0]), ("kappa2", [0.5, 1.0, 2.5]),
              ("rho", [0.25, 0.75]), ("aux_var", ["schedule", "tau"])],
    "ldps": [("zeta", [0.25, 0.5, 1.0, 2.0])],
    # a check of the DDIM steps at the chosen step sizes (`--methods ldsmc-steps,ldps-steps`, after the search)
    "ldsmc-steps": [("steps", [25, 50])],
    "ldps-steps": [("steps", [25, 50])],
    "psld": [("gamma", [0.03, 0.1, 0.3])],
    "pfld": [("cauchy_scale", [0.03, 0.1, 0.3])],
    "latentdaps": [("langevin_lr", [0.1, 0.3, 0.5, 1.0])],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n-images", type=int, default=100)
    ap.add_argument("--methods", default=",".join(GRID))
    a = ap.parse_args()

    import torch

    from paperkit.core.tables import read_table, write_table
    from paperkit.methods.ldsmc.data import load_digits16
    from paperkit.methods.ldsmc.operators import make_operator, measure
    from paperkit.methods.ldsmc.restore import RestoreParams, evaluate, restore
    from paperkit.methods.ldsmc.run import load_classifier
    from paperkit.methods.ldsmc.train import load_prior

    torch.set_num_threads(1)
    prior, clf = load_prior(a.model), load_classifier(a.model)
    x, labels = load_digits16("val")
    x, labels = x[:a.n_images], labels[:a.n_images]
    problems = {}
    for task in TASKS:
        op = make_operator(task, len(x), prior.image_shape, seed=0)
        problems[task] = (op, measure(op, torch.from_numpy(x), TAU, seed=0))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "tune.csv"
    rows = read_table(log_path).records() if log_path.exists() else []
    done = {r["key"]: r for r in rows}

    def score(method: str, params: RestoreParams) -> float:
        key = f"{method} {json.dumps(params.as_dict(), sort_keys=True)}"
        if key not in done:
            row = {"key": key, "method": method}
            for task, (op, y) in problems.items():
                m = evaluate(restore(method, prior, op, y, TAU, params, seed=0), x, op, y, classifier=clf,
                             labels=labels)
                row.update({f"{task}_accuracy": m["accuracy"], f"{task}_fd": m["fd"], f"{task}_psnr": m["psnr"],
                            f"{task}_seconds": m["seconds"]})
            row["score"] = sum(row[f"{t}_accuracy"] - FD_WEIGHT * row[f"{t}_fd"] for t in TASKS) / len(TASKS)
            done[key] = row
            rows.append(row)
            write_table(log_path, rows)
            print(f"{method:10s} {row['score']:.4f}  " + "  ".join(
                f"{t}: acc {row[f'{t}_accuracy']:.3f} fd {row[f'{t}_fd']:.2f}" for t in TASKS), flush=True)
        return float(done[key]["score"])

    best = RestoreParams()
    chosen: dict = {}
    for entry in a.methods.split(","):
        method = entry.removesuffix("-steps")
        for name, values in GRID[entry]:
            scored = {v: score(method, _with(best, name, v)) for v in values}
            pick = max(values, key=lambda v: scored[v])
            best = _with(best, name, pick)
            chosen[name] = pick
            print(f"  {entry}: {name} = {pick}", flush=True)
    (out / "chosen.json").write_text(json.dumps(chosen, indent=1) + "\n")
    print(json.dumps(chosen))


def _with(params, name, value):
    from dataclasses import replace

    return replace(params, **{name: value})


if __name__ == "__main__":
    main()
