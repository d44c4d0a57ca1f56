"""Headline claims of Li et al. (2025), MMInference, checked by ``paperkit reproduce``."""

from paperkit.reproduce.criteria import Interval
from paperkit.reproduce.measures import rows
from paperkit.reproduce.registry import Claim


def _speed(d):
    return {"speedup": max(float(r["speedup"]) for r in rows(d / "bench" / "bench.csv"))}


CLAIMS = (
    Claim("mm_prefill/speed", "mm-prefill",
          "The permutation sparse attention pre-fills faster than dense attention.",
          "Fig. 1 / Sec. 5 (A100, up to 1M tokens)", "up to 8.3× at 1M tokens",
          (("mm-prefill-bench", "--config", "{examples}/mm_prefill/configs/bench.yaml", "--n", "4096",
            "--heads", "2", "--density", "0.1", "--repeats", "1", "--seed", "{seed}", "--run-dir", "{dir}/bench",
            "-q"),),
          _speed, Interval("speedup", 1.0), seeds=(0,),
          full_steps=(("mm-prefill-bench", "--config", "{examples}/mm_prefill/configs/bench.yaml", "--seed", "{seed}",
                       "--run-dir", "{dir}/bench", "-q"),),
          quick_s=20, full_s=600, figure="bench/speedup.png",
          notes="CPU torch backend at N=4096; the paper's speed-up is for GPU kernels at 100k-1M tokens."),
)
