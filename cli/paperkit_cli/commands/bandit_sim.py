"""``paperkit bandit-sim``: simulate the reward+dueling bandit algorithms of Wang et al. (ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

DEFAULT_ALGOS = "decofusion,elimfusion,elim-nofusion,med-nofusion"

instance_options = options._compose(
    click.option("--preset", default=None, metavar="NAME",
                 help="Built-in instance: official16 (default), reward-gap:G, pref-gap:G, bradley-terry:S."),
    click.option("--instance", "instance_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Instance YAML: 'means' plus 'preference' (matrix, CSV path or bradley-terry) or 'wins'."),
)
# Same spelling and meaning as options.jobs_option, but the default is every core (0), not 1: runs are
# independent numba prange iterations whose results do not depend on the thread count, so there is no
# reason to leave cores idle by default (the full official experiment is timed that way).
threads_option = click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
                               help="Threads for the parallel runs; 0 means one per CPU core. Results do not "
                                    "depend on it.")


def instance_hashes(files: tuple[str, ...]) -> dict:
    """Config entries pinning the instance's files (YAML and any CSV it names) for ``--resume``."""
    from paperkit.core.io import sha256_file

    return {"instance_sha256": {f: sha256_file(f) for f in files}} if files else {}


def set_threads(jobs: int) -> None:
    import numba

    numba.set_num_threads(jobs if 0 < jobs <= numba.config.NUMBA_NUM_THREADS else numba.config.NUMBA_NUM_THREADS)


@options.command("bandit-sim", short_help="Simulate reward+dueling bandit algorithms: regret curves, ranks.")
@instance_options
@click.option("--alpha", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Weight of the reward regret; the dueling regret gets 1 − alpha.")
@click.option("--horizon", "-T", "--T", "horizon", type=click.IntRange(min=1), default=200000, show_default=True,
              help="Rounds per run.")
@click.option("--runs", type=click.IntRange(min=1), default=100, show_default=True, help="Independent runs.")
@click.option("--algos", default=DEFAULT_ALGOS, show_default=True,
              help="Comma-separated: decofusion, elimfusion, elim-nofusion, med-nofusion, ucb, klucb, rucb.")
@click.option("--f-coef", type=click.FloatRange(min=0.0), default=0.05, show_default=True,
              help="DecoFusion threshold beta_t = log t + f_coef·K^1.01 (official code 0.05, RMED 0.3).")
@click.option("--delta", type=click.FloatRange(0.0, 1.0, min_open=True), default=None,
              help="Confidence of the elimination algorithms, in (0, 1] [default: 1/T].")
@click.option("--points", type=click.IntRange(min=2), default=100, show_default=True,
              help="About this many log-spaced rounds in regret.csv.")
@click.option("--yscale", type=click.Choice(["linear", "log"]), default="linear", show_default=True,
              help="y axis of regret.png (x is log): linear shows log t growth as a straight line; log keeps "
                   "regrets of different orders of magnitude apart.")
@options.seed_option
@threads_option
@options.run_dir_options
def cli(preset, instance_path, alpha, horizon, runs, algos, f_coef, delta, points, yscale, seed, jobs, run_dir,
        resume, force):
    """Simulate DR-MAB algorithms (reward + dueling feedback) and rank them by regret.

    Runs each algorithm RUNS times for T rounds on one instance (numba, runs in parallel) and writes to
    DIR: regret.csv (log-spaced t; mean and std of the aggregated regret alpha·reward + (1 − alpha)·dueling,
    and the mean of each part), final.json (final regrets ranked, the lower-bound constant C(alpha) and
    C(alpha)·log T), instance.yaml (the resolved means and preference matrix), regret.png (regret
    against t, log-x and, by default, linear y so log t growth is a straight line; mean ± std and the
    line C(alpha)·log t). Prints the ranked table on stderr
    and one JSON summary line on stdout. Each finished algorithm is checkpointed; --resume continues
    an interrupted run (refused if the instance files changed since).

    \b
    Examples:
      $ paperkit bandit-sim --preset official16 -T 20000 --runs 10 --run-dir sim/
      $ paperkit bandit-sim --preset pref-gap:0.05 --alpha 0.3 --algos decofusion,rucb -T 5000 --runs 4 --run-dir pg/
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.core.progress import progress
    from paperkit.methods import bandits as B
    from paperkit.methods.bandits.instances import resolve_instance
    from paperkit.methods.bandits.plots import regret_figure
    from paperkit_cli import runtime

    names = B.parse_algorithms(algos)
    delta = B.check_settings(horizon, runs, alpha, delta=delta, f_coef=f_coef)  # before the run dir exists
    inst = resolve_instance(preset, instance_path)
    lb = B.lower_bound(inst, alpha)
    run = runtime.start_run(run_dir, resume=resume, force=force, extra=instance_hashes(inst.files),
                            resume_free=("yscale",))
    set_threads(jobs)
    ckpts = B.log_checkpoints(horizon, points)
    results = []
    with progress(total=len(names) * runs, desc="bandit-sim", unit="run") as bar:
        for name in names:
            ck = f"{name}.npz"
            if run.resumed and run.has_checkpoint(ck):
                d = run.load_checkpoint(ck)
                res = B.SimResult(name, d["t"], d["reward"], d["duel"])
                bar.update(runs)
            else:
                bar.set_postfix_str(name)
                res = B.simulate(inst, name, horizon, runs, alpha=alpha, seed=seed, delta=delta, f_coef=f_coef,
                                 checkpoints=ckpts, batch=max(8, runs // 10), on_batch=bar.update)
                run.save_checkpoint(ck, {"t": res.t, "reward": res.reward, "duel": res.duel})
            results.append(res)
    rows = [r for res in results for r in B.curve_rows(res, alpha)]
    ranked = B.rank([B.final_summary(res, alpha) for res in results])
    tables.write_table(run.file("regret.csv"), rows)
    io.write_json(run.file("final.json"), {
        "instance": inst.name, "alpha": alpha, "T": horizon, "runs": runs, "seed": seed,
        "lower_bound_constant": lb.constant, "lower_bound_at_T": lb.at(horizon),
        "no_fusion_constant": lb.no_fusion_constant, "ranking": ranked})
    io.write_yaml(run.file("instance.yaml"), inst.to_dict())
    fig = regret_figure(results, alpha, lower_bound=lb.constant, title=f"{inst.name}, T = {horizon}, {runs} runs",
                        yscale=yscale)
    plots.save_figure(fig, run.file("regret.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=list(inst.files))
    _print_table(ranked, lb.at(horizon))
    options.echo_data(json.dumps({"run_dir": str(run.path), "instance": inst.name, "alpha": alpha, "T": horizon,
                                  "runs": runs, "ranking": [{k: r[k] for k in ("rank", "algo", "regret_mean",
                                                                               "regret_std")} for r in ranked]}))


def _print_table(ranked: list[dict], bound: float) -> None:
    from paperkit_cli import state

    if state.settings.get("quiet"):
        return
    lines = [f"{'rank':>4}  {'algorithm':<13} {'regret':>10} {'± std':>9} {'reward':>10} {'dueling':>10}"]
    for r in ranked:
        lines.append(f"{r['rank']:>4}  {r['label']:<13} {r['regret_mean']:>10.1f} {r['regret_std']:>9.1f} "
                     f"{r['reward_regret_mean']:>10.1f} {r['duel_regret_mean']:>10.1f}")
    lines.append(f"lower bound C(alpha)·log T = {bound:.1f}")
    click.echo("\n".join(lines), err=True)
