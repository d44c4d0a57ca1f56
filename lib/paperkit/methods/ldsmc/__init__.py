"""LD-SMC: inverse problem sampling in latent space with sequential Monte Carlo (Achituve et al., ICML 2025).

A small latent diffusion prior trained offline (:mod:`.train`, :mod:`.models`), measurement operators
(:mod:`.operators`), LD-SMC and the SMC baselines (:mod:`.smc`), the gradient-guided baselines
(:mod:`.baselines`), offline metrics (:mod:`.metrics`) and the linear-Gaussian toy (:mod:`.toy`).
"""

from .baselines import latent_dps, psld, resample
from .data import load_dataset, load_digits16, render_shapes
from .metrics import DigitsClassifier, frechet_distance, masked_mse, psnr, ssim
from .models import ConvVAE, EpsMLP, LatentPrior, Schedule, ddim_coefficients
from .operators import GaussianBlur, MaskOperator, MatrixOperator, SuperRes, make_operator, measure
from .restore import METHODS, Restoration, RestoreParams, evaluate, restore
from .sampling import sample_prior
from .smc import SMCConfig, SMCResult, ess, ldsmc, smc_sweep
from .train import load_prior, train_ldm, train_vae

__all__ = ["ConvVAE", "DigitsClassifier", "EpsMLP", "GaussianBlur", "LatentPrior", "METHODS", "MaskOperator",
           "MatrixOperator", "Restoration", "RestoreParams", "SMCConfig", "SMCResult", "Schedule", "SuperRes",
           "ddim_coefficients", "ess", "evaluate", "frechet_distance", "latent_dps", "ldsmc", "load_dataset",
           "load_digits16", "load_prior", "make_operator", "masked_mse", "measure", "psld", "psnr", "render_shapes",
           "resample", "restore", "sample_prior", "smc_sweep", "ssim", "train_ldm", "train_vae"]
