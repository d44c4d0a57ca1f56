"""Headline claims of Kulveit et al. (2025), gradual disempowerment, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Order
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim


def _hii(d):
    return {f"hii_final_{r['scenario']}": float(r["hii_final"]) for r in rows(d / "run" / "compare.csv")}


CLAIMS = (
    Claim("disempower/mitigation", "disempower-sim",
          "Early mitigation keeps human influence well above the incremental baseline, where it collapses.",
          "Sec. 4-6 (argument; our ODE model)", "qualitative: early action preserves influence",
          (("disempower-compare", "--config", "{examples}/disempower/configs/compare.yaml",
            "baseline_incremental", "early_mitigation", "--seed", "{seed}", "--run-dir", "{dir}/run", "-q"),),
          _hii, Order("hii_final_early_mitigation", "hii_final_baseline_incremental", higher_is_better=True),
          seeds=(0,), quick_s=6, full_s=10, figure="run/compare.png",
          notes="A position paper: the numbers come from our own model of its argument, not from the paper."),
)
