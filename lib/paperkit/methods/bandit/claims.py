"""Headline claims of Wang et al. (2025), fused reward + dueling bandits, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Order
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _final(d):
    return {f"regret_{r['algo']}": r["regret_mean"] for r in json_file(d / "run" / "final.json")["ranking"]}


CLAIMS = (
    Claim("bandit/fusion", "bandit-sim",
          "DecoFusion's aggregated regret is lower than the best algorithm without fusion (MED-NoFusion).",
          "Fig. 2 (official instance, α = 0.5)", "DecoFusion lowest regret",
          (("bandit-sim", "--config", "{examples}/bandit/configs/regret.yaml", "--horizon", "20000", "--runs", "4",
            "--algos", "decofusion,med-nofusion", "--seed", "{seed}", "--run-dir", "{dir}/run", "-q"),),
          _final, Order("regret_decofusion", "regret_med-nofusion"), seeds=(0, 1),
          full_steps=(("bandit-sim", "--config", "{examples}/bandit/configs/regret.yaml", "--seed", "{seed}",
                       "--run-dir", "{dir}/run", "-q"),),
          quick_s=40, full_s=1800, figure="run/regret.png"),
)
