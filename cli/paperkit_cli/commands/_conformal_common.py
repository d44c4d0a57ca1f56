"""Names shared by the conformal commands (plain literals: --help must not import the library;
``tests/cli/test_conformal.py`` checks them against ``paperkit.methods.conformal``)."""

from __future__ import annotations

import click

from paperkit_cli import options

METHODS = ("mod", "e-mod", "u-mod", "eu-mod", "cross", "e-cross", "u-cross", "eu-cross", "bonferroni",
           "bonferroni-2a", "cvplus", "jackknife+", "split", "split-2a", "full")
SIM_METHODS = ("mod", "e-mod", "u-mod", "eu-mod", "cross", "e-cross", "u-cross", "eu-cross", "cvplus",
               "jackknife+", "split", "split-2a", "full")
COMBINERS = ("mean", "e", "u", "eu", "min")

n_folds_option = click.option("--n-folds", type=click.IntRange(min=2), default=5, show_default=True,
                              help="K, the number of folds.")
alpha_option = click.option("--alpha", type=options.FiniteFloat(0.0, 0.5, min_open=True), default=0.1,
                            show_default=True,
                            help="Miscoverage level in (0, 0.5]; the mod-cross family guarantees 1 - 2 alpha.")
coverage_option = click.option(
    "--coverage", type=options.FiniteFloat(0.5, 1.0, max_open=True), default=None, metavar="FLOAT",
    help="Target coverage in [0.5, 1), instead of --alpha: each method gets the alpha at which its own guarantee "
         "equals it (mod family alpha = (1 - coverage) / 2, split alpha = 1 - coverage, Vovk and CV+ with their "
         "finite-sample terms).")


def check_alpha_or_coverage() -> None:
    """--alpha given on the command line together with --coverage is a usage error (they set the same level)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    if ctx.params.get("coverage") is not None and ctx.get_parameter_source("alpha") not in (
            ParameterSource.DEFAULT, None):
        raise click.UsageError("--alpha and --coverage set the same level; give one")
