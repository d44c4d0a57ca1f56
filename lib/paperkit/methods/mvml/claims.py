"""Headline claims of Zhong et al. (2025), TMvML, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Order
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _ap(d):
    summary = json_file(d / "fit" / "metrics.json")["cv"]["summary"]
    return {f"ap_{m}": v["average_precision"]["mean"] for m, v in summary.items()}


CLAIMS = (
    Claim("mvml/tmvml", "mvml-fit",
          "TMvML (Laplace tensor rank over views) ranks labels better than per-view ridge baselines.",
          "Table 2 (average precision)", "TMvML best AP on every dataset",
          (("mvml-make", "--dataset", "synthetic", "--n", "300", "--seed", "{seed}", "--run-dir", "{dir}/data", "-q"),
           ("mvml-fit", "--views", "{dir}/data/view1.npy,{dir}/data/view2.npy,{dir}/data/view3.npy",
            "--labels", "{dir}/data/labels.npy", "--m", "16", "--cv", "2", "--methods", "tmvml,ridge-view",
            "--seed", "{seed}", "--run-dir", "{dir}/fit", "-q")),
          _ap, Order("ap_tmvml", "ap_ridge-view", higher_is_better=True), seeds=(0, 1),
          full_steps=(("mvml-fit", "--config", "{examples}/mvml/configs/synthetic.yaml", "--seed", "{seed}",
                       "--run-dir", "{dir}/fit", "-q"),),
          quick_s=70, full_s=900, figure="fit/convergence.png"),
)
