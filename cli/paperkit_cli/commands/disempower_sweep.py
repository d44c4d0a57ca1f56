"""``paperkit disempower-sweep``: sensitivity of a disempowerment scenario (OAT, tornado, MC, Morris, Sobol)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._disempower_common import horizon_options, scenario_option, set_option

SETTINGS = "paperkit.methods.disempower.run:SweepSettings"
METRICS = ["hii_final", "hii_min", "theta_crossing", "irreversible", "c_h_final", "c_h_ratio", "ls_final", "elite_final"]


@options.command("disempower-sweep", short_help="Sensitivity of a scenario: sweep, tornado, Monte Carlo, Morris, Sobol.")
@scenario_option
@click.option("--param", default=None, metavar="PATH", help="Parameter path to sweep one at a time (e.g. W.econ.state).")
@click.option("--values", type=options.ListOf(options.FiniteFloat()), default=None, metavar="V1,V2,...",
              help="Values of --param.")
@click.option("--mc", type=click.IntRange(min=0), default=0, show_default=True,
              help="Monte Carlo: N draws from the priors; reports P(irreversible) with a 95% Wilson interval.")
@click.option("--morris", type=click.IntRange(min=0), default=0, show_default=True,
              help="Morris elementary effects with R trajectories (SALib).")
@click.option("--sobol", type=click.IntRange(min=0), default=0, show_default=True,
              help="Sobol first-order and total indices with N base samples, a power of 2 (SALib, Saltelli design).")
@click.option("--tornado", is_flag=True, default=False, help="Each prior parameter at its prior's low and high end (a tornado plot).")
@click.option("--params", type=options.ListOf(), default=None, metavar="P1,P2,...",
              help="Restrict --mc/--morris/--sobol/--tornado to these parameters or paths [default: all with a prior].")
@click.option("--metric", type=click.Choice(METRICS), default="hii_final", show_default=True,
              help="Outcome analysed (a theta-crossing that never happens counts as the horizon).")
@horizon_options
@set_option
@click.option("--max-draws", type=click.IntRange(min=1), default=2_000_000, show_default=True,
              help="Refuse designs with more simulations than this.")
@options.seed_option
@options.run_dir_options
def cli(scenario, param, values, mc, morris, sobol, tornado, params, metric, horizon, dt, irreversibility_years,
        overrides, max_draws, seed, run_dir, resume, force):
    """Vary parameters of a scenario and measure an outcome (all simulations vectorised over draws).

    Writes to DIR: sweep.csv (the sweep's values or draws with their outcomes, or the tornado swings, Morris
    mu*/sigma or Sobol S1/ST per parameter), summary.json (P(irreversible) with a 95% Wilson interval and the
    mode's figures) and sweep.png (a line, tornado, histogram or indices plot).

    \b
    Examples:
      $ paperkit disempower-sweep --param W.econ.state --values 0,0.2,0.4 --run-dir runs/w
      $ paperkit disempower-sweep --mc 2000 --run-dir runs/mc
      $ paperkit disempower-sweep --sobol 256 --params rho,W,mu,lam,kappa --run-dir runs/sobol
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.disempower import plots as dplots
    from paperkit.methods.disempower.run import SweepSettings, execute_sweep, prepare_sweep
    from paperkit_cli import runtime

    s = runtime.settings(SweepSettings)
    inputs = prepare_sweep(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    result = execute_sweep(inputs, run)
    tables.write_table(run.file("sweep.csv"), result.rows)
    io.write_json(run.file("summary.json"), result.summary)
    theta = float(inputs.scenario.values["theta"])
    if result.mode == "oat":
        fig = dplots.oat_figure(result.rows, param, metric)
    elif result.mode == "tornado":
        fig = dplots.tornado_figure(result.rows, metric, result.summary["base"])
    elif result.mode == "mc":
        fig = dplots.mc_figure(result.metric_values, metric, theta if metric.startswith("hii") else None)
    elif result.mode == "morris":
        fig = dplots.indices_figure(result.rows, ("sigma", "mu_star"), f"Morris elementary effects on {metric}")
    else:
        fig = dplots.indices_figure(result.rows, ("S1", "ST"), f"Sobol indices of {metric}")
    plots.save_figure(fig, run.file("sweep.png"))
    sm = result.summary
    lo, hi = sm["p_irreversible_ci95"]
    options.report(f"disempower-sweep {result.mode}: {sm['simulations']} simulations of {sm['scenario']}; "
                   f"P(irreversible) = {sm['p_irreversible']:.3f} (95% CI {lo:.3f}-{hi:.3f})")
    key = {"oat": None, "mc": None, "tornado": "swing", "morris": "mu_star", "sobol": "ST"}[result.mode]
    if key:
        options.report_table(result.rows[:10], [("param", "parameter", ""), (key, key, ".4f")], title="top parameters")
    inputs_files = [] if inputs.scenario.source.startswith("built-in") else [inputs.scenario.source]
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs_files)
    options.echo_data(json.dumps({"run_dir": str(run.path), **sm}))
