"""``paperkit conformal-cv``: cross-conformal prediction sets for a test table (Gasparin & Ramdas, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

METHOD_HELP = ("mod, e-mod, u-mod, eu-mod, cross, e-cross, u-cross, eu-cross, bonferroni, bonferroni-2a, cvplus, "
               "jackknife+, split, split-2a, or all")


@options.command("conformal-cv", short_help="Cross-conformal prediction sets with the paper's efficient combiners.")
@click.option("--train", required=True, metavar="FILE", help="Training table (CSV/TSV/JSONL; '-' = stdin).")
@click.option("--test", "test_path", required=True, metavar="FILE",
              help="Rows to predict; same feature columns; the target column is optional (then coverage is reported).")
@click.option("--target", required=True, metavar="COL", help="Target column.")
@click.option("--features", default=None, metavar="A,B,...", help="Feature columns [default: all but the target].")
@click.option("--task", type=click.Choice(["regression", "classification"]), default="regression", show_default=True)
@click.option("--model", default="ridge", show_default=True, metavar="NAME",
              help="ols, minnorm-ols, ridge, lasso, rf, knn, gbr (classification: logistic, rf, knn, gbc) "
                   "or module:Class of any scikit-learn estimator.")
@click.option("--model-param", "model_params", multiple=True, metavar="KEY=VALUE",
              help="Model hyper-parameter (repeatable), e.g. --model-param alpha=10.")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True, help="K, the number of folds.")
@click.option("--alpha", type=float, default=0.1, show_default=True,
              help="Miscoverage level in (0, 0.5]; the mod-cross family guarantees 1 - 2 alpha.")
@click.option("--methods", default=None,
              help=f"Comma-separated: {METHOD_HELP} [default: mod, e-mod, u-mod, eu-mod, cross, e-cross, u-cross, "
                   "eu-cross, cvplus, split; classification: the combiner methods without Bonferroni].")
@click.option("--score", type=click.Choice(["absolute", "normalized", "lac", "aps"]), default=None,
              help="Score [default: absolute for regression, lac for classification]; normalized = |y - mu| / sigma.")
@click.option("--sigma-model", default="rf", show_default=True, metavar="NAME",
              help="Model of |residual| for --score normalized (a regression model name).")
@click.option("--pvalues", "pvalues_path", default=None, metavar="FILE.npy",
              help="Also write the fold p-values at the test targets, shape (rows, K), folds in their random order.")
@click.option("--summary", "summary_path", default=None, metavar="FILE.json", help="Also write the summary as JSON.")
@options.jobs_option
@options.seed_option
@options.output_options
def cli(train, test_path, target, features, task, model, model_params, folds, alpha, methods, score, sigma_model,
        pvalues_path, summary_path, jobs, seed, output, fmt, manifest_path):
    """Cross-conformal prediction sets with the paper's efficient combiners.

    Fits the model on K-1 folds K times (random folds from --seed), turns each fold's residuals into
    fold p-values and combines them: mod-cross (mean), e-mod (exchangeable running means), u-mod and
    eu-mod (randomised, one U per test row), Vovk's cross-conformal and its improved e/u/eu variants,
    Bonferroni; baselines CV+, jackknife+ and split conformal. Sets are exact unions of intervals.

    Reads the --train and --test tables. Writes one row per test row and method to --output
    (row, method, lower, upper, length, n_segments, segments as JSON when the set is not one interval,
    and y, covered when the test table has the target), a manifest beside it, and a per-method table
    (guaranteed bound next to empirical coverage, set lengths) on stderr. With --output FILE, stdout gets
    the summary as one JSON line.

    \b
    Examples:
      $ paperkit conformal-cv --train train.csv --test test.csv --target y -o intervals.csv
      $ paperkit conformal-cv --train train.csv --test test.csv --target y --model rf --folds 10 \\
          --methods mod,e-mod,eu-mod,cvplus --summary summary.json -o intervals.csv
    """
    from paperkit.core import io, tables
    from paperkit.core.progress import progress
    from paperkit.methods.conformal.models import parse_params
    from paperkit.methods.conformal.pipeline import format_summary, predict_table
    from paperkit_cli import runtime, state

    if train == "-" and test_path == "-":
        raise click.UsageError("--train and --test cannot both be stdin")
    n_jobs = None if jobs == 1 else (-1 if jobs == 0 else jobs)
    result = predict_table(tables.read_table(train), tables.read_table(test_path), target=target,
                           features=[f.strip() for f in features.split(",") if f.strip()] if features else None,
                           task=task, model=model, model_params=parse_params(model_params), n_folds=folds,
                           alpha=alpha, methods=methods, score=score, sigma_model=sigma_model, seed=seed,
                           jobs=n_jobs, progress=progress)
    if pvalues_path is not None and result.pvalues is None:
        raise click.UsageError("--pvalues needs the target column in the test table (regression)")
    tables.write_table(output, result.rows, fmt)
    outputs = [output]
    if pvalues_path is not None:
        io.write_array(pvalues_path, result.pvalues)
        outputs.append(pvalues_path)
    if summary_path is not None:
        io.write_json(summary_path, result.summary)
        outputs.append(summary_path)
    runtime.write_manifest(inputs=[train, test_path], outputs=outputs, output=output, manifest_path=manifest_path,
                           seed=seed, extra={"summary": result.summary})
    if not state.settings["quiet"]:
        click.echo(format_summary(result.summary), err=True)
    if not io.is_stdio(output):
        options.echo_data(io.dumps_json(result.summary, indent=None))
