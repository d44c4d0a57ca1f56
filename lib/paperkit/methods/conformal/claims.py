"""Headline claims of Gasparin & Ramdas (2025), checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Interval, Order
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim

_SIM = ("conformal-sim", "--config", "{examples}/conformal/configs/sim.yaml", "--p", "5", "--reps", "40",
        "--methods", "e-mod,cross,split", "--seed", "{seed}", "--run-dir", "{dir}/sim", "-q")
_SIM_FULL = ("conformal-sim", "--config", "{examples}/conformal/configs/sim.yaml", "--seed", "{seed}",
             "--run-dir", "{dir}/sim", "-q")


def _sim(d):
    out = {}
    for r in rows(d / "sim" / "results.csv"):
        if r["p"] == "5":
            out[f"length_{r['method']}"] = float(r["mean_length"])
            out[f"coverage_{r['method']}"] = float(r["coverage"])
    return out


CLAIMS = (
    Claim("conformal/efficiency", "conformal-cv",
          "E-modified cross-conformal sets are shorter than cross-conformal ones on the same data.",
          "Fig. 2 (Barber et al. simulation)", "e-mod length < cross length",
          (_SIM,), _sim, Order("length_e-mod", "length_cross"), seeds=(0, 1),
          full_steps=(_SIM_FULL,), full_seeds=(0, 1, 2), quick_s=50, full_s=900, figure="sim/coverage_length.png"),
    Claim("conformal/coverage", "conformal-cv",
          "E-modified cross-conformal keeps coverage of at least 1-2α (here 0.8).",
          "Thm. 3.2, Fig. 2", "coverage ≥ 0.8 (α = 0.1)",
          (_SIM,), _sim, Interval("coverage_e-mod", 0.8, 1.0), seeds=(0, 1),
          full_steps=(_SIM_FULL,), full_seeds=(0, 1, 2), quick_s=50, full_s=900),
)
