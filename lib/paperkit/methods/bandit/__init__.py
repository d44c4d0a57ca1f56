"""Fusing reward and dueling feedback in stochastic bandits (Wang et al., ICML 2025, arXiv:2504.15812).

* :mod:`.instances` — DR-MAB instances (means + preference matrix), the paper's generators, Bradley–Terry.
* :mod:`.bounds` — the regret lower bound of Theorem 1 and the no-fusion constant.
* :mod:`.kernels` — numba simulations of ElimFusion, DecoFusion, ElimNoFusion, MED-NoFusion, UCB1,
  KL-UCB and RUCB; :mod:`.reference` — their plain-Python references.
* :mod:`.simulate` — many runs in parallel, regret curves, ranked summaries, sweeps.
"""

from paperkit.methods.bandit.bounds import LowerBound, kl_bernoulli, lower_bound
from paperkit.methods.bandit.instances import (
                                                Instance,
                                                bradley_terry_instance,
                                                bradley_terry_matrix,
                                                fit_bradley_terry,
                                                instance_from_mapping,
                                                load_instance,
                                                make_instance,
                                                official16,
                                                preference_gap_instance,
                                                preference_gap_matrix,
                                                preset,
                                                reward_gap_instance,
)
from paperkit.methods.bandit.simulate import (
                                                ALGORITHMS,
                                                LABELS,
                                                PAPER_ALGORITHMS,
                                                SWEEPS,
                                                SimResult,
                                                check_settings,
                                                curve_rows,
                                                final_summary,
                                                log_checkpoints,
                                                parse_algorithms,
                                                rank,
                                                simulate,
                                                sweep_point,
)

__all__ = [
    "ALGORITHMS", "LABELS", "PAPER_ALGORITHMS", "SWEEPS", "Instance", "LowerBound", "SimResult",
    "bradley_terry_instance", "bradley_terry_matrix", "check_settings", "curve_rows", "final_summary", "fit_bradley_terry",
    "instance_from_mapping", "kl_bernoulli", "load_instance", "log_checkpoints", "lower_bound", "make_instance",
    "official16", "parse_algorithms", "preference_gap_instance", "preference_gap_matrix", "preset", "rank",
    "reward_gap_instance", "simulate", "sweep_point",
]
