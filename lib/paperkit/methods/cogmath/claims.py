"""Headline claims of Liu et al. (2025), CogMath, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _summary(d):
    s = json_file(d / "run" / "summary.json")
    return {"overestimation_relative": s["overestimation_relative"], "accuracy": s["accuracy"],
            "pass_rate": s["pass_rate"]}


CLAIMS = (
    Claim("cogmath/overestimation", "cogmath-eval",
          "Accuracy overstates mathematical ability by 30-40% once all nine cognitive inquiries must pass.",
          "Abstract, Table 2", "overestimated by 30-40%",
          (("cogmath-generate", "--config", "{examples}/cogmath/configs/generate.yaml", "--source", "synthetic:40",
            "--seed", "{seed}", "-o", "{dir}/inquiries.jsonl", "-q"),
           ("cogmath-eval", "--config", "{examples}/cogmath/configs/mixed.yaml", "--inquiries", "{dir}/inquiries.jsonl",
            "--seed", "{seed}", "--run-dir", "{dir}/run", "-q")),
          _summary, Interval("overestimation_relative", 0.3, 0.4), seeds=(0, 1), quick_s=12, full_s=60,
          notes="Run with the rule-based 'mixed' simulated model, not an LLM (that needs a server)."),
)
