"""``paperkit bandit-sim``: simulate the reward+dueling bandit algorithms of Wang et al. (ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _bandit_common as common

SETTINGS = "paperkit.methods.bandit.run:SimSettings"


@options.command("bandit-sim", short_help="Simulate reward+dueling bandit algorithms: regret curves, ranks.")
@common.instance_schema_help
@common.instance_options
@common.alpha_option
@common.horizon_option(200000)
@click.option("--runs", type=click.IntRange(min=1), default=100, show_default=True, help="Independent runs.")
@common.algos_option(common.PAPER_ALGORITHMS, "Algorithms, comma-separated: " + ", ".join(common.ALGORITHMS) + ".")
@common.f_coef_option
@click.option("--delta", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=None,
              help="Confidence of the elimination algorithms, in (0, 1] [default: 1/horizon].")
@click.option("--points", type=click.IntRange(min=2), default=100, show_default=True,
              help="About this many log-spaced rounds in regret.csv.")
@click.option("--yscale", type=click.Choice(["linear", "log"]), default="linear", show_default=True,
              help="y axis of regret.png (x is log): linear shows log t growth as a straight line; log keeps "
                   "regrets of different orders of magnitude apart.")
@common.max_memory_option
@options.seed_option
@options.jobs_option
@options.run_dir_options
def cli(preset, instance_path, run_dir, resume, force, **_):
    """Simulate DR-MAB algorithms (reward + dueling feedback) and rank them by regret.

    Runs each algorithm RUNS times for HORIZON rounds on one instance (numba, runs in parallel) and
    writes to DIR: regret.csv (log-spaced t; mean and std of the aggregated regret alpha·reward +
    (1 − alpha)·dueling, and the mean of each part), final.json (final regrets ranked, the lower-bound
    constant C(alpha) and C(alpha)·log T, the best arm and its name), instance.yaml (the resolved means,
    preference matrix and arm names),
    regret.png (regret against t, log-x and, by default, linear y so log t growth is a straight line;
    mean ± std and the line C(alpha)·log t). Prints the ranked table on stderr and one JSON summary
    line on stdout. Each finished algorithm is a stage of the run; --resume continues an interrupted
    run (refused if the instance files changed since).

    \b
    Examples:
      $ paperkit bandit-sim --preset official16 --horizon 20000 --runs 10 --run-dir sim/
      $ paperkit bandit-sim --preset pref-gap:0.05 --alpha 0.3 --algos decofusion,rucb --horizon 5000 --runs 4 --run-dir pg/
    """
    import json

    from paperkit.methods.bandit.run import SimSettings, execute_sim, prepare_sim
    from paperkit_cli import runtime

    s = runtime.settings(SimSettings)
    inputs = prepare_sim(s, preset=preset, instance_path=instance_path)
    run = runtime.start_run(run_dir, resume=resume, force=force, extra=inputs.resume_key,
                            resume_free=("yscale", "max_memory_gb"))
    result = execute_sim(inputs, run)
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=list(inputs.instance.files))
    options.report_table(result.ranking, [("rank", "rank", "d"), ("label", "algorithm", ""),
                                          ("regret_mean", "regret", ".1f"), ("regret_std", "± std", ".1f"),
                                          ("reward_regret_mean", "reward", ".1f"),
                                          ("duel_regret_mean", "dueling", ".1f")],
                         footer=f"lower bound C(alpha)·log T = {result.bound_at_horizon:.1f}  "
                                f"(best arm {result.best_arm})")
    options.echo_data(json.dumps({
        "run_dir": str(run.path), "instance": result.instance, "alpha": s.alpha, "T": s.horizon, "runs": s.runs,
        "ranking": [{k: r[k] for k in ("rank", "algo", "regret_mean", "regret_std")} for r in result.ranking]}))
