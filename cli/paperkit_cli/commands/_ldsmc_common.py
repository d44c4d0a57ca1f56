"""Options and setup shared by ``ldsmc-restore`` and ``ldsmc-bench`` (click only at import time)."""

from __future__ import annotations

import click

from paperkit_cli import options

problem_options = options._compose(
    click.option("--model", "model_dir", required=True, type=click.Path(exists=True), metavar="DIR|FILE.py",
                 help="Folder written by 'paperkit ldsmc-train' (vae.pt, ldm.pt, classifier.npz), or your own "
                      "Python file whose build_prior() returns a paperkit.methods.ldsmc.LatentPrior."),
    click.option("--task", type=click.Choice(["box", "random", "sr2", "blur"]), default="box", show_default=True,
                 help="box: box inpainting; random: random missing pixels; sr2: 2× average-pool "
                      "super-resolution; blur: 5×5 Gaussian blur (σ = 1)."),
    click.option("--tau", "--sigma", "tau", type=float, default=0.05, show_default=True,
                 help="Measurement noise std τ on the [-1, 1] pixel scale; must be > 0."),
    click.option("--images", "image_files", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Your images (.npy (n, C, H, W) in [-1, 1], or .png); repeatable. Default: the test split."),
    click.option("--mask", "mask_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Inpainting mask .npy (1 observed, 0 missing), (H, W) or (n, C, H, W); overrides --task."),
    click.option("--n-images", type=click.IntRange(min=1), default=16, show_default=True,
                 help="How many test images (ignored with --images)."),
    click.option("--box", type=click.IntRange(min=1), default=8, show_default=True, help="Box side (box task)."),
    click.option("--box-top", type=click.IntRange(min=0), default=None, help="Box row [default: centred]."),
    click.option("--box-left", type=click.IntRange(min=0), default=None, help="Box column [default: centred]."),
    click.option("--random-box", is_flag=True, help="Place each image's box at random (from --seed)."),
    click.option("--missing", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.7,
                 show_default=True, help="Fraction of hidden pixels (random task)."),
)

sampler_options = options._compose(
    click.option("--particles", "-N", type=int, default=8, show_default=True, help="SMC particles per image (≥ 1)."),
    click.option("--steps", type=click.IntRange(min=1), default=25, show_default=True,
                 help="DDIM (η = 1) steps, the same for every method."),
    click.option("--s", "s", type=click.IntRange(min=0), default=66, show_default=True,
                 help="Diffusion step below which the proposal adds the y_t term (phase 2)."),
    click.option("--kappa1", type=click.FloatRange(min=0), default=0.5, show_default=True,
                 help="Phase-1 step (normalised ĝ1)."),
    click.option("--kappa2", type=click.FloatRange(min=0), default=0.5, show_default=True,
                 help="Phase-2 step (normalised (1−ρ)ĝ1 + ρĝ2)."),
    click.option("--rho", type=click.FloatRange(0, 1), default=0.25, show_default=True,
                 help="Phase-2 mix ρ. (The defaults of κ1, κ2, ρ, ζ are tuned for 25 steps on the digits prior; the "
                      "paper's code uses κ1 = 1, κ2 = 2.5, ρ = 0.75 at 1000 steps.)"),
    click.option("--gibbs", type=click.IntRange(min=1), default=1, show_default=True,
                 help="SMC sweeps of the Gibbs sampler over the auxiliary observations."),
    click.option("--loglik", type=click.Choice(["mean", "sum"]), default="mean", show_default=True,
                 help="LD-SMC's log-densities: mean of squared residuals (the official code; tempered) or sum "
                      "(exact). ltds and bootstrap always use sum."),
    click.option("--aux-var", type=click.Choice(["schedule", "tau"]), default="schedule", show_default=True,
                 help="Variance of y_t: 1 − ᾱ_t (the code) or τ²."),
    click.option("--refine-iters", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Latent refinement argmin_z‖y − A(D(z))‖² after SMC (0: off; early-stopped at τ²)."),
    click.option("--lsq-iters", type=click.IntRange(min=1), default=300, show_default=True,
                 help="Adam steps of the pixel least-squares fit (first Gibbs pass; the lsq method)."),
    click.option("--zeta", type=click.FloatRange(min=0), default=0.5, show_default=True,
                 help="LDPS/PSLD step on ∇‖y − A(D(ẑ_0))‖."),
    click.option("--gamma", type=click.FloatRange(min=0), default=0.1, show_default=True,
                 help="PSLD gluing weight."),
    click.option("--threads", type=click.IntRange(min=0), default=0, show_default=True,
                 help="torch CPU threads; 0 leaves torch's default."),
)


def setup(model_dir, task, tau, image_files, mask_file, n_images, box, box_top, box_left, random_box, missing,
          particles, seed):
    """(prior, classifier or None, truth, labels or None, operator, y, problem description); raises InputError."""
    import math

    import torch

    from paperkit.core import io
    from paperkit.core.errors import InputError
    from paperkit.methods.ldsmc import operators as ops
    from paperkit.methods.ldsmc.data import load_dataset
    from paperkit.methods.ldsmc.pipeline import load_classifier, load_user_images
    from paperkit.methods.ldsmc.train import load_prior

    if not (tau > 0 and math.isfinite(tau)):
        raise InputError(f"--tau {tau}: the noise level must be a positive number")
    if particles < 1:
        raise InputError(f"--particles {particles}: expected at least 1 particle")
    if str(model_dir).endswith(".py"):
        prior, classifier = user_prior(model_dir), None
    else:
        prior, classifier = load_prior(model_dir), load_classifier(model_dir)
    labels = None
    if image_files:
        truth = load_user_images(list(image_files), prior.image_shape)
    else:
        if prior.image_shape != (1, 16, 16) or prior.data not in ("digits", "shapes"):
            raise InputError(f"{model_dir}: no built-in test images for this model (trained on {prior.data}, images "
                             f"{prior.image_shape}); pass --images")
        truth, labels = load_dataset(prior.data, "test", seed=0)
        truth, labels = truth[:n_images], labels[:n_images]
        if prior.data != "digits":
            labels = None  # the classifier metrics are for digits
    n = len(truth)
    if mask_file is not None:
        m = ops.check_mask(io.read_array(mask_file), prior.image_shape)
        if m.shape[0] not in (1, n):
            raise InputError(f"{mask_file}: {m.shape[0]} masks for {n} images; expected 1 or {n}")
        op = ops.MaskOperator(m.expand(n, *m.shape[1:]).contiguous(), "mask")
    else:
        op = ops.make_operator(task, n, prior.image_shape, seed=seed, box=box, box_top=box_top, box_left=box_left,
                               random_box=random_box, missing=missing)
    x = torch.from_numpy(truth)
    y = ops.measure(op, x, tau, seed=seed)
    return prior, classifier, truth, labels, op, y


def user_prior(path):
    """Import the user's file and call its build_prior()."""
    import importlib.util

    from paperkit.core.errors import InputError
    from paperkit.methods.ldsmc.models import LatentPrior

    spec = importlib.util.spec_from_file_location("paperkit_user_prior", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise InputError(f"{path}: importing it failed ({type(e).__name__}: {e})") from None
    if not callable(getattr(module, "build_prior", None)):
        raise InputError(f"{path}: defines no build_prior() function")
    prior = module.build_prior()
    if not isinstance(prior, LatentPrior):
        raise InputError(f"{path}: build_prior() returned {type(prior).__name__}, expected a LatentPrior")
    if len(prior.image_shape) != 3:
        raise InputError(f"{path}: the prior's image_shape {prior.image_shape} is not (C, H, W)")
    return prior


def restore_params(particles, steps, s, kappa1, kappa2, rho, gibbs, loglik, aux_var, refine_iters, lsq_iters, zeta,
                   gamma):
    from paperkit.methods.ldsmc.restore import RestoreParams

    return RestoreParams(particles=particles, steps=steps, kappa1=kappa1, kappa2=kappa2, rho=rho, s=s, gibbs=gibbs,
                         loglik=loglik, aux_var=aux_var, lsq_iters=lsq_iters, refine_iters=refine_iters, zeta=zeta,
                         gamma=gamma)


def print_table(rows: list[dict]) -> None:
    from paperkit_cli import state

    if state.settings.get("quiet"):
        return
    cols = [("method", "{:<10}"), ("psnr", "{:>6.2f}"), ("ssim", "{:>6.3f}"), ("masked_mse", "{:>8.4f}"),
            ("accuracy", "{:>6.3f}"), ("fd", "{:>8.2f}"), ("residual", "{:>8.4f}"), ("seconds", "{:>8.2f}")]
    head = {"method": "method", "psnr": "PSNR", "ssim": "SSIM", "masked_mse": "maskMSE", "accuracy": "acc",
            "fd": "FD", "residual": "resid", "seconds": "time_s"}
    lines = []
    widths = {"method": 10, "psnr": 6, "ssim": 6, "masked_mse": 8, "accuracy": 6, "fd": 8, "residual": 8,
              "seconds": 8}
    lines.append(" ".join(head[c].rjust(widths[c]) if c != "method" else head[c].ljust(10) for c, _ in cols))
    for r in rows:
        lines.append(" ".join(f.format(r[c]) if c in r else "-".rjust(widths[c]) for c, f in cols))
    click.echo("\n".join(lines), err=True)
