"""Claims of Chen et al. (2025), universality of one-layer one-head VAR transformers, checked by
``paperkit reproduce``. The paper is theory only: these are the sweeps that make its claims visible."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import json_file
from paperkit.reproduce.registry import Claim


def _scaling(d):
    """The weakest trend over the sweep's Lipschitz constants: Spearman of the median-over-seeds test RMSE with
    width, the log-log slope and the upper end of its 95% bootstrap interval (seeds resampled per width)."""
    rows = json_file(d / "run" / "summary.json")["slopes"]
    return {"spearman": max(float(r["spearman"]) for r in rows), "slope": max(float(r["slope"]) for r in rows),
            "slope_hi": max(float(r["slope_hi"]) for r in rows)}


CLAIMS = (
    Claim("var_approx/width-scaling", "var-approx",
          "A one-layer, one-head VAR transformer approximates a Lipschitz target better as its FFN widens "
          "(test RMSE falls with width).",
          "Thm. 6.6 (universality; no experiments in the paper)", "no number (theory paper)",
          (("var-approx-sweep", "--targets", "fourier", "--lipschitz", "2", "--widths", "8,32,128",
            "--seeds", "0,1,2", "--steps", "1500", "--run-dir", "{dir}/run", "-j", "1", "-q"),),
          _scaling, Interval("spearman", hi=-0.8), metric="spearman", seeds=(0,), quick_s=240, full_s=1200,
          full_steps=(("var-approx-sweep", "--config", "{examples}/var_approx/configs/scaling.yaml",
                       "--run-dir", "{dir}/run", "-q"),),
          notes="One sweep with three seeds per width trained together (vmapped); the Spearman correlation is "
                "taken over the median test RMSE per width at the defaults' 1,500 steps (at 500 steps, one seed, "
                "the narrow models were still on the early plateau and the order of three widths was noise). "
                "--full runs the example's sweep (6 widths, L = 1, 4, 16) and the weakest L decides; "
                "slope and slope_hi (bootstrap) are reported beside it."),
)
