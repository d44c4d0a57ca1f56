"""Absolute Pareto-optimal fronts for symbolic regression by exhaustive search.

Fong & Motani, "Pareto-Optimal Fronts for Benchmarking Symbolic Regression Algorithms", ICML 2025.
The grammar (:mod:`.grammar`), preprocessing (:mod:`.data`), the numba Levenberg–Marquardt engine
(:mod:`.kernels`), the paper's scipy engine (:mod:`.baselines`), the search (:mod:`.search`), fronts
and summaries (:mod:`.front`), comparison of other SR methods (:mod:`.compare`) and an estimator.
"""

from paperkit.methods.sr_apo.baselines import SCIPY_METHODS, fit_scipy
from paperkit.methods.sr_apo.data import Prepared, check_data, prepare, start_point
from paperkit.methods.sr_apo.estimator import APOFront
from paperkit.methods.sr_apo.front import (
    apo_front,
    best_per_length,
    front_rows,
    parse_summary_name,
    read_summary,
    strict_front,
    summary_filename,
    write_summary,
)
from paperkit.methods.sr_apo.grammar import (
    Expressions,
    enumerate_expressions,
    parse_official,
    raw_count,
    structures,
    to_infix,
    to_official,
)
from paperkit.methods.sr_apo.search import (
    ENGINES,
    NUMBA_METHOD,
    PAPER_SEEDS,
    FitOptions,
    fit_expressions,
    search,
)

__all__ = [
    "APOFront", "ENGINES", "Expressions", "FitOptions", "NUMBA_METHOD", "PAPER_SEEDS", "Prepared", "SCIPY_METHODS",
    "apo_front", "best_per_length", "check_data", "enumerate_expressions", "fit_expressions", "fit_scipy",
    "front_rows", "parse_official", "parse_summary_name", "prepare", "raw_count", "read_summary", "search",
    "start_point", "strict_front", "structures", "summary_filename", "to_infix", "to_official", "write_summary",
]
