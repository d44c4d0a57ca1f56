"""Headline claims of Fong & Motani (2025), APO fronts for symbolic regression, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim


def _gap(d):
    # gap = front R² at the model's length (or the longest shorter one) minus the model's R²
    gaps = [float(r["gap"]) for r in rows(d / "compare.csv") if int(r["length"]) <= int(r["front_length"])]
    return {"min_gap": min(gaps)}


CLAIMS = (
    Claim("sr_apo/front-bound", "sr-apo-search",
          "No model of a given length beats the APO front at that length (the front is an upper bound).",
          "Sec. 3-4 (fronts as benchmark bounds)", "front ≥ every model of equal length",
          (("{examples}/sr_apo/make_data.py", "{dir}/data"),
           ("sr-apo-search", "--config", "{examples}/sr_apo/configs/search.yaml", "--data", "{dir}/data/diabetes.csv",
            "--features", "bmi,bp,s5", "--seeds", "11284", "--restarts", "0", "-j", "1", "--name", "d",
            "--run-dir", "{dir}/front", "-q"),
           ("sr-apo-compare", "--front", "{dir}/front/front.csv", "--models", "{dir}/data/stepwise_models.csv",
            "-o", "{dir}/compare.csv", "-q")),
          _gap, Interval("min_gap", -1e-9), seeds=(0,),
          full_steps=(("{examples}/sr_apo/make_data.py", "{dir}/data"),
                      ("sr-apo-search", "--config", "{examples}/sr_apo/configs/search.yaml",
                       "--data", "{dir}/data/diabetes.csv", "--features", "bmi,bp,s5", "--name", "d",
                       "--run-dir", "{dir}/front", "-q"),
                      ("sr-apo-compare", "--front", "{dir}/front/front.csv",
                       "--models", "{dir}/data/stepwise_models.csv", "-o", "{dir}/compare.csv", "-q")),
          quick_s=60, full_s=300,
          notes="The search is deterministic; one seed. Lengths beyond the front's longest expression are skipped."),
)
