"""Headline claims of Guan et al. (2025), Kendall rank loss for distillation, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import SeedTest
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim


def _top1(d):
    return {f"top1_{r['base']}_{r['rank']}": float(r["top1_mean"]) for r in rows(d / "run" / "summary.csv")}


CLAIMS = (
    Claim("kd_rank/rank-loss", "kd-rank",
          "Adding the Kendall rank loss to KD raises the student's top-1 accuracy.",
          "Table 1 (CIFAR-100, KD + ours)", "+0.5 to +2 top-1 points",
          (("kd-rank", "--data", "synth100", "--train-per-class", "10", "--test-per-class", "5",
            "--teacher-hidden", "128", "--teacher-epochs", "8", "--epochs", "4", "--batch-size", "32",
            "--seeds", "{seed}", "--base", "kd", "--run-dir", "{dir}/run", "-q"),),
          _top1, SeedTest("top1_kd_on", "top1_kd_off", higher_is_better=True, confidence=0.9), seeds=(0, 1, 2),
          full_steps=(("kd-rank", "--config", "{examples}/kd_rank/configs/synth100.yaml", "--seeds", "{seed}",
                       "--run-dir", "{dir}/run", "-q"),),
          quick_s=120, full_s=1800),
)
