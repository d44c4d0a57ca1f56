"""``paperkit bandit-sweep``: the paper's sweeps (fusion weight alpha, reward gap, preference gap)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.bandit_sim import instance_hashes, instance_options, set_threads, threads_option


@options.command("bandit-sweep", short_help="Final regret of bandit algorithms along alpha or a gap (CSV + PNG).")
@click.option("--sweep", "kind", type=click.Choice(["alpha", "reward-gap", "pref-gap"]), required=True,
              help="What to vary: alpha (fusion weight), reward-gap (mu_k = 0.9 − (k−1)·gap) or pref-gap "
                   "(nu_kl = 1/2 + (l − k)·gap).")
@click.option("--values", default=None, metavar="LIST",
              help="Comma-separated values [default: the paper's: alpha 0, 0.02, ..., 1; reward gaps "
                   "0.06, 0.11, 0.16, 0.21; preference gaps 0.03, 0.05, ..., 0.11].")
@instance_options
@click.option("--algos", default=None,
              help="Comma-separated algorithms [default: decofusion for alpha, the four paper algorithms for gaps].")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Fusion weight for the gap sweeps.")
@click.option("--horizon", "-T", "--T", "horizon", type=click.IntRange(min=1), default=200000, show_default=True,
              help="Rounds per run.")
@click.option("--runs", type=click.IntRange(min=1), default=20, show_default=True,
              help="Independent runs per value and algorithm.")
@click.option("--f-coef", type=click.FloatRange(min=0.0), default=0.05, show_default=True,
              help="DecoFusion threshold beta_t = log t + f_coef·K^1.01.")
@options.seed_option
@threads_option
@options.run_dir_options
def cli(kind, values, preset, instance_path, algos, alpha, horizon, runs, f_coef, seed, jobs, run_dir, resume, force):
    """Sweep the fusion weight or a gap and record each algorithm's final regret.

    For every value, runs each algorithm RUNS times for T rounds and writes to DIR: sweep.csv (value,
    algorithm, mean/std/standard error of the final aggregated regret, mean reward and dueling parts,
    the lower bound C(alpha)·log T) and sweep.png. The instance (--preset/--instance, default
    official16) is the base: alpha sweeps use it as is, reward-gap sweeps keep its preference matrix,
    pref-gap sweeps keep its means. Each finished value is checkpointed; --resume continues (refused
    if the instance files changed since).

    \b
    Examples:
      $ paperkit bandit-sweep --sweep alpha --values 0,0.25,0.5,0.75,1 -T 20000 --runs 4 --run-dir alpha/
      $ paperkit bandit-sweep --sweep reward-gap -T 10000 --runs 4 --run-dir rgap/
    """
    import json
    import math

    from paperkit.core import plots, tables
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.methods import bandits as B
    from paperkit.methods.bandits.instances import resolve_instance
    from paperkit.methods.bandits.plots import sweep_figure
    from paperkit.methods.bandits.simulate import DEFAULT_SWEEP_VALUES, sweep_instance
    from paperkit_cli import runtime

    if values is None:
        grid = list(DEFAULT_SWEEP_VALUES[kind])
    else:
        try:
            grid = [float(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise UsageError(f"--values {values!r}: expected comma-separated numbers") from None
        if not grid:
            raise UsageError("--values is empty; expected comma-separated numbers")
    for v in grid:
        if kind == "alpha" and not 0.0 <= v <= 1.0:
            raise UsageError(f"--values: alpha = {v!r} is out of range; expected values in [0, 1]")
        if kind != "alpha" and not (v > 0 and math.isfinite(v)):
            raise UsageError(f"--values: gap = {v!r}; expected positive finite gaps")
    names = B.parse_algorithms(algos or ("decofusion" if kind == "alpha" else ",".join(B.PAPER_ALGORITHMS)))
    B.check_settings(horizon, runs, alpha, f_coef=f_coef)  # before the run dir exists
    base = resolve_instance(preset, instance_path)
    for v in grid:  # fail on a bad instance before any simulation
        sweep_instance(kind, v, base)
    run = runtime.start_run(run_dir, resume=resume, force=force, extra=instance_hashes(base.files))
    set_threads(jobs)
    rows = []
    with progress(total=len(grid) * len(names) * runs, desc=f"sweep {kind}", unit="run") as bar:
        for i, v in enumerate(grid):
            ck = f"value{i:03d}.json"
            if run.resumed and run.has_checkpoint(ck):
                rows.extend(run.load_checkpoint(ck))
                bar.update(len(names) * runs)
                continue
            bar.set_postfix_str(f"{kind}={v:g}")
            part = B.sweep_point(kind, v, base, names, horizon, runs, alpha=alpha, seed=seed, f_coef=f_coef,
                                 on_batch=bar.update, batch=max(8, runs // 4))
            run.save_checkpoint(ck, part)
            rows.extend(part)
    tables.write_table(run.file("sweep.csv"), rows)
    plots.save_figure(sweep_figure(rows, kind), run.file("sweep.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=list(base.files))
    best = {}
    for r in rows:
        if r["algo"] not in best or r["regret_mean"] > best[r["algo"]]["regret_mean"]:
            best[r["algo"]] = r
    options.echo_data(json.dumps({"run_dir": str(run.path), "sweep": kind, "values": grid, "algos": names,
                                  "T": horizon, "runs": runs, "rows": len(rows),
                                  "worst": {a: {"value": r["value"], "regret_mean": r["regret_mean"]}
                                            for a, r in best.items()}}))
