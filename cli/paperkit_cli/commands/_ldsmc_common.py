"""Options and helpers shared by ``ldsmc-restore`` and ``ldsmc-bench`` (click only at import time)."""

from __future__ import annotations

import click

from paperkit_cli import options

METHODS = ("ldsmc", "ltds", "ldps", "psld", "pfld", "latentdaps", "resample", "bootstrap", "lsq")

problem_options = options._compose(
    click.option("--model", "model", required=True, metavar="DIR|FILE.py",
                 help="Folder written by 'paperkit ldsmc-train' (vae.pt, ldm.pt, classifier.npz), or your own "
                      "Python file whose build_prior() returns a paperkit.methods.ldsmc.LatentPrior. A .py file is "
                      "imported, i.e. its code runs: it is accepted only on the command line, never from --config "
                      "or the environment."),
    click.option("--task", type=click.Choice(["box", "random", "sr2", "blur"]), default="box", show_default=True,
                 help="box: box inpainting; random: random missing pixels; sr2: 2× average-pool "
                      "super-resolution; blur: 5×5 Gaussian blur (σ = 1)."),
    click.option("--tau", "--sigma", "tau", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=0.05,
                 show_default=True, help="Measurement noise std τ on the [-1, 1] pixel scale, in (0, 10]."),
    click.option("--images", "image_files", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Your images (.npy (n, C, H, W) in [-1, 1], or .png); repeatable. Default: the test split."),
    click.option("--mask", "mask_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Inpainting mask .npy (1 observed, 0 missing), (H, W) or (n, C, H, W); overrides --task."),
    click.option("--n-images", type=click.IntRange(min=1), default=16, show_default=True,
                 help="How many test images (ignored with --images)."),
    click.option("--box", type=click.IntRange(min=1, max=4096), default=8, show_default=True,
                 help="Box side (box task); smaller than the model's images."),
    click.option("--box-top", type=click.IntRange(min=0, max=4096), default=None, help="Box row [default: centred]."),
    click.option("--box-left", type=click.IntRange(min=0, max=4096), default=None,
                 help="Box column [default: centred]."),
    click.option("--random-box", is_flag=True, default=False, help="Place each image's box at random (from --seed)."),
    click.option("--missing", type=options.FiniteFloat(0, 1, min_open=True, max_open=True), default=0.7,
                 show_default=True, help="Fraction of hidden pixels (random task)."),
)

sampler_options = options._compose(
    click.option("--particles", type=click.IntRange(min=1), default=8, show_default=True,
                 help="SMC particles per image."),
    click.option("--steps", type=click.IntRange(min=1), default=25, show_default=True,
                 help="DDIM (η = 1) steps, the same for every method; at most the model's diffusion steps − 1."),
    click.option("--s", "s", type=click.IntRange(min=0), default=66, show_default=True,
                 help="Diffusion step below which the proposal adds the y_t term (phase 2)."),
    click.option("--kappa1", type=options.FiniteFloat(0, 1e3), default=1.0, show_default=True,
                 help="Phase-1 step (normalised ĝ1)."),
    click.option("--kappa2", type=options.FiniteFloat(0, 1e3), default=0.5, show_default=True,
                 help="Phase-2 step (normalised (1−ρ)ĝ1 + ρĝ2)."),
    click.option("--rho", type=options.FiniteFloat(0, 1), default=0.25, show_default=True,
                 help="Phase-2 mix ρ. (The defaults of κ1, κ2, ρ, ζ, γ, --cauchy-scale and --langevin-lr were tuned at 25 "
                      "steps on held-apart validation digits with the example's prior; the paper's code uses κ1 = 1, "
                      "κ2 = 2.5, ρ = 0.75 at 1000 steps.)"),
    click.option("--gibbs", type=click.IntRange(min=1, max=1000), default=1, show_default=True,
                 help="SMC sweeps of the Gibbs sampler over the auxiliary observations."),
    click.option("--loglik", type=click.Choice(["mean", "sum"]), default="mean", show_default=True,
                 help="LD-SMC's log-densities: mean of squared residuals (the official code; tempered) or sum "
                      "(exact). ltds and bootstrap always use sum."),
    click.option("--aux-var", type=click.Choice(["schedule", "tau"]), default="schedule", show_default=True,
                 help="Variance of y_t: 1 − ᾱ_t (the code) or τ²."),
    click.option("--refine-iters", type=click.IntRange(min=0, max=100000), default=0, show_default=True,
                 help="Latent refinement argmin_z‖y − A(D(z))‖² after SMC (0: off; early-stopped at τ²)."),
    click.option("--lsq-iters", type=click.IntRange(min=1, max=100000), default=300, show_default=True,
                 help="Adam steps of the pixel least-squares fit (first Gibbs pass; the lsq method)."),
    click.option("--zeta", type=options.FiniteFloat(0, 1e3), default=0.5, show_default=True,
                 help="LDPS/PSLD/PFLD step on ∇‖y − A(D(ẑ_0))‖."),
    click.option("--gamma", type=options.FiniteFloat(0, 1e3), default=0.03, show_default=True,
                 help="PSLD/PFLD gluing weight."),
    click.option("--cauchy-scale", type=options.FiniteFloat(0, 1e3, min_open=True), default=0.3, show_default=True,
                 help="PFLD: scale c of its Cauchy likelihood 1/(1 + ‖y − A(D(ẑ_0))‖²/(m c²))."),
    click.option("--pfld-stage", type=options.FiniteFloat(0, 1, min_open=True), default=0.5, show_default=True,
                 help="PFLD: fraction of the steps run with --particles particles (then the best one goes on)."),
    click.option("--ode-steps", type=click.IntRange(min=1, max=1000), default=5, show_default=True,
                 help="LatentDAPS: probability-flow ODE steps from z_t to ẑ_0 at each noise level."),
    click.option("--langevin-steps", type=click.IntRange(min=0, max=100000), default=20, show_default=True,
                 help="LatentDAPS: Langevin steps on p(z_0 | z_t, y) at each noise level."),
    click.option("--langevin-lr", type=options.FiniteFloat(0, 2, min_open=True), default=0.5, show_default=True,
                 help="LatentDAPS: Langevin step as a fraction of the level's posterior variance 1/(1/r_t² + 1/τ²), "
                      "decaying linearly to 1% of it over the levels."),
    options.seed_option,
    options.jobs_option,
    click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
                 help="Where torch computes. The samplers run on the CPU: auto means cpu here, cuda is refused."),
    click.option("--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None,
                 help="Refuse runs (images × particles) needing more memory than this [default: 3/4 of RAM]."),
)


def check_model_source(model: str) -> None:
    """A ``--model FILE.py`` runs the file's code: take it only from the command line (not --config/env)."""
    from click.core import ParameterSource

    from paperkit.core.errors import UsageError

    ctx = click.get_current_context()
    if str(model).endswith(".py") and ctx.get_parameter_source("model") is not ParameterSource.COMMANDLINE:
        env = f"PAPERKIT_{(ctx.command.name or '').replace('-', '_').upper()}_MODEL"
        raise UsageError(f"--model {model}: a Python file runs code when loaded, so it is accepted only on the "
                         f"command line, not from --config or {env}")


def report(rows: list[dict], title: str | None = None) -> None:
    options.report_table(rows, [("method", "method", ""), ("psnr", "PSNR", ".2f"), ("ssim", "SSIM", ".3f"),
                                ("masked_mse", "maskMSE", ".4f"), ("accuracy", "acc", ".3f"), ("fd", "FD", ".2f"),
                                ("residual", "resid", ".4f"), ("seconds", "time_s", ".2f")], title=title)
