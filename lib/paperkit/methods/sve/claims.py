"""Claims of Zhang et al. (2025), SVE-Math, reproducible on CPU (relative ones), checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim

CONFIG = "{examples}/sve/configs/reduced.yaml"


def _encode(pretrain):
    return ("sve-encode", "--config", CONFIG, "--pretrain", pretrain, "--seed", "{seed}",
            "--run-dir", f"{{dir}}/{pretrain}", "-q")


# The three encoder claims measure one experiment (both encoders, same seed): the runner runs it once.
PRETRAINING = (_encode("primitives"), _encode("counts"))


def _pretraining(d):
    p, c = (json_file(d / k / "metrics.json") for k in ("primitives", "counts"))
    return {"junction_f1_primitives": p["junction"]["f1"], "junction_f1_counts": c["junction"]["f1"],
            "junction_f1_gain": p["junction"]["f1"] - c["junction"]["f1"],
            "probe_gain": p["probe_accuracy"]["all"] - c["probe_accuracy"]["all"]}


def _router(d):
    m = json_file(d / "primitives" / "metrics.json")
    on, equal = m["probe_accuracy"]["all"], m["router_baselines"]["equal"]["probe_accuracy"]["all"]
    return {"probe_router": on, "probe_equal": equal, "router_minus_equal": on - equal}


def _shipped(d):
    stored, got = json_file(d / "stored.json"), json_file(d / "metrics.json")
    keys = (("map50",), ("junction", "f1"), ("boundary", "f1"), ("probe_accuracy", "all"))

    def pick(m, k):
        for part in k:
            m = m[part]
        return float(m)

    return {"max_abs_diff": max(abs(pick(stored, k) - pick(got, k)) for k in keys)}


CLAIMS = (
    Claim("sve/primitive-junctions", "sve-encode",
          "Multi-task primitive pretraining beats a same-size encoder pretrained on image-level class counts by "
          ">= 10 points of junction F1 (spec acceptance 3).",
          "spec check 3 (paper: GeoGLIP vs CLIP features)", ">= +0.10 junction F1@4px",
          PRETRAINING, _pretraining, Interval("junction_f1_gain", lo=0.10),
          seeds=(0,), full_seeds=(0, 1, 2), quick_s=900, full_s=2700,
          notes="64-px diagrams, 600 training images (examples/sve/configs/reduced.yaml)"),
    Claim("sve/primitive-probe", "sve-encode",
          "Primitive pretraining beats counts-only pretraining by >= 5 points of probe accuracy.",
          "spec check 3", ">= +0.05 probe accuracy",
          PRETRAINING, _pretraining, Interval("probe_gain", lo=0.05),
          seeds=(0,), full_seeds=(0, 1, 2), quick_s=900, full_s=2700,
          notes="one experiment with sve/primitive-junctions: run together, it trains once"),
    Claim("sve/router-vs-equal", "sve-encode",
          "The feature router is at least as good as equal-weight level concatenation (within 1 point).",
          "spec check 4 (paper: router ablation)", "router >= equal - 0.01",
          PRETRAINING, _router, Interval("router_minus_equal", lo=-0.01),
          seeds=(0,), full_seeds=(0, 1, 2), quick_s=900, full_s=2700,
          notes="one experiment with sve/primitive-junctions: run together, it trains once"),
    Claim("sve/shipped-reproduces", "sve-encode",
          "sve-predict on the shipped eval set reproduces the shipped checkpoint's stored metrics within 1e-6.",
          "spec check 5", "|difference| <= 1e-6",
          (("sve-predict", "--images", "sve-eval64", "--model", "sve-small", "--device", "cpu",
            "--metrics", "{dir}/metrics.json", "-o", "{dir}/preds.jsonl", "-q"),
           ("{examples}/sve/stored_metrics.py", "{dir}/stored.json")),
          _shipped, Interval("max_abs_diff", hi=1e-6), quick_s=30, full_s=30),
)
