"""Headline claims of Hu, Leung & Farnia (2025), PAK-UCB, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Order, RatioAtMost
from paperkit.reproduce.measures import json_file, step_seconds
from paperkit.reproduce.registry import Claim

_CFG = "{examples}/gen_select/configs/switch.yaml"


def _opr(d):
    learners = json_file(d / "run" / "summary.json")["learners"]
    return {f"opr_{k}": v["opr_mean"] for k, v in learners.items()}


def _times(d):
    pak, rff = step_seconds(d)
    return {"seconds_rff-ucb": rff, "seconds_pak-ucb": pak}


CLAIMS = (
    Claim("gen_select/pak-ucb", "gen-select",
          "Prompt-aware PAK-UCB picks the best model per prompt more often than prompt-blind greedy selection.",
          "Sec. 6, Fig. 3 (switching instance)", "PAK-UCB optimal-pick rate > baselines",
          (("gen-select", "--config", _CFG, "--horizon", "1000", "--runs", "2", "--learners", "pak-ucb,greedy",
            "--seed", "{seed}", "--run-dir", "{dir}/run", "-q"),),
          _opr, Order("opr_pak-ucb", "opr_greedy", higher_is_better=True), seeds=(0, 1, 2),
          full_steps=(("gen-select", "--config", _CFG, "--seed", "{seed}", "--run-dir", "{dir}/run", "-q"),),
          quick_s=25, full_s=600, figure="run/gen_select.png"),
    Claim("gen_select/rff-speed", "gen-select",
          "RFF-UCB is cheaper than kernel PAK-UCB (constant vs growing cost per round).",
          "Sec. 5 (RFF-UCB), timing", "RFF-UCB faster; gap grows with T",
          (("gen-select", "--config", _CFG, "--horizon", "2000", "--runs", "1", "--learners", "pak-ucb",
            "--seed", "{seed}", "--run-dir", "{dir}/pak", "-q"),
           ("gen-select", "--config", _CFG, "--horizon", "2000", "--runs", "1", "--learners", "rff-ucb",
            "--seed", "{seed}", "--run-dir", "{dir}/rff", "-q")),
          _times, RatioAtMost("seconds_rff-ucb", "seconds_pak-ucb", 1.0), seeds=(0, 1), quick_s=30, full_s=60,
          notes="Wall time of whole commands (process start included) on a shared machine: noisy, "
                "so the bound is only 'not slower' and the ratio must hold on the mean over seeds."),
)
