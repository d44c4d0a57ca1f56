"""Headline claims of Rashid et al. (2025), FaRMA, checked by ``paperkit reproduce`` on the toy language."""

from paperkit.reproduce.criteria import Interval, RatioAtMost
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _methods(d):
    return {m["method"]: m for m in json_file(d / "gen" / "summary.json")["methods"]}


def _reward_vs_calls(d):
    m = _methods(d)
    f, a = m["farma"], m["args"]
    se = (f["score_se"] ** 2 + a["score_se"] ** 2) ** 0.5
    return {"farma_minus_args_in_se": (f["score_mean"] - a["score_mean"]) / se,
            "farma_minus_ref": f["score_mean"] - m["ref"]["score_mean"],
            "farma_rm_calls_per_token": f["rm_calls_per_token"], "args_rm_calls_per_token": a["rm_calls_per_token"],
            "farma_gap_closed": f["gap_closed"], "farma_w": f.get("w", 1.0), "args_w": a.get("w", 1.0)}


def _steps(loss_rm, methods):
    return (("rgtg-toy", "--seed", "{seed}", "--run-dir", "{dir}/task", "-q"),
            *(("rgtg-train-rm", "--lm", "{dir}/task/lm.pt", "--pairs", "{dir}/task/pairs.jsonl", "--loss", loss,
               "--seed", "{seed}", "--run-dir", f"{{dir}}/rm-{loss}", "-q") for loss in loss_rm),
            ("rgtg-generate", "--lm", "{dir}/task/lm.pt", "--prompts", "{dir}/task/prompts.jsonl", "--scorer",
             "{dir}/task/reward.json", "--val-prompts", "{dir}/task/val_prompts.jsonl",
             *[x for m in methods for x in ("--method", m)], "--seed", "{seed}",
             "--run-dir", "{dir}/gen", "-q"))


_FARMA_ARGS = _steps(("farma",), ("ref", "farma={dir}/rm-farma/rm.pt", "args={dir}/rm-farma/rm.pt"))

CLAIMS = (
    Claim("rgtg/reward-at-1-over-k-calls", "rgtg-generate",
          "FaRMA's reward is not worse than ARGS's (same RM, k = 10, each with its w picked on validation prompts) "
          "by more than 2 standard errors, with one RM call per token instead of k.",
          "Table 1 / Table 3", "TL;DR reward ARGS 1.46, FaRMA 2.05; RM calls per generation 596.9 vs 53.3",
          _FARMA_ARGS, _reward_vs_calls, Interval("farma_minus_args_in_se", lo=-2.0), seeds=(0,), quick_s=90,
          full_s=300, full_seeds=(0, 1, 2), figure="gen/reward_vs_rm_calls.png"),
    Claim("rgtg/rm-calls", "rgtg-generate",
          "FaRMA calls the RM once per generated token, ARGS k times (k = 10).",
          "Table 3", "ARGS 596.9 vs FaRMA 53.3 RM calls per generation",
          _FARMA_ARGS, _reward_vs_calls, RatioAtMost("farma_rm_calls_per_token", "args_rm_calls_per_token", 0.1),
          seeds=(0,), quick_s=90, full_s=300),
    Claim("rgtg/gap-closed", "rgtg-generate",
          "On 200 toy prompts FaRMA closes at least 30% of the gap between pi_ref's true reward and the enumerated "
          "optimum (over all continuations), with w picked from 1, 2, 5, 10, 20, 50 on 200 validation prompts (the issue's toy "
          "check; the paper reports no optimum).",
          "Issue 17 acceptance 3 (spec check 3)", "—", _FARMA_ARGS, _reward_vs_calls,
          Interval("farma_gap_closed", lo=0.3), seeds=(0,), quick_s=90, full_s=300, full_seeds=(0, 1, 2),
          notes="At w = 1 FaRMA closes under 10%: the RM's per-token scores sit at 0.1-0.3x the scale of the true "
                "Q* (the BT labels' scale is 3x), and the official joint max constraint shrinks them further; w is "
                "picked on validation prompts, as the official scripts tune w and the RM checkpoint per dataset. "
                "See examples/rgtg/README.md."),
)
