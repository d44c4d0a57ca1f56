"""var-approx: empirical approximation sweeps for the one-layer, one-head VAR transformer of Chen et al.,
"Fundamental Limits of Visual Autoregressive Transformers: Universal Approximation Abilities" (ICML 2025)."""

from paperkit.methods.var_approx.model import VARApprox, build_model, linear_floor
from paperkit.methods.var_approx.pyramid import block_mask, token_count, up_pyramid
from paperkit.methods.var_approx.train import Problem, fit, fit_seeds

__all__ = ["VARApprox", "build_model", "linear_floor", "block_mask", "token_count", "up_pyramid", "Problem", "fit",
           "fit_seeds"]
