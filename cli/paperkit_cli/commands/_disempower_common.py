"""Options shared by the disempower-* commands (scenario, overrides, horizon, step)."""

from __future__ import annotations

import click

from paperkit_cli import options

scenario_option = click.option(
    "--scenario", default="baseline_incremental", show_default=True, metavar="NAME|PATH",
    help="A built-in scenario (baseline_incremental, no_ai_progress, aligned_ai_competitive, single_domain_fix, "
         "ubi_redistribution, rentier_state, early_mitigation, late_mitigation, freeze_after_collapse, "
         "power_concentration) or a scenario YAML file.")

set_option = click.option(
    "--set", "overrides", multiple=True, default=(), metavar="PATH=VALUE",
    help="Override one parameter, e.g. W.econ.state=0.3 or lam.culture=0.3 or rho=0 (repeatable; the value is "
         "a number, checked against the range in mechanisms.yaml).")

horizon_options = options._compose(
    click.option("--horizon", type=click.IntRange(min=1, max=1000), default=50, show_default=True,
                 help="Years to simulate."),
    click.option("--dt", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=0.25, show_default=True,
                 help="Euler step in years (the horizon must be a whole number of steps)."),
    click.option("--irreversibility-years", type=options.FiniteFloat(0.0, 1000.0), default=30.0,
                 show_default=True,
                 help="Years run on with capability frozen at the horizon to test irreversibility (HII stays below "
                      "theta)."),
)
