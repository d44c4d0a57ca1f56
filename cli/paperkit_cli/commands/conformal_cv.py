"""``paperkit conformal-cv``: cross-conformal prediction sets for a test table (Gasparin & Ramdas, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._conformal_common import (
    METHODS,
    alpha_option,
    check_alpha_or_coverage,
    coverage_option,
    n_folds_option,
)

SETTINGS = "paperkit.methods.conformal.run:CvSettings"


@options.command("conformal-cv", writes=("pvalues_path", "summary_path", "save_model_path"),
                 short_help="Cross-conformal prediction sets with the paper's efficient combiners.")
@click.option("--train", required=True, metavar="FILE", help="Training table (CSV/TSV/JSONL; '-' = stdin).")
@click.option("--test", "test_path", required=True, metavar="FILE",
              help="Rows to predict; same feature columns; the target column is optional (then coverage is reported).")
@click.option("--target", required=True, metavar="COL", help="Target column.")
@click.option("--features", type=options.ListOf(), default=None, metavar="A,B,...",
              help="Feature columns [default: all but the target].")
@click.option("--task", type=click.Choice(["regression", "classification"]), default="regression", show_default=True,
              help="regression: sets of numbers (unions of intervals); classification: sets of labels.")
@click.option("--model", default=None, metavar="NAME",
              help="regression: ols, minnorm-ols, ridge, lasso, rf, knn, gbr; classification: logistic, rf, knn, gbc; "
                   "or module:Class of a scikit-learn estimator class [default: ridge for regression, logistic "
                   "(a standardised logistic regression) for classification].")
@click.option("--model-param", "model_params", multiple=True, default=(), metavar="KEY=VALUE",
              help="Model hyper-parameter (repeatable), e.g. --model-param alpha=10.")
@n_folds_option
@alpha_option
@coverage_option
@click.option("--methods", type=options.ListOf(choices=METHODS + ("all",), unique=True), default=None,
              help="Methods, or all [default: mod, e-mod, u-mod, eu-mod, cross, e-cross, u-cross, eu-cross, cvplus, "
                   "split; classification: the combiner methods without Bonferroni].")
@click.option("--score", type=click.Choice(["absolute", "normalized", "lac", "aps"]), default=None,
              help="Score [default: absolute for regression, lac for classification]; normalized = |y - mu| / sigma.")
@click.option("--sigma-model", default="rf", show_default=True, metavar="NAME",
              help="Model of |residual| for --score normalized (a regression model name).")
@click.option("--categorical", default=None, metavar="auto|A,B,...",
              help="One-hot these feature columns (auto: every non-numeric one), as scikit-learn's OneHotEncoder: "
                   "column c with values u, v becomes c=u and c=v; categories from --train, an unseen test value "
                   "gets zeros (counted in the summary) [default: none; text features are refused].")
@click.option("--save-model", "save_model_path", default=None, metavar="FILE.joblib",
              help="Also save the fit (fold models, scores, full-data model, feature encoding) for "
                   "conformal-predict. A joblib pickle: load only files you made.")
@click.option("--pvalues", "pvalues_path", default=None, metavar="FILE.npy",
              help="Also write the fold p-values at the test targets, shape (rows, K), folds in their random order.")
@click.option("--summary", "summary_path", default=None, metavar="FILE.json", help="Also write the summary as JSON.")
@options.jobs_option
@options.seed_option
@options.output_options
def cli(train, test_path, pvalues_path, summary_path, save_model_path, output, fmt, manifest_path, **_):
    """Cross-conformal prediction sets with the paper's efficient combiners.

    Fits the model on K-1 folds K times (random folds from --seed), turns each fold's residuals into
    fold p-values and combines them: mod-cross (mean), e-mod (exchangeable running means), u-mod and
    eu-mod (randomised, one U per test row), Vovk's cross-conformal and its improved e/u/eu variants,
    Bonferroni; baselines CV+, jackknife+, split conformal and full conformal (`full`: ridge or OLS refitted for
    every candidate y, computed exactly from the residual paths). Sets are exact unions of intervals.

    Levels: --alpha is the paper's convention (mod-cross and the Vovk family guarantee 1 - 2 alpha,
    split 1 - alpha); --coverage 0.9 instead gives each method the alpha at which its own guarantee is
    0.9 (as MAPIE and scikit-learn users expect). The guarantee is printed beside each method.

    Reads the --train and --test tables. Writes one row per test row and method to --output: row
    (the 0-based index of the test row: 0 is the first data row), method, y_pred (the point
    prediction: the model fitted on all training rows; CV+: the mean of the fold models; split: the
    split model), lower, upper, length, n_segments, segments (JSON pairs when the set is not one
    interval, else null), and y, covered when the test table has the target. Classification rows:
    row, method, y_pred, set, size[, y, covered]. Also a manifest beside the output, and a per-method
    table (alpha, guarantee next to empirical coverage, set lengths) on stderr. With --output FILE,
    stdout gets the summary as one JSON line. --save-model keeps the fit for conformal-predict.

    \b
    Examples:
      $ paperkit conformal-cv --train train.csv --test test.csv --target y -o intervals.csv
      $ paperkit conformal-cv --train train.csv --test test.csv --target y --model rf --n-folds 10 \\
          --methods mod,e-mod,eu-mod,cvplus --summary summary.json -o intervals.csv
      $ paperkit conformal-cv --train train.csv --test test.csv --target y --coverage 0.9 \\
          --categorical auto --save-model model.joblib -o intervals.csv
    """
    from paperkit.core import io, tables
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.methods.conformal.run import (
        CvSettings,
        execute_cv,
        prepare_cv,
        save_model,
        summary_columns,
        summary_rows,
    )
    from paperkit_cli import runtime

    check_alpha_or_coverage()
    inputs = prepare_cv(runtime.settings(CvSettings), train, test_path)
    result = execute_cv(inputs, progress=progress)
    if pvalues_path is not None and result.pvalues is None:
        raise UsageError("--pvalues needs the target column in the test table (regression)")
    tables.write_table(output, result.rows, fmt)
    outputs = [output]
    if pvalues_path is not None:
        io.write_array(pvalues_path, result.pvalues)
        outputs.append(pvalues_path)
    if summary_path is not None:
        io.write_json(summary_path, result.summary)
        outputs.append(summary_path)
    if save_model_path is not None:
        save_model(save_model_path, result.fitted)
        outputs.append(save_model_path)
    runtime.write_manifest(inputs=[train, test_path], outputs=outputs, output=output, manifest_path=manifest_path,
                           seed=inputs.settings.seed, extra={"summary": result.summary})
    options.report_table(summary_rows(result.summary), summary_columns(result.summary))
    if not io.is_stdio(output):
        options.echo_data(io.dumps_json(result.summary, indent=None))
