"""``paperkit pigdreamer-compare``: final return and cost of several pigdreamer-train runs, per variant."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._pigdreamer_common import run_dirs_argument


@options.command("pigdreamer-compare", writes=("plot",),
                 short_help="Table (mean ± s.e. over seeds per variant) and curves PNG of pigdreamer-train runs.")
@run_dirs_argument
@click.option("--plot", type=click.Path(dir_okay=False), default=None, metavar="PNG",
              help="Also draw evaluation return and cost against steps (mean ± s.e. per variant).")
@options.output_options
def cli(runs, output, fmt, manifest_path, plot):
    """Gather the last evaluation of each RUN (summary.json, eval.jsonl) and average per variant.

    Writes one row per variant (in the order first seen): variant, n_seeds, steps, cost_limit, return and
    return_se, cost and cost_se, within_limit and its s.e. (standard errors over seeds; 0 for one seed).
    CSV/TSV/JSON lines by the suffix of -o.

    \b
    Examples:
      $ paperkit pigdreamer-compare runs/pig_s0 runs/pig_s1 runs/unpriv_s0 runs/unpriv_s1 -o table.csv --plot curves.png
    """
    from paperkit.core import io, plots, tables
    from paperkit.methods.pigdreamer.plots import compare_figure
    from paperkit.methods.pigdreamer.run import compare_runs, read_summary
    from paperkit_cli import runtime

    loaded = [read_summary(r) for r in runs]
    rows = compare_runs([s for s, _ in loaded])
    options.report_table(rows, [("variant", "variant", ""), ("n_seeds", "seeds", ""), ("return", "return", ".3f"),
                                ("return_se", "± s.e.", ".3f"), ("cost", "cost", ".3f"), ("cost_se", "± s.e.", ".3f"),
                                ("within_limit", "within limit", ".0%")], title="pigdreamer-compare")
    if plot:
        plots.save_figure(compare_figure(loaded, rows[0]["cost_limit"]), plot)
    if io.is_stdio(output):
        tables.write_table(output, rows, fmt=fmt or "jsonl")
    else:
        tables.write_table(output, rows, fmt=fmt)
    runtime.write_manifest(inputs=[f"{r}/summary.json" for r in runs], output=output, manifest_path=manifest_path,
                           outputs=[plot] if plot else [])
