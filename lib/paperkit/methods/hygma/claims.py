"""Headline claims of Liu & Li (2025), HYGMA, checked by ``paperkit reproduce`` at CPU scale.

The paper reports SMAC/GRF win rates and Predator-Prey returns that need StarCraft II or hours of GPU;
what reproduces on a laptop is the relative ordering on predator-prey and group-capture, and groups that
match the ground-truth prey assignment on group-capture.
"""

import math

from paperkit.reproduce.criteria import Interval, Order
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _by_algo(d, name):
    summary = json_file(d / name / "summary.json")
    return {m["algo"]: m for m in summary["mean"]}


def _pp(d):
    m = _by_algo(d, "pp")
    return {"catch_hygma": m["hygma-qmix"]["success_mean"], "catch_qmix": m["qmix"]["success_mean"],
            "catch_gap": m["hygma-qmix"]["success_mean"] - m["qmix"]["success_mean"]}


# No seed with a defined ARI (every reference had one prey, or ties) is reported as NaN, not 0: the verdict is
# still "does not hold", but the table no longer shows a measured 0 for an undefined score.
def _gc(d):
    m = _by_algo(d, "gc")
    return {"return_hygma": m["hygma-qmix"]["return_mean"], "return_qmix": m["qmix"]["return_mean"],
            "group_ari": m["hygma-qmix"].get("group_ari_mean", math.nan)}


def _gc_ari(d):
    return {"group_ari": _by_algo(d, "gc")["hygma-qmix"].get("group_ari_mean", math.nan)}


def _run(config, name, steps=None, *extra):
    return ("hygma-train", "--config", f"{{examples}}/hygma/configs/{config}.yaml", "--seeds", "{seed}",
            *(("--steps", str(steps)) if steps else ()), *extra, "-j", "1", "--run-dir", f"{{dir}}/{name}", "-q")


CLAIMS = (
    Claim("hygma/pp-catch", "hygma-train",
          "On predator-prey, HYGMA-QMIX catches the prey at least as often as QMIX (within 0.05) and in at least "
          "80% of episodes (pp easy, 100k steps).",
          "Sec. 5, Predator-Prey results", "HYGMA above QMIX and the other baselines (curves; no number quoted)",
          (_run("pp-easy", "pp"),), _pp, Interval("catch_gap", lo=-0.05), metric="catch_hygma",
          full_seeds=(0, 1), quick_s=240, full_s=600,
          notes="quick = the acceptance run on one seed (100k steps, both algorithms): at 40k steps neither has "
                "learned to catch (ε anneals over 30k)"),
    Claim("hygma/group-capture", "hygma-train",
          "On group-capture (6 agents, 2 preys, c = 3), HYGMA-QMIX earns at least QMIX's return, and its spectral "
          "groups match the prey each agent helps catch.",
          "Sec. 4 (dynamic grouping); CPU stand-in for the paper's cooperative tasks",
          "HYGMA ≥ QMIX; groups that reflect the task's structure",
          (_run("group-capture", "gc"),), _gc, Order("return_hygma", "return_qmix", higher_is_better=True),
          full_seeds=(0, 1, 2), quick_s=300, full_s=900,
          notes="the issue's scale (150k steps, ε over 100k): one seed for two algorithms is ~4 CPU-minutes; the "
                "claim is over 3 seeds (--full)"),
    Claim("hygma/group-ari", "hygma-train",
          "The final HYGMA groups on group-capture agree with each agent's most-helped prey (ARI ≥ 0.5).",
          "Sec. 4 (dynamic grouping)", "groups reflect the task's coordination structure (qualitative)",
          (_run("group-capture", "gc", None, "--algo", "hygma-qmix"),), _gc_ari,
          Interval("group_ari", lo=0.5), full_seeds=(0, 1, 2), quick_s=150, full_s=450,
          notes="HYGMA-QMIX alone (the groups are its own), 150k steps; NaN when no agent has a prey of its own "
                "(a pack hunting one prey: every agent's most-helped prey is the same)"),
)
