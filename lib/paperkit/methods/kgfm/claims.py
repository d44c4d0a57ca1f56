"""Headline claims of Huang et al. (2025), MOTIF, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _table1(d):
    acc = {m: float(json_file(d / m / "metrics.json")["test_accuracy"]) for m in ("ultra", "star3")}
    return {"ultra_accuracy": acc["ultra"], "star3_accuracy": acc["star3"],
            "star3_minus_ultra": acc["star3"] - acc["ultra"]}


def _motif_run(family):
    return ("kgfm-motif", "--config", "{examples}/kgfm/configs/connecthub.yaml", "--train", "{dir}/data/train.tsv",
            "--test", "{dir}/data/test.tsv", "--labels", "{dir}/data/labels.csv", "--motifs", family,
            "--seed", "{seed}", "--run-dir", f"{{dir}}/{family}", "-q")


CLAIMS = (
    Claim("kgfm/connecthub", "kgfm-motif",
          "On ConnectHub(2), ULTRA's binary motifs cannot tell the positive links from the negative ones "
          "(chance), while 3-star motifs separate them.",
          "Table 1", "ULTRA 50%, star3 100% (k = 2)",
          (("kgfm-gen", "--kind", "connecthub", "--k", "2", "--graphs", "5", "--seed", "{seed}",
            "--run-dir", "{dir}/data", "-q"), _motif_run("ultra"), _motif_run("star3")),
          _table1, Interval("star3_minus_ultra", lo=0.4), seeds=(0,), quick_s=120, full_s=400,
          full_seeds=(0, 1, 2)),
)
