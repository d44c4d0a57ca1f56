"""``paperkit sr-apo-compare``: per-length R² gap of another SR method's models against an APO front."""

from __future__ import annotations

import click

from paperkit_cli import options, runtime


@options.command("sr-apo-compare", short_help="Per-length R² gap of other SR models against an APO front.")
@click.option("--front", "front_path", required=True, metavar="FILE", help="front.csv from sr-apo-search/front.")
@click.option("--models", "models_path", required=True, metavar="FILE",
              help="Table of models: a length column (length/complexity/size), an R2 column, optionally "
                   "a name column (algorithm/method/model) and a dataset column.")
@click.option("--dataset", default=None, help="Which dataset of the front to use when it holds several.")
@click.option("--summary", "summary_path", default=None, metavar="FILE",
              help="Also write per-model mean/median gap and how many reach the front.")
@click.option("--plot", "plot_path", default=None, metavar="PNG", help="Draw the front and the models.")
@options.output_options
def cli(front_path, models_path, dataset, summary_path, plot_path, output, fmt, manifest_path) -> None:
    """Compare another symbolic-regression method's models with an APO front, length by length.

    Reads a front (length, R2[, dataset]) and a models table. For a model of length L the attainable R²
    is the front's R² at its longest length <= L; the gap is that minus the model's R² (negative: the
    model beats the front). Writes one row per model: model, length, R2, front_length, front_R2, gap.

    \b
    Examples:
      $ paperkit sr-apo-compare --front runs/apo/front.csv --models found.csv -o gaps.csv
      $ paperkit sr-apo-compare --front front.csv --models found.csv --plot gaps.png --summary by_model.csv
    """
    from paperkit.core import tables
    from paperkit.methods.sr_apo.compare import compare_tables

    front_table = tables.read_table(front_path)
    models_table = tables.read_table(models_path)
    rows, by_model, front = compare_tables(front_table, models_table, dataset=dataset)
    tables.write_table(output, rows, fmt=fmt)
    outputs = []
    if summary_path:
        tables.write_table(summary_path, by_model)
        outputs.append(summary_path)
    if plot_path:
        from paperkit.methods.sr_apo.plots import plot_compare

        plot_compare(plot_path, front, rows)
        outputs.append(plot_path)
    runtime.write_manifest(inputs=[front_path, models_path], output=output, manifest_path=manifest_path,
                           outputs=outputs)
