"""``paperkit conformal-combine``: combine fold p-values you already have with the paper's combiners."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._conformal_common import COMBINERS

SETTINGS = "paperkit.methods.conformal.run:CombineSettings"


@options.command("conformal-combine", short_help="Combine K exchangeable fold p-values (mean, e, u, eu, min).")
@click.option("--pvalues", "pvalues_path", required=True, metavar="FILE",
              help="Fold p-values, one row per candidate/test point and one column per fold in the folds' "
                   "random order: .npy/.npz (2-D) or a CSV/TSV/JSONL table of numeric columns; '-' reads stdin "
                   "(an .npy/.npz stream or a table).")
@click.option("--alpha", type=options.FiniteFloat(0.0, 0.5, min_open=True), default=0.1, show_default=True,
              help="Level in (0, 0.5]: a candidate is kept when the combined value exceeds alpha.")
@click.option("--combiner", "combiners", type=options.ListOf(choices=COMBINERS, unique=True), default="mean,e,u,eu",
              show_default=True, help="Combiners (a list of mean, e, u, eu, min).")
@options.seed_option
@options.output_options
def cli(pvalues_path, output, fmt, manifest_path, **_):
    """Combine K exchangeable fold p-values (mean, e, u, eu, min).

    For each row F(p_1..p_K) with F = mean (mod-cross), e = min over j of the mean of the first j
    p-values, u = mean / (2 - U), eu = min(p_1 / (2 - U), e) (one U ~ Unif(0, 1) per row, from --seed),
    or min (Bonferroni; compare with alpha / K yourself). For mean, e, u and eu, 2F is a valid p-value,
    so keeping rows with F > alpha has coverage at least 1 - 2 alpha.

    Reads --pvalues. Writes one row per input row and combiner to --output: row (0-based index of the
    input row, as everywhere in paperkit), combiner, value,
    pvalue (min(1, 2 value); K value for min), keep (value > alpha; value > alpha / K for min), and a
    manifest beside a file output.

    \b
    Examples:
      $ paperkit conformal-combine --pvalues fold_pvalues.npy --alpha 0.1 -o combined.csv
      $ paperkit conformal-combine --pvalues fold_pvalues.npy --combiner e,eu --format csv
    """
    from paperkit.core import tables
    from paperkit.methods.conformal.run import CombineSettings, execute_combine, prepare_combine
    from paperkit_cli import runtime

    inputs = prepare_combine(runtime.settings(CombineSettings), pvalues_path)
    tables.write_table(output, execute_combine(inputs), fmt)
    runtime.write_manifest(inputs=[pvalues_path], output=output, manifest_path=manifest_path,
                           seed=inputs.settings.seed)
