"""Efficient cross-conformal prediction (Gasparin & Ramdas, ICML 2025; arXiv 2503.01495).

K-fold cross-conformal sets with the paper's combiners of fold p-values (mod, e-mod, u-mod, eu-mod,
Vovk's cross-conformal and its improved e/u/eu variants, Bonferroni), computed exactly as unions of
intervals; CV+, jackknife+ and split conformal baselines; scikit-learn compatible estimators for
regression and classification; the Barber et al. (2021) simulation study.
"""

from paperkit.methods.conformal.baselines import cv_plus, jackknife_plus, split_conformal
from paperkit.methods.conformal.classification import CrossConformalClassifier, class_scores
from paperkit.methods.conformal.combiners import (
    COMBINERS,
    DEFAULT_METHODS,
    METHODS,
    alpha_prime,
    combine,
    e_combine,
    guarantee,
    in_set,
    method_level,
    parse_methods,
)
from paperkit.methods.conformal.models import MinNormOLS, make_model
from paperkit.methods.conformal.regression import (
    CrossConformalRegressor,
    FoldScores,
    cross_conformal_sets,
    fold_pvalues,
)
from paperkit.methods.conformal.sets import PredictionSets
from paperkit.methods.conformal.simulation import barber_data, simulate_dimension, summarize

__all__ = [
    "COMBINERS", "DEFAULT_METHODS", "METHODS", "CrossConformalClassifier", "CrossConformalRegressor", "FoldScores",
    "MinNormOLS", "PredictionSets", "alpha_prime", "barber_data", "class_scores", "combine", "cross_conformal_sets",
    "cv_plus", "e_combine", "fold_pvalues", "guarantee", "in_set", "jackknife_plus", "make_model", "method_level",
    "parse_methods", "simulate_dimension", "split_conformal", "summarize",
]
