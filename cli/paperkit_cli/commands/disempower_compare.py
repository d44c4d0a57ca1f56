"""``paperkit disempower-compare``: run several disempowerment scenarios side by side."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._disempower_common import horizon_options, set_option

SETTINGS = "paperkit.methods.disempower.run:CompareSettings"


@options.command("disempower-compare", short_help="Compare disempowerment scenarios: compare.csv and compare.png.")
@click.argument("scenarios", nargs=-1, metavar="[SCENARIO]...")
@horizon_options
@set_option
@options.seed_option
@options.run_dir_options
def cli(scenarios, horizon, dt, irreversibility_years, overrides, seed, run_dir, resume, force):
    """Simulate each SCENARIO (built-in names or YAML files; default: all ten built-ins) and compare them.

    Writes to DIR: compare.csv (per scenario: HII at 0, min and final, theta-crossing year, irreversibility,
    C_H at 0 and final, labour share, elite share) and compare.png (HII and C_H over time). --set applies
    to every scenario.

    \b
    Examples:
      $ paperkit disempower-compare --run-dir runs/all
      $ paperkit disempower-compare baseline_incremental early_mitigation late_mitigation --run-dir runs/mit
    """
    import json

    from paperkit.core import plots, tables
    from paperkit.methods.disempower import plots as dplots
    from paperkit.methods.disempower.run import CompareSettings, execute_compare, prepare_compare
    from paperkit_cli import runtime

    s = runtime.settings(CompareSettings, scenarios=tuple(scenarios))
    inputs = prepare_compare(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    result = execute_compare(inputs, run)
    tables.write_table(run.file("compare.csv"), result.rows)
    plots.save_figure(dplots.compare_figure(result.curves, result.theta), run.file("compare.png"))
    options.report_table(result.rows, [("scenario", "scenario", ""), ("hii_min", "min HII", ".3f"),
                                       ("hii_final", "final HII", ".3f"), ("theta_crossing", "HII<θ at", ".1f"),
                                       ("irreversible", "irreversible", ".0f"), ("c_h_ratio", "C_H(T)/C_H(0)", ".2f"),
                                       ("elite_final", "elite share", ".2f")],
                         title=f"disempower-compare: {horizon} years, dt {dt:g}")
    files = [sc.source for sc in inputs.scenarios if not sc.source.startswith("built-in")]
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=files)
    options.echo_data(json.dumps({"run_dir": str(run.path), "scenarios": [r["scenario"] for r in result.rows],
                                  "hii_final": {r["scenario"]: r["hii_final"] for r in result.rows}}))
