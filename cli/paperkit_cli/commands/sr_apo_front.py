"""``paperkit sr-apo-front``: merge run summaries (runs, seeds, optimisers, shards) into APO fronts."""

from __future__ import annotations

import click

from paperkit_cli import options, runtime


@options.command("sr-apo-front", short_help="Merge run summaries into APO fronts (strict-improvement rule).")
@click.option("--summaries", "patterns", multiple=True, required=True, metavar="GLOB",
              help="Summary files, folders or glob patterns (<dataset>_<method>_<h>_<seed>_summary.csv); repeatable.")
@click.option("--feature-names", default=None, metavar="A,B,...",
              help="Names for xdata[0], xdata[1], ... in the infix and simplified columns.")
@click.option("--latex", is_flag=True, help="Add a LaTeX column.")
@click.option("--plot", "plot_path", default=None, metavar="PNG", help="Also draw the front(s) to this PNG.")
@options.output_options
def cli(patterns, feature_names, latex, plot_path, output, fmt, manifest_path) -> None:
    """Merge per-run summaries into one APO front per dataset.

    Reads summary files in the official layout (from sr-apo-search, its shards, or the paper's
    Extracted_APO_Fronts folder). Per dataset, takes the best R² per length over every run and keeps a
    length only if it beats every shorter one. Writes one row per (dataset, length): length, R2, MSE,
    expression, infix, simplified, parameters, method, seed, head, dataset.

    \b
    Examples:
      $ paperkit sr-apo-front --summaries 'runs/shard*/' -o front.csv
      $ paperkit sr-apo-front --summaries 'fronts/1027_ESL_*_summary.csv' --plot esl.png -o -
    """
    from paperkit.core import tables
    from paperkit.methods.sr_apo.front import collect_summaries, fronts_by_dataset

    paths = collect_summaries(patterns)
    names = [n.strip() for n in feature_names.split(",")] if feature_names else None
    rows, fronts = fronts_by_dataset(paths, feature_names=names, latex=latex)
    tables.write_table(output, rows, fmt=fmt)
    if plot_path:
        from paperkit.methods.sr_apo.plots import plot_fronts

        plot_fronts(plot_path, fronts)
    runtime.write_manifest(inputs=paths, output=output, manifest_path=manifest_path,
                           outputs=[plot_path] if plot_path else [])
