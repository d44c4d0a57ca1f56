"""Options shared by the var-approx commands (data, architecture held fixed, optimisation)."""

from __future__ import annotations

import click

from paperkit_cli import options

POSITIVE = click.IntRange(min=1)

init_option = click.option("--init", default="2x2", show_default=True, metavar="HxW",
                           help="Size of the initial token map X_init (the paper's 'word' map).")

shared_options = options._compose(
    init_option,
    click.option("--dim", type=click.IntRange(1, 64), default=4, show_default=True,
                 help="Channels d of every initial token (inputs are uniform on [0,1]^{H×W×d})."),
    click.option("--mask", type=click.Choice(["none", "block"]), default="none", show_default=True,
                 help="Attention mask: none, or VAR's block-causal mask (a token sees the scales <= its own)."),
    click.option("--ablate", default="none", show_default=True,
                 help="Model variant: none (1-layer 1-head VAR), no-attn (token FFN only), no-pyramid (flat "
                      "transformer on the last scale), two-layer (2-layer VAR), mlp (parameter-matched MLP), "
                      "linear (least-squares floor)."),
    click.option("--steps", type=POSITIVE, default=1500, show_default=True, help="Adam steps."),
    click.option("--batch-size", type=POSITIVE, default=64, show_default=True, help="Minibatch size."),
    click.option("--lr", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=1.5e-2, show_default=True,
                 help="Adam's (peak) learning rate."),
    click.option("--lr-schedule", type=click.Choice(["warmup-cosine", "constant"]), default="warmup-cosine",
                 show_default=True,
                 help="warmup-cosine: linear warm-up to --lr over the first --warmup-frac of the steps, then a cosine "
                      "decay to 0; constant: --lr throughout (the spec's schedule, with --lr 3e-3 --beta2 0.999 "
                      "--no-standardize-targets)."),
    click.option("--warmup-frac", type=options.FiniteFloat(0.0, 1.0, max_open=True), default=0.05,
                 show_default=True, help="--lr-schedule warmup-cosine: fraction of the steps spent warming up."),
    click.option("--beta2", type=options.FiniteFloat(0.0, 1.0, max_open=True), default=0.95, show_default=True,
                 help="Adam's beta2 (second-moment decay)."),
    click.option("--standardize-targets/--no-standardize-targets", default=True, show_default=True,
                 help="Learn the targets standardised per channel (training mean and std); predictions and "
                      "every reported error are in the targets' own units."),
    click.option("--n-train", type=POSITIVE, default=2000, show_default=True, help="Training inputs."),
    click.option("--n-test", type=POSITIVE, default=1000, show_default=True, help="Test inputs."),
    click.option("--pca-dim", type=int, default=4, show_default=True,
                 help="--target digits: PCA code dimension (2..8), held in the first entries of X_init."),
    click.option("--bandwidth", type=options.FiniteFloat(0.0, min_open=True), default=0.15, show_default=True,
                 help="--target digits: Nadaraya-Watson bandwidth h (Lipschitz constant about 1/h)."),
    options.device_option,
    options.jobs_option,
)
