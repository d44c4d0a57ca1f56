"""``paperkit conformal-sim``: the Barber et al. (2021) linear-model study of the cross-conformal sets."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._conformal_common import SIM_METHODS, alpha_option, n_folds_option

SETTINGS = "paperkit.methods.conformal.run:SimSettings"


@options.command("conformal-sim", short_help="Coverage and length of every cross-conformal method on a linear model.")
@click.option("--n", "n", type=click.IntRange(min=4), default=100, show_default=True, help="Training rows.")
@click.option("--p", "dims", type=options.ListOf(click.IntRange(min=1), unique=True), default="5,50",
              show_default=True, metavar="P1,P2,...",
              help="Dimensions to simulate (a list); p near n is the unstable regime.")
@click.option("--reps", type=click.IntRange(min=2), default=200, show_default=True, help="Repetitions per p.")
@n_folds_option
@alpha_option
@click.option("--methods", type=options.ListOf(choices=SIM_METHODS, unique=True), default=",".join(SIM_METHODS),
              show_default=True, help="Methods to compare (a list).")
@click.option("--test-points", type=click.IntRange(min=1), default=1, show_default=True,
              help="Fresh test points per repetition (the paper uses 1).")
@click.option("--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None,
              help="Refuse sizes whose working set is estimated above this [default: 3/4 of the machine's memory].")
@options.seed_option
@options.run_dir_options
def cli(run_dir, resume, force, **_):
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
    from paperkit.core.progress import progress
    from paperkit.methods.conformal.plots import plot_simulation
    from paperkit.methods.conformal.run import SimSettings, execute_sim, prepare_sim
    from paperkit_cli import runtime

    inputs = prepare_sim(runtime.settings(SimSettings))
    s = inputs.settings
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    result = execute_sim(inputs, run, progress=progress)
    tables.write_table(run.file("results.csv"), result.table)
    tables.write_table(run.file("reps.csv"), result.reps)
    plot_simulation(result.table, run.file("coverage_length.png"), alpha=s.alpha)
    options.report_table(result.table, [("p", "p", "d"), ("method", "method", ""), ("guarantee", "guarantee", ".3f"),
                                        ("coverage", "coverage", ".3f"), ("coverage_se", "se", ".3f"),
                                        ("median_length", "median len", ".4g")])
    runtime.write_manifest(inputs=[], run_dir=run.path, seed=s.seed)
    options.echo_data(io.dumps_json({"run_dir": str(run.path), "dimensions": list(s.dims), "reps": s.reps,
                                     "coverage": {f"p{r['p']}/{r['method']}": round(r["coverage"], 4)
                                                  for r in result.table},
                                     "shortest_median": result.shortest_median}, indent=None))
