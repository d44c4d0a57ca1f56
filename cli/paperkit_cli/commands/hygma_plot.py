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
    from paperkit.core import plots
    from paperkit.methods.hygma.plots import curves_figure
    from paperkit.methods.hygma.run import read_run_curves
    from paperkit_cli import runtime

    runs, inputs = [], []
    for d in run_dirs:
        name, curves, groups, files = read_run_curves(d)
        runs.append((name, curves, groups))
        inputs += files
    plots.save_figure(curves_figure(runs), output)
    runtime.write_manifest(inputs=inputs, output=output)
    options.report(f"hygma-plot: wrote {output}")
