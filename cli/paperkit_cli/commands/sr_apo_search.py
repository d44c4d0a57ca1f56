"""``paperkit sr-apo-search``: the absolute Pareto-optimal front of a dataset by exhaustive search."""

from __future__ import annotations

import click

from paperkit_cli import options, runtime

SETTINGS = "paperkit.methods.sr_apo.run:SearchSettings"


@options.command("sr-apo-search", short_help="Absolute Pareto-optimal SR front of a dataset by exhaustive search.")
@click.option("--data", "data_path", required=True, metavar="FILE",
              help="CSV/TSV/JSONL table (.gz ok, '-' = stdin) with feature columns and a target column.")
@click.option("--target", default="target", show_default=True, help="Name of the target column (PMLB: target).")
@click.option("--features", default="all", show_default=True,
              help="'all', or feature indices/names, comma-separated (indices count columns without the target).")
@click.option("--head", type=click.IntRange(1, 8), default=3, show_default=True,
              help="K-expression head length h (3: lengths 1-7; 4: lengths 1-9).")
@click.option("--engine", type=click.Choice(["numba", "scipy"]), default="numba", show_default=True,
              help="numba: jitted Levenberg-Marquardt (fast); scipy: the paper's scipy.optimize.minimize.")
@click.option("--optimizers", default="auto", show_default=True,
              help="scipy methods, comma-separated (BFGS,CG,L-BFGS-B,Nelder-Mead,Powell,SLSQP,TNC,trust-constr); "
                   "auto = LM for numba, BFGS for scipy.")
@click.option("--seeds", type=options.ListOf(click.IntRange(0, 2**32 - 1), unique=True), default="11284",
              show_default=True, metavar="S1,S2,...",
              help="Seeds of the start values, one run each (a list; the paper's: "
                   "11284,11964,15795,21575,22118,23654,29802,5390,6265,860).")
@click.option("--restarts", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="numba engine: extra starts per expression, uniform in (-3, 3), on top of the seeded start.")
@click.option("--max-iter", type=click.IntRange(1), default=200, show_default=True,
              help="numba engine: most Levenberg-Marquardt iterations per start.")
@click.option("--shard", type=options.Shard(), default="1/1", show_default=True, metavar="K/N",
              help="Fit only every N-th expression from the K-th; merge shards with sr-apo-front.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler (tcp://host:8786) to fit chunks on; needs the 'distributed' extra. "
                   "An address nothing listens on fails before the run dir is made.")
@click.option("--name", default=None,
              help="Dataset name in summary file names (letters, digits, '._-+=@') [default: the data file's stem].")
@click.option("--all-expressions", is_flag=True, default=False, help="Also write every fitted expression per run (.csv.gz).")
@click.option("--latex", is_flag=True, default=False, help="Add a LaTeX column to front.csv.")
@click.option("--tolerance", type=options.FiniteFloat(0.0, 1.0, max_open=True), default=1e-12, show_default=True,
              help="A longer expression enters the front only if its R² beats every shorter one by more than "
                   "tolerance * max(1, |R²|) (0: the paper's bare strict rule); recorded in the summary.")
@click.option("--dry-run", is_flag=True, default=False,
              help="Count the expressions and fits, estimate time and memory from a fitted sample; print one JSON "
                   "line and write nothing.")
@click.option("--max-expressions", type=click.IntRange(1), default=20_000_000, show_default=True,
              help="Refuse searches with more leaf assignments than this (raise it to run anyway).")
@click.option("--chunk-size", type=click.IntRange(1), default=None,
              help="Expressions per checkpointed chunk [default: 20000 numba, 2000 scipy].")
@options.jobs_option
@options.run_dir_options
def cli(data_path, run_dir, resume, force, dry_run, **_) -> None:
    """Fit every expression of the paper's grammar to a dataset; write per-run summaries and the front.

    Reads a table with a target column. Expressions are the K-expressions of head length --head over
    Add, Sub, Mul, Div, Pow=|a|^b with feature or constant leaves (folded and deduplicated). The fit is
    on standardised data: every feature z = (x - mean) / std and the target (y - mean) / std, with the
    population std (ddof = 0); constants are fitted from numpy.random.seed(seed) starts. front.csv
    therefore has, beside the standardised-scale columns (infix, simplified, 6 digits), a formula
    column: y = mean_y + std_y * f((x - mean) / std) in the data's units and column names, constants at
    full precision (sr-apo-front --export latex|python for other syntaxes); parameters is a JSON list.

    Writes to --run-dir: <name>_<method>_<h>_<seed>_summary.csv per run (the official layout, constants
    at full precision), standardisation.json (the means and stds), front.csv (length, R2, MSE,
    expression, infix, simplified, formula, parameters, ...), front.png, config.yaml, manifest.json and
    checkpoints/ (--resume continues at the last finished chunk). Prints the number of expressions
    and fits on stderr first (a progress bar with ETA on a terminal; -v logs each chunk with an ETA),
    then one JSON line on stdout: the front, the front rule and tolerance, and "failed" with its
    reasons: an expression fails when it is NaN or infinite on the data (division by zero, |a|^b
    overflow) at the start constants of every start, so it is never fitted; a fit stopped by --max-iter
    is not a failure. --dry-run prints the count and an estimate of time and memory instead.

    \b
    Examples:
      $ paperkit sr-apo-search --data data.csv --target y --run-dir runs/apo
      $ paperkit sr-apo-search --data data.csv --target y --engine scipy --optimizers BFGS,Powell --run-dir runs/sp
      $ paperkit sr-apo-search --data data.csv --target y --shard 2/4 --run-dir runs/shard2
      $ paperkit sr-apo-search --data data.csv --target y --head 4 --dry-run --run-dir runs/big
    """
    import json

    from paperkit.core.progress import progress
    from paperkit.methods.sr_apo.run import SearchSettings, execute_search, plan, prepare_search
    from paperkit.methods.sr_apo.run import dry_run as dry_run_estimate

    inputs = prepare_search(runtime.settings(SearchSettings), data_path)
    s = inputs.settings
    p = plan(inputs)
    options.report(f"sr-apo-search: {p['expressions']:,} expressions (head {p['head']}, {len(p['features'])} "
                   f"features)" + (f", {p['expressions_in_shard']:,} in shard {p['shard']}" if s.shard[1] > 1 else "")
                   + f" x {p['runs']} run(s) = {p['fits']:,} fits")
    if dry_run:
        options.echo_data(json.dumps(dry_run_estimate(inputs)))
        return
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("scheduler", "dry_run"))
    summary = execute_search(inputs, run, progress=progress)
    runtime.write_manifest(inputs=[data_path], run_dir=run.path,
                           extra={"engine": s.engine, "shard": list(s.shard), "front_rule": summary["front_rule"],
                                  "failed": summary["failed"], "failed_reasons": summary["failed_reasons"]})
    options.echo_data(json.dumps(summary))
