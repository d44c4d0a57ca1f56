"""``paperkit conformal-sim``: the Barber et al. (2021) linear-model study of the cross-conformal sets."""

from __future__ import annotations

import click

from paperkit_cli import options

DEFAULT_METHODS = "mod,e-mod,u-mod,eu-mod,cross,e-cross,u-cross,eu-cross,cvplus,jackknife+,split,split-2a"


@options.command("conformal-sim", short_help="Coverage and length of every cross-conformal method on a linear model.")
@click.option("--n", "n", type=click.IntRange(min=4), default=100, show_default=True, help="Training rows.")
@click.option("--p", "dims", default="5,50", show_default=True, metavar="P1,P2,...",
              help="Dimensions to simulate (comma-separated); p near n is the unstable regime.")
@click.option("--reps", type=click.IntRange(min=2), default=200, show_default=True, help="Repetitions per p.")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True, help="K, the number of folds.")
@click.option("--alpha", type=float, default=0.1, show_default=True, help="Miscoverage level in (0, 0.5].")
@click.option("--methods", default=DEFAULT_METHODS, show_default=True, help="Comma-separated methods (or all).")
@click.option("--test-points", type=click.IntRange(min=1), default=1, show_default=True,
              help="Fresh test points per repetition (the paper uses 1).")
@options.seed_option
@options.run_dir_options
def cli(n, dims, reps, folds, alpha, methods, test_points, seed, run_dir, resume, force):
    """Coverage and length of every cross-conformal method on a linear model.

    Each repetition draws beta uniformly on the sphere of radius sqrt(10), X ~ N(0, I), Y = X beta +
    N(0, 1), fits least squares by the pseudo-inverse and records, for fresh test points, whether each
    method's set covers and how long it is. Writes to --run-dir: results.csv (per p and method:
    guaranteed bound, coverage and its standard error, mean and median length), reps.csv (one row per
    repetition and method), coverage_length.png, checkpoints (one per p; --resume continues) and
    manifest.json. Prints one JSON summary line.

    \b
    Examples:
      $ paperkit conformal-sim --p 5 --reps 50 --run-dir sim-small
      $ paperkit conformal-sim --p 5,50 --reps 300 --seed 1 --run-dir sim
    """
    from paperkit.core import io, tables
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.methods.conformal.combiners import check_alpha, parse_methods
    from paperkit.methods.conformal.plots import plot_simulation
    from paperkit.methods.conformal.simulation import SIM_METHODS, simulate_dimension, summarize
    from paperkit_cli import runtime

    try:
        ps = [int(v) for v in dims.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--p = {dims!r} is not a comma-separated list of integers") from None
    if not ps or min(ps) < 1:
        raise UsageError(f"--p = {dims!r}: expected positive dimensions")
    check_alpha(alpha)
    chosen = parse_methods(methods, allowed=SIM_METHODS)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    rows = []
    for p in progress(ps, desc="dimensions", unit="p"):
        key = f"p{p}.json"
        if resume and run.has_checkpoint(key):
            # JSON has no infinity: an unbounded set's length comes back as null
            done = [{**r, "length": float("inf") if r["length"] is None else r["length"]}
                    for r in run.load_checkpoint(key)]
        else:
            done = simulate_dimension(n, p, reps, n_folds=folds, alpha=alpha, methods=chosen, seed=seed,
                                      n_test=test_points, progress=progress)
            run.save_checkpoint(key, done)
        rows.extend(done)
    table = summarize(rows, n=n, n_folds=folds, alpha=alpha)
    tables.write_table(run.path / "results.csv", table)
    tables.write_table(run.path / "reps.csv", rows)
    plot_simulation(table, run.path / "coverage_length.png", alpha=alpha)
    runtime.write_manifest(inputs=[], run_dir=run.path, seed=seed)
    best = {p: min((r for r in table if r["p"] == p), key=lambda r: r["median_length"])["method"] for p in ps}
    options.echo_data(io.dumps_json({"run_dir": str(run.path), "dimensions": ps, "reps": reps,
                                     "coverage": {f"p{r['p']}/{r['method']}": round(r["coverage"], 4) for r in table},
                                     "shortest_median": {f"p{p}": m for p, m in best.items()}}, indent=None))
