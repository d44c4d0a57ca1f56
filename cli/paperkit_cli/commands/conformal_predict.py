"""``paperkit conformal-predict``: apply a model saved by ``conformal-cv --save-model`` to new rows."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._conformal_common import METHODS, check_alpha_or_coverage, coverage_option

SETTINGS = "paperkit.methods.conformal.run:PredictSettings"


@options.command("conformal-predict", writes=("summary_path",),
                 short_help="Prediction sets for new rows from a saved conformal-cv model.")
@click.option("--model", "model_path", required=True, metavar="PATH",
              help="Model file written by conformal-cv --save-model (a joblib pickle: load only files you made).")
@click.option("--test", "test_path", required=True, metavar="FILE",
              help="Rows to predict (CSV/TSV/JSONL; '-' = stdin) with the fit's feature columns; with the target "
                   "column, coverage is reported.")
@click.option("--methods", type=options.ListOf(choices=METHODS + ("all",), unique=True), default=None,
              help="Methods [default: the ones the model was fitted with]; jackknife+ and split need to have been "
                   "fitted.")
@click.option("--alpha", type=options.FiniteFloat(0.0, 0.5, min_open=True), default=None,
              help="Miscoverage level in (0, 0.5] (the paper's convention) [default: the model's].")
@coverage_option
@click.option("--summary", "summary_path", default=None, metavar="FILE.json", help="Also write the summary as JSON.")
@options.output_options
def cli(model_path, test_path, summary_path, output, fmt, manifest_path, **_):
    """Prediction sets for new rows from a model saved by conformal-cv --save-model.

    Uses the saved fold models and calibration scores (no refit; jackknife+ refits on the saved
    training rows), the same feature encoding (--categorical one-hot columns) and the same U draws
    for the randomised methods, so predicting conformal-cv's own --test file gives its rows again.
    The level is the model's (--alpha or --coverage at fit time) unless given here.

    Reads --model and --test. Writes the rows of conformal-cv to --output (row is the 0-based index of
    the test row; y_pred, lower, upper, length, n_segments, segments[, y, covered]; classification:
    y_pred, set, size), a manifest beside it, and the per-method table on stderr. With --output FILE,
    stdout gets the summary as one JSON line.

    \b
    Examples:
      $ paperkit conformal-cv --train train.csv --test test.csv --target y --save-model model.joblib -o sets.csv
      $ paperkit conformal-predict --model model.joblib --test new.csv -o new_sets.csv
      $ paperkit conformal-predict --model model.joblib --test new.csv --coverage 0.95 --methods e-mod,cvplus
    """
    from paperkit.core import io, tables
    from paperkit.core.progress import progress
    from paperkit.methods.conformal.run import (
        PredictSettings,
        execute_predict,
        prepare_predict,
        summary_columns,
        summary_rows,
    )
    from paperkit_cli import runtime

    check_alpha_or_coverage()
    inputs = prepare_predict(runtime.settings(PredictSettings), model_path, test_path)
    result = execute_predict(inputs, progress=progress)
    tables.write_table(output, result.rows, fmt)
    outputs = [output]
    if summary_path is not None:
        io.write_json(summary_path, result.summary)
        outputs.append(summary_path)
    runtime.write_manifest(inputs=[model_path, test_path], outputs=outputs, output=output,
                           manifest_path=manifest_path, extra={"summary": result.summary})
    options.report_table(summary_rows(result.summary), summary_columns(result.summary))
    if not io.is_stdio(output):
        options.echo_data(io.dumps_json(result.summary, indent=None))
