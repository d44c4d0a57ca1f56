"""``paperkit var-approx-sweep``: error-vs-width sweeps of the VAR transformer, sharded, with fitted slopes."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._var_approx_common import shared_options

SETTINGS = "paperkit.methods.var_approx.run:SweepSettings"


@options.command("var-approx-sweep", short_help="Sweep VAR transformers over width, L, embed and scales; slopes.")
@click.option("--targets", type=options.ListOf(choices=["fourier", "digits", "context"], unique=True),
              default="fourier", show_default=True, help="Targets to sweep.")
@click.option("--lipschitz", type=options.ListOf(options.FiniteFloat(0.0, min_open=True), unique=True),
              default="1,4,16", show_default=True, help="Lipschitz constants L of the fourier target.")
@click.option("--widths", type=options.ListOf(click.IntRange(min=1), unique=True), default="8,16,32,64,128,256",
              show_default=True, help="FFN widths m.")
@click.option("--embeds", type=options.ListOf(click.IntRange(min=1), unique=True), default="32",
              show_default=True, help="Embedding widths D.")
@click.option("--schedules", type=options.ListOf(unique=True), default="2-4-8", show_default=True,
              help="Scale schedules, dash-separated sides (2-4-8), 'var' or geom:FIRST:LAST:COUNT.")
@options.seeds_option(help="Seeds of every cell, trained together as one vmapped model.")
@shared_options
@click.option("--shard", type=options.Shard(), default="1/1", show_default=True, metavar="K/N",
              help="Run only every N-th cell from the K-th; merge the shards' run dirs with --merge.")
@click.option("--merge", "merge_dirs", multiple=True, metavar="DIR",
              help="Merge these shard run dirs (their sweep.csv) instead of training (repeatable).")
@options.run_dir_options
def cli(run_dir, resume, force, merge_dirs, **kw):
    """Train the VAR transformer on a grid of (target, L, width, embed, scales) with several seeds per cell
    (vmapped), and fit the log-log slope of median test RMSE against width with a 95% bootstrap interval.

    Writes to DIR: sweep.csv (one row per cell and seed: cell, target, lipschitz, width, embed, scales, seed,
    train/test RMSE, relative L2, max error, parameters, tokens), summary.json (slopes per target, L, embed
    and scales), scaling.png. Cells are checkpointed: --resume continues an interrupted sweep.

    \b
    Examples:
      $ paperkit var-approx-sweep --widths 8,32,128 --lipschitz 1,4,16 --run-dir runs/sweep
      $ paperkit var-approx-sweep --shard 1/2 --run-dir runs/s1
      $ paperkit var-approx-sweep --merge runs/s1 --merge runs/s2 --run-dir runs/all
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.var_approx import sweep as sw
    from paperkit.methods.var_approx.plots import scaling_figure
    from paperkit.methods.var_approx.run import SweepSettings, execute_sweep, prepare_sweep, read_shard_rows
    from paperkit_cli import runtime

    s = runtime.settings(SweepSettings)
    if merge_dirs:
        rows = read_shard_rows(list(merge_dirs))
        run = runtime.start_run(run_dir, resume=resume, force=force)
    else:
        inputs = prepare_sweep(s)
        run = runtime.start_run(run_dir, resume=resume, force=force)
        rows = execute_sweep(inputs, run)
    slopes = sw.slopes(rows, seed=0)
    tables.write_table(run.file("sweep.csv"), rows)
    io.write_json(run.file("summary.json"), {"slopes": slopes, "runs": len(rows)})
    if slopes:
        plots.save_figure(scaling_figure(rows, slopes), run.file("scaling.png"))
    options.report_table(slopes, [("target", "target", ""), ("lipschitz", "L", "g"), ("embed", "D", "d"),
                                  ("scales", "scales", ""), ("slope", "slope", ".3f"), ("slope_lo", "lo", ".3f"),
                                  ("slope_hi", "hi", ".3f"), ("spearman", "spearman", ".2f"),
                                  ("rmse_first", "RMSE@min m", ".4g"), ("rmse_last", "RMSE@max m", ".4g")],
                         title="var-approx-sweep: log test RMSE vs log width")
    runtime.write_manifest(run_dir=run.path, inputs=[f"{d}/sweep.csv" for d in merge_dirs],
                           extra={"wall_time_s": runtime.elapsed(), "shard": list(s.shard)})
    options.echo_data(json.dumps({"run_dir": str(run.path), "runs": len(rows),
                                  "slopes": {f"{x['target']}/L={x['lipschitz']:g}/D={x['embed']}/{x['scales']}":
                                             _finite(x["slope"]) for x in slopes}}))


def _finite(x: float) -> float | None:
    """The slope rounded for stdout, or null: bare NaN is not JSON (a diverged cell can still give one)."""
    import math

    return round(x, 4) if math.isfinite(x) else None
