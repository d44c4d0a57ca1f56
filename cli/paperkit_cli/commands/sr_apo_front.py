"""``paperkit sr-apo-front``: merge run summaries (runs, seeds, optimisers, shards) into APO fronts."""

from __future__ import annotations

import click

from paperkit_cli import options, runtime


@options.command("sr-apo-front", writes=("plot_path",),
                 short_help="Merge run summaries into APO fronts (strict-improvement rule).")
@click.option("--summaries", "patterns", multiple=True, required=True, metavar="GLOB",
              help="Summary files, folders or glob patterns (<dataset>_<method>_<h>_<seed>_summary.csv); repeatable.")
@click.option("--feature-names", default=None, metavar="A,B,...",
              help="Names for xdata[0], xdata[1], ... in the infix and simplified columns.")
@click.option("--latex", is_flag=True, help="Add a LaTeX column (of the standardised-scale expression).")
@click.option("--export", type=click.Choice(["sympy", "latex", "python"]), default="sympy", show_default=True,
              help="Syntax of the formula column (the formula in the data's units and column names): sympy, LaTeX, "
                   "or a Python expression over numpy arrays.")
@click.option("--standardisation", "standardisation_path", default=None, metavar="FILE",
              help="standardisation.json of the data (written by sr-apo-search) [default: the one beside each "
                   "dataset's summaries; without one the formula column is empty].")
@click.option("--data", "data_path", default=None, metavar="FILE",
              help="The data the summaries were fitted on (every column but --target is a feature, in order): its "
                   "standardisation gives the formula column when there is no standardisation.json (e.g. the "
                   "paper's published fronts).")
@click.option("--target", default="target", show_default=True, help="Target column of --data (PMLB: target).")
@click.option("--tolerance", type=options.FiniteFloat(0.0, 1.0, max_open=True), default=1e-12, show_default=True,
              help="A longer expression enters the front only if its R² beats every shorter one by more than "
                   "tolerance * max(1, |R²|) (0: the paper's bare strict rule); recorded in the manifest.")
@click.option("--plot", "plot_path", default=None, metavar="PNG", help="Also draw the front(s) to this PNG.")
@options.output_options
def cli(patterns, feature_names, latex, export, standardisation_path, data_path, target, tolerance, plot_path,
        output, fmt, manifest_path) -> None:
    """Merge per-run summaries into one APO front per dataset.

    Reads summary files in the official layout (from sr-apo-search, its shards, or the paper's
    Extracted_APO_Fronts folder). Per dataset, takes the best R² per length over every run and keeps a
    length only if it beats every shorter one by more than --tolerance (relative; float noise of 1e-16
    cannot let a longer formula in). Writes one row per (dataset, length): length, R2, MSE, expression,
    infix, simplified (standardised scale, 6 digits), formula (y = mean_y + std_y * f((x - mean) / std)
    in the data's units and column names, exact constants, in --export syntax; needs the
    standardisation.json that sr-apo-search writes, or --data), parameters (a JSON list), method, seed, head,
    dataset. The manifest records the front rule and tolerance.

    \b
    Examples:
      $ paperkit sr-apo-front --summaries 'runs/shard*/' -o front.csv
      $ paperkit sr-apo-front --summaries 'fronts/1027_ESL_*_summary.csv' --plot esl.png -o -
      $ paperkit sr-apo-front --summaries runs/apo --export latex --format csv -o front.csv
      $ paperkit sr-apo-front --summaries 'fronts/192_vineyard_*' --data 192_vineyard.tsv.gz -o vineyard.csv
    """
    from paperkit.core import io, tables
    from paperkit.core.errors import UsageError
    from paperkit.methods.sr_apo.formula import read_standardisation
    from paperkit.methods.sr_apo.front import (
        collect_summaries,
        front_metadata,
        fronts_by_dataset,
        standardisation_files,
    )

    if standardisation_path and data_path:
        raise UsageError("--standardisation and --data both give the standardisation; give one")
    scaling = read_standardisation(standardisation_path) if standardisation_path else None
    if data_path:
        from paperkit.methods.sr_apo.formula import Standardisation

        t = tables.read_table(data_path)
        t.column(target)
        names = [c for c in t.columns if c != target]
        scaling = Standardisation.of(t.numeric(names), t.numeric([target])[:, 0], names, target)
    paths = collect_summaries(patterns)
    # the summaries found in folders and globs, and the standardisation.json beside them, are inputs too
    io.refuse_overwriting_inputs({"--output": output, "--plot": plot_path}, [*paths, *standardisation_files(paths)])
    names = [n.strip() for n in feature_names.split(",")] if feature_names else None
    rows, fronts = fronts_by_dataset(paths, feature_names=names, latex=latex, tolerance=tolerance,
                                     standardisation=scaling if standardisation_path else None,
                                     fallback=scaling if data_path else None, export=export)
    missing = sorted({str(r["dataset"]) for r in rows if r.get("formula") is None})
    if missing:
        options.report(f"sr-apo-front: no standardisation.json for {', '.join(missing[:5])}: the formula column "
                       "(original units) is empty there; pass --standardisation FILE or --data FILE")
    tables.write_table(output, rows, fmt=fmt)
    if plot_path:
        from paperkit.methods.sr_apo.plots import plot_fronts

        plot_fronts(plot_path, fronts)
    runtime.write_manifest(inputs=[*paths, standardisation_path, data_path], output=output,
                           manifest_path=manifest_path, outputs=[plot_path] if plot_path else [],
                           extra={"front_rule": front_metadata(tolerance)})
