"""``paperkit disempower-sim``: simulate one gradual-disempowerment scenario (Kulveit et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._disempower_common import horizon_options, scenario_option, set_option

SETTINGS = "paperkit.methods.disempower.run:SimSettings"


@options.command("disempower-sim", short_help="Simulate a gradual-disempowerment scenario: trajectories, HII, welfare.")
@scenario_option
@horizon_options
@click.option("--integrator", type=click.Choice(["euler", "rk45"]), default="euler", show_default=True,
              help="Euler at --dt (triggers supported), or scipy's RK45 reported every --dt (start times only).")
@click.option("--mode", type=click.Choice(["ode", "abm"]), default="ode", show_default=True,
              help="ode: the coupled ODE; abm: firms, households and parties as agents with stochastic adoption "
                   "and voting (seeded by --seed), whose mean-field limit is the ODE.")
@click.option("--households", type=click.IntRange(1, 10_000_000), default=20_000, show_default=True,
              help="--mode abm: number of households (they vote and choose culture).")
@click.option("--firms", type=click.IntRange(1, 10_000_000), default=5_000, show_default=True,
              help="--mode abm: number of firms per system (each adopts AI by stochastic imitation).")
@click.option("--parties", type=click.IntRange(1, 10_000), default=5, show_default=True,
              help="--mode abm: number of parties (votes become seats by proportional representation).")
@set_option
@options.seed_option
@options.run_dir_options
def cli(scenario, horizon, dt, irreversibility_years, integrator, mode, households, firms, parties, overrides, seed,
        run_dir, resume, force):
    """Simulate the coupled economy/culture/state model of one scenario.

    Writes to DIR: trajectories.csv (t, c, a_*, I_*, X_*, A_*, q_*, LS, Y, C_H, HII, K, elite_share, active
    policies), summary.json (min/final HII, theta-crossing year, irreversibility, welfare C_H), systems.png,
    hii_vs_welfare.png; prints a summary table on stderr and one JSON line on stdout. The model is our
    formalisation: see `paperkit disempower-explain`.

    \b
    Examples:
      $ paperkit disempower-sim --scenario baseline_incremental --run-dir runs/baseline
      $ paperkit disempower-sim --scenario early_mitigation --set W.econ.state=0.3 --run-dir runs/early
      $ paperkit disempower-sim --mode abm --households 100000 --seed 1 --run-dir runs/abm
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.disempower import plots as dplots
    from paperkit.methods.disempower.run import SimSettings, execute_sim, prepare_sim
    from paperkit_cli import runtime

    s = runtime.settings(SimSettings)
    inputs = prepare_sim(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    result = execute_sim(inputs, run)
    tables.write_table(run.file("trajectories.csv"), result.rows)
    io.write_json(run.file("summary.json"), result.summary)
    name = result.summary["scenario"]
    plots.save_figure(dplots.systems_figure(result.rows, name), run.file("systems.png"))
    plots.save_figure(dplots.hii_welfare_figure(result.rows, result.theta, name), run.file("hii_vs_welfare.png"))
    sm = result.summary
    options.report_table([sm], [("scenario", "scenario", ""), ("hii0", "HII(0)", ".3f"), ("hii_min", "min HII", ".3f"),
                                ("hii_final", "final HII", ".3f"), ("theta_crossing", "HII<θ at", ".1f"),
                                ("irreversible", "irreversible", ""), ("c_h_ratio", "C_H(T)/C_H(0)", ".2f"),
                                ("elite_final", "elite share", ".2f")],
                         title=f"disempower-sim: {horizon} years, dt {dt:g}, "
                         + (f"agents ({households} households, {firms} firms/system, {parties} parties)"
                            if mode == "abm" else integrator))
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[] if inputs.scenario.source.startswith("built-in")
                           else [inputs.scenario.source])
    options.echo_data(json.dumps({"run_dir": str(run.path), **{k: sm[k] for k in (
        "scenario", "hii_min", "hii_final", "theta_crossing", "irreversible", "c_h_final")}}))
