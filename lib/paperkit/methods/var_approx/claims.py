"""Claims of Chen et al. (2025), universality of one-layer one-head VAR transformers, checked by
``paperkit reproduce``. The paper is theory only: these are the sweeps that make its claims visible."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _scaling(d):
    rows = json_file(d / "run" / "summary.json")["slopes"]  # one per L; the weakest trend decides
    return {"spearman": max(float(r["spearman"]) for r in rows), "slope": max(float(r["slope"]) for r in rows)}


CLAIMS = (
    Claim("var_approx/width-scaling", "var-approx",
          "A one-layer, one-head VAR transformer approximates a Lipschitz target better as its FFN widens "
          "(test RMSE falls with width).",
          "Thm. 6.6 (universality; no experiments in the paper)", "no number (theory paper)",
          (("var-approx-sweep", "--targets", "fourier", "--lipschitz", "2", "--widths", "8,32,128",
            "--steps", "500", "--seeds", "{seed}", "--run-dir", "{dir}/run", "-j", "1", "-q"),),
          _scaling, Interval("spearman", hi=-0.8), metric="spearman", seeds=(0,), quick_s=60, full_s=600,
          full_steps=(("var-approx-sweep", "--config", "{examples}/var_approx/configs/scaling.yaml",
                       "--run-dir", "{dir}/run", "-q"),),
          notes="Spearman correlation of median test RMSE with width over the sweep; the slope is reported too. "
                "At quick scale (500 steps) the narrow models are still on the early plateau (test relative L2 "
                "0.67-0.98 at widths 8-32, fourier L=2), so the order of three widths says how fast each leaves "
                "it more than how well it approximates; --full (1,500 steps, 6 widths, 3 L, 3 seeds) is the test."),
)
