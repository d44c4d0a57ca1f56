"""Headline claims of Huang et al. (2025), PIGDreamer, checked by ``paperkit reproduce`` at CPU scale.

The paper's Safety-Gymnasium vision and GUARD results need a GPU and a million steps; what reproduces on a
laptop is the tabular bound behind asymmetric critics (Theorem 3.3) and, on HazardNav-PO, the ordering
full ≥ Unprivileged (SafeDreamer) with the cost near its limit.
"""

from paperkit.reproduce.criteria import AllOf, Interval, Order
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim

RANDOM_EPISODES = 200  # episodes of the uniform random policy the runs must beat


def _bound(d):
    out = json_file(d / "bound.json")
    return {"reward_violation": out["reward_max_violation"], "cost_violation": out["cost_max_violation"]}


def _runs(d):
    # imported here, not at the top: --list loads every claims module
    from paperkit.core.io import read_yaml
    from paperkit.methods.pigdreamer.train import random_policy_score

    pig, unp = json_file(d / "pig" / "summary.json"), json_file(d / "unprivileged" / "summary.json")
    ret_pig, ret_unp = pig["return_mean"], unp["return_mean"]
    cfg = read_yaml(d / "pig" / "config.yaml")   # the runs' env, as they resolved it
    ret_random, _ = random_policy_score(cfg["env"], RANDOM_EPISODES, int(cfg["seed"]), obs=cfg["obs"],
                                        moving=bool(cfg["moving_hazard"]), goal_compass=bool(cfg["goal_compass"]))
    # "at least 90% of SafeDreamer's return", written so that it also reads right for negative returns
    # (a ratio of two negative returns would call the worse one better).
    return {"return_pig": ret_pig, "return_unprivileged": ret_unp, "cost_pig": pig["cost_mean"],
            "return_random": ret_random, "margin_over_90pct": ret_pig - (ret_unp - 0.1 * abs(ret_unp))}


def _train(variant, steps):
    return ("pigdreamer-train", "--config", "{examples}/pigdreamer/configs/hazardnav-moving.yaml", "--variant", variant,
            "--seed", "{seed}", "--steps", str(steps), "--run-dir", f"{{dir}}/{variant}", "-q")


CLAIMS = (
    Claim("pigdreamer/tabular-bound", "pigdreamer-train",
          "On a tiger-style CPOMDP, the state-value average Σ b(s)V*_MDP(s) is never below the POMDP's belief value "
          "for reward (and never above it for minimal cost) on a 0.01 belief grid.",
          "Theorem 3.3 (V_asym(b) ≥ V_sym(b))", "holds for every belief (a theorem)",
          (("pigdreamer-bound", "-o", "{dir}/bound.json", "--plot", "{dir}/bound.png"),), _bound,
          Interval("reward_violation", hi=1e-6), metric="reward_violation", quick_s=5, full_s=5,
          figure="bound.png"),
    Claim("pigdreamer/pig-vs-safedreamer", "pigdreamer-train",
          "On HazardNav-PO with moving hazards, PIGDreamer's final return is at least 90% of SafeDreamer's "
          "(unprivileged) at equal seed and budget, and above a uniform random policy's (two policies that have "
          "not learned the task compare only noise).",
          "Sec. 5 (GUARD: +136% over SafeDreamer)", "PIG above SafeDreamer on every task",
          (_train("pig", 4000), _train("unprivileged", 4000)), _runs,
          AllOf((Interval("margin_over_90pct", lo=0.0), Order("return_pig", "return_random", higher_is_better=True))),
          metric="margin_over_90pct",
          full_steps=(_train("pig", 20000), _train("unprivileged", 20000)), full_seeds=(0, 1, 2),
          quick_s=250, full_s=7200),
)
