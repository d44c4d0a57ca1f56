"""``paperkit bandit-sweep``: the paper's sweeps (fusion weight alpha, reward gap, preference gap)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _bandit_common as common

SETTINGS = "paperkit.methods.bandit.run:SweepSettings"


@options.command("bandit-sweep", short_help="Final regret of bandit algorithms along alpha or a gap (CSV + PNG).")
@common.instance_schema_help
@click.option("--sweep", type=click.Choice(["alpha", "reward-gap", "pref-gap"]), required=True,
              help="What to vary: alpha (fusion weight), reward-gap (mu_k = 0.9 − k·gap, arms k = 0, 1, ...) or "
                   "pref-gap (nu_kl = 1/2 + (l − k)·gap).")
@click.option("--values", type=options.ListOf(options.FiniteFloat()), default=None, metavar="V1,V2,...",
              help="Distinct values to sweep: alpha in [0, 1], reward gap in (0, 0.9], preference gap in (0, 0.5] "
                   "[default: the paper's: alpha 0, 0.02, ..., 1; reward gaps 0.06, 0.11, 0.16, 0.21; preference "
                   "gaps 0.03, 0.05, ..., 0.11].")
@common.instance_options
@common.algos_option(None, "Algorithms, comma-separated [default: decofusion for alpha, the four paper "
                           "algorithms for gaps].")
@click.option("--alpha", type=options.FiniteFloat(0.0, 1.0), default=0.5, show_default=True,
              help="Fusion weight for the gap sweeps.")
@common.horizon_option(200000)
@click.option("--runs", type=click.IntRange(min=1), default=20, show_default=True,
              help="Independent runs per value and algorithm.")
@common.f_coef_option
@click.option("--yscale", type=click.Choice(["linear", "log"]), default=None,
              help="y axis of sweep.png [default: log for the gap sweeps, whose regrets span orders of "
                   "magnitude; linear for alpha].")
@common.max_memory_option
@options.seed_option
@options.jobs_option
@options.run_dir_options
def cli(preset, instance_path, run_dir, resume, force, **_):
    """Sweep the fusion weight or a gap and record each algorithm's final regret.

    For every value, runs each algorithm RUNS times for HORIZON rounds and writes to DIR: sweep.csv
    (value, algorithm, mean/std/standard error of the final aggregated regret, mean reward and dueling
    parts, the lower bound C(alpha)·log T) and sweep.png. The instance (--preset/--instance, default
    official16) is the base: alpha sweeps use it as is, reward-gap sweeps keep its preference matrix,
    pref-gap sweeps keep its means. Each finished value is a stage of the run; --resume continues
    (refused if the instance files changed since).

    \b
    Examples:
      $ paperkit bandit-sweep --sweep alpha --values 0,0.25,0.5,0.75,1 --horizon 20000 --runs 4 --run-dir alpha/
      $ paperkit bandit-sweep --sweep reward-gap --horizon 10000 --runs 4 --run-dir rgap/
    """
    import json

    from paperkit.methods.bandit.run import SweepSettings, execute_sweep, prepare_sweep, worst_values
    from paperkit_cli import runtime

    s = runtime.settings(SweepSettings)
    inputs = prepare_sweep(s, preset=preset, instance_path=instance_path)
    run = runtime.start_run(run_dir, resume=resume, force=force, extra=inputs.resume_key,
                            resume_free=("yscale", "max_memory_gb"))
    rows = execute_sweep(inputs, run)
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=list(inputs.base.files))
    options.echo_data(json.dumps({"run_dir": str(run.path), "sweep": s.sweep, "values": list(inputs.values),
                                  "algos": list(inputs.algos), "T": s.horizon, "runs": s.runs, "rows": len(rows),
                                  "worst": worst_values(rows)}))
