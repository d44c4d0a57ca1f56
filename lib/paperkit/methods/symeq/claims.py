"""Headline claims of Pearce-Crump (2025), equivariant layers for symmetric tensors, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import RatioAtMost
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _task_b(d):
    models = json_file(d / "run" / "metrics.json")["models"]
    eq = models["equivariant"]["test_mse"]
    return {"equivariant_test_mse": eq["6"]["mean"], "equivariant_test_mse_n10": eq["10"]["mean"],
            "mlp_test_mse": models["mlp"]["test_mse"]["6"]["mean"]}


_TASK_B = (("symeq-fit", "--task", "B", "--n", "6", "--n-train", "64", "--test-n", "10",
            "--model", "equivariant,mlp", "--seeds", "{seed}", "--run-dir", "{dir}/run", "-j", "1", "-q"),)

CLAIMS = (
    Claim("symeq/sample-efficiency", "symeq-fit",
          "Exact S_n-equivariant layers learn an equivariant map from few samples far better than an MLP.",
          "Sec. 7 (motivation; no experiments in the paper)", "no number (theory paper)",
          _TASK_B, _task_b, RatioAtMost("equivariant_test_mse", "mlp_test_mse", 0.2),
          seeds=(0, 1, 2), quick_s=60, full_s=60,
          notes="Task B (y_i = mean_j A_ij^2), n = 6, 64 training samples; the bound 0.2 is the issue's."),
    Claim("symeq/size-transfer", "symeq-fit",
          "The same weights apply at another n: trained at n = 6, the error at n = 10 stays within 2x.",
          "Sec. 6 (weights independent of n)", "no number (theory paper)",
          _TASK_B, _task_b, RatioAtMost("equivariant_test_mse_n10", "equivariant_test_mse", 2.0),
          seeds=(0, 1, 2), quick_s=60, full_s=60),
)
