"""TMvML: Tensorized Multi-View Multi-Label Classification via Laplace Tensor Rank (Zhong et al., ICML 2025).

The paper's body and code were not available; the parts marked "reconstructed" in the docs of each
module (common width of the views, the exact LTR normalisation, the ADMM splitting, the prediction rule)
follow the abstract and standard t-SVD practice, and each such choice is an option.

Modules: :mod:`.tensor` (rotation, t-SVD, LTR/TNN and their proximal steps), :mod:`.kernels` (numba),
:mod:`.solver` (ADMM), :mod:`.views` (common-width mapping), :mod:`.estimator` (``TMvML``),
:mod:`.baselines`, :mod:`.metrics`, :mod:`.data`, :mod:`.run` (repeated splits and the commands' orchestration).
"""

from paperkit.methods.mvml.baselines import BASELINES, MLkNN, run_baseline
from paperkit.methods.mvml.data import DATASETS, MultiViewData
from paperkit.methods.mvml.data import load as load_dataset
from paperkit.methods.mvml.estimator import TMvML, check_labels, check_views
from paperkit.methods.mvml.metrics import DEFINITIONS, METRICS, evaluate
from paperkit.methods.mvml.tensor import PENALTIES, penalty_value, prox, rotate, unrotate

__all__ = ["BASELINES", "DATASETS", "DEFINITIONS", "METRICS", "PENALTIES", "MLkNN", "MultiViewData", "TMvML",
           "check_labels", "check_views", "evaluate", "load_dataset", "penalty_value", "prox", "rotate",
           "run_baseline", "unrotate"]
