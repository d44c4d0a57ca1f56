"""``paperkit sr-apo-compare``: per-length R² gap of another SR method's models against an APO front."""

from __future__ import annotations

import click

from paperkit_cli import options, runtime


@options.command("sr-apo-compare", writes=("summary_path", "plot_path"),
                 short_help="Per-length R² gap of other SR models against an APO front.")
@click.option("--front", "front_path", required=True, metavar="FILE", help="front.csv from sr-apo-search/front.")
@click.option("--models", "models_path", required=True, metavar="FILE",
              help="Table of models (column names in any case): a length column (length/complexity/size) and an "
                   "R2 column, or an equation column (a PySR hall_of_fame.csv as it is: Complexity, Loss, "
                   "Equation) scored on --data; optionally a name (algorithm/method/model) and a dataset column.")
@click.option("--data", "data_path", default=None, metavar="FILE",
              help="Data table to score equation strings on (R² and node count computed here; x0, x1, ... are the "
                   "feature columns in order, 0-based, or use column names; a column named xK that is not feature K is "
                   "refused as ambiguous).")
@click.option("--target", default="target", show_default=True, help="Target column of --data.")
@click.option("--dataset", default=None, help="Which dataset of the front to use when it holds several.")
@click.option("--summary", "summary_path", default=None, metavar="FILE",
              help="Also write per-model mean/median gap and how many reach the front.")
@click.option("--plot", "plot_path", default=None, metavar="PNG", help="Draw the front and the models.")
@options.output_options
def cli(front_path, models_path, data_path, target, dataset, summary_path, plot_path, output, fmt,
        manifest_path) -> None:
    """Compare another symbolic-regression method's models with an APO front, length by length.

    Reads a front (length, R2[, dataset]) and a models table. For a model of length L the attainable R²
    is the front's R² at its longest length <= L; the gap is that minus the model's R² (negative: the
    model beats the front). Writes one row per model: model, length, R2, front_length, front_R2, gap.

    A PySR hall of fame (Complexity, Loss, Equation; any case) is read as it is: with --data, each
    equation is parsed by paperkit's own parser (+ - * / ^ **, sin, exp, log, sqrt, square, ... ;
    never eval or sympify) and scored on the data (R² on the data as given, PySR fits raw data); its
    length is our node count. Such rows add equation, complexity, loss and scored_by; an equation that
    is NaN/inf on the data gets an empty R2 and gap.

    \b
    Examples:
      $ paperkit sr-apo-compare --front runs/apo/front.csv --models found.csv -o gaps.csv
      $ paperkit sr-apo-compare --front front.csv --models found.csv --plot gaps.png --summary by_model.csv
      $ paperkit sr-apo-compare --front runs/apo/front.csv --models hall_of_fame.csv --data data.csv \\
          --target y -o gaps.csv
    """
    from paperkit.core import tables
    from paperkit.methods.sr_apo.compare import compare_tables

    front_table = tables.read_table(front_path)
    models_table = tables.read_table(models_path)
    data = None
    if data_path is not None:
        t = tables.read_table(data_path)
        t.column(target)
        names = [c for c in t.columns if c != target]
        data = (t.numeric(names), t.numeric([target])[:, 0], names)
    rows, by_model, front = compare_tables(front_table, models_table, dataset=dataset, data=data)
    tables.write_table(output, rows, fmt=fmt)
    outputs = []
    if summary_path:
        tables.write_table(summary_path, by_model)
        outputs.append(summary_path)
    if plot_path:
        from paperkit.methods.sr_apo.plots import plot_compare

        plot_compare(plot_path, front, rows)
        outputs.append(plot_path)
    runtime.write_manifest(inputs=[front_path, models_path, data_path], output=output, manifest_path=manifest_path,
                           outputs=outputs)
