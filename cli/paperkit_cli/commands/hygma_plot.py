"""``paperkit hygma-plot``: learning curves and group timelines of hygma-train runs (Liu & Li, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("hygma-plot", short_help="PNG of hygma-train runs: return/success curves (mean ± s.e.), groups over time.")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True), metavar="RUN_DIR...")
@click.option("-o", "--output", default="hygma_curves.png", show_default=True, metavar="PATH.png",
              help="The PNG to write.")
def cli(run_dirs, output):
    """Plot one row per hygma-train run dir: greedy return and success against env steps for each algorithm
    (mean ± standard error over seeds), and the number of groups k of each HYGMA run with, on
    group-capture, the ARI of the groups against each agent's most-helped prey.

    Reads curves.csv and groups.jsonl from each RUN_DIR; writes one PNG.

    \b
    Examples:
      $ paperkit hygma-train --env pp --preset easy --algo hygma-qmix,qmix --steps 20000 --run-dir runs/pp
      $ paperkit hygma-plot runs/pp -o pp.png
    """
    from pathlib import Path

    from paperkit.core import io, plots, tables
    from paperkit.core.errors import InputError
    from paperkit.methods.hygma.plots import curves_figure
    from paperkit_cli import runtime

    runs, inputs = [], []
    for d in run_dirs:
        curves_path, groups_path = Path(d) / "curves.csv", Path(d) / "groups.jsonl"
        table = tables.read_table(curves_path)
        needed = {"algo", "seed", "step", "return", "success"}
        missing = needed - set(table.columns)
        if missing:
            raise InputError(f"{curves_path}: missing columns {', '.join(sorted(missing))}; expected hygma-train's curves.csv")
        curves = table.records()
        groups = io.read_jsonl(groups_path)
        if not curves:
            raise InputError(f"{curves_path}: no rows")
        runs.append((Path(d).name, curves, groups))
        inputs += [curves_path, groups_path]
    plots.save_figure(curves_figure(runs), output)
    runtime.write_manifest(inputs=inputs, output=output)
    options.report(f"hygma-plot: wrote {output}")
