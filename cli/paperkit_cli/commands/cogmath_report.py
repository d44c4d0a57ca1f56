"""``paperkit cogmath-report``: tables and a per-dimension bar chart of cogmath-eval runs."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("cogmath-report", short_help="Print CogMath tables for runs; plot accuracy vs mastery per dimension.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(), metavar="RUN...")
@click.option("--names", default=None, metavar="A,B,...", help="Column names for the runs [default: folder names].")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv", "tsv", "jsonl"]), default="table",
              show_default=True, help="Aligned text, a Markdown table, or machine-readable rows.")
@click.option("--plot", default=None, metavar="FILE.png",
              help="Also write a bar chart: accuracy, relative pass rate of each dimension, pass rate.")
def cli(runs: tuple[str, ...], names: str | None, fmt: str, plot: str | None) -> None:
    """Print CogMath tables for runs; plot accuracy vs mastery per dimension.

    Reads the summary.json of each cogmath-eval run directory and prints one row per metric
    (accuracy, relative pass rate of each dimension and stage, pass rate, overestimation) and one
    column per run, to stdout. With --plot, writes a PNG of the same numbers.

    \b
    Examples:
      $ paperkit cogmath-generate --source synthetic:20 -o inq.jsonl
      $ paperkit cogmath-eval --inquiries inq.jsonl --run-dir runs/perfect
      $ paperkit cogmath-eval --inquiries inq.jsonl --failures memorise --run-dir runs/memoriser
      $ paperkit cogmath-report runs/perfect runs/memoriser --plot runs/dims.png
    """
    import csv
    import json
    import sys
    from pathlib import Path

    from paperkit.core.errors import UsageError
    from paperkit.methods.cogmath import report

    summaries = [report.load_summary(r) for r in runs]
    labels = [n.strip() for n in names.split(",")] if names else [Path(r).resolve().name for r in runs]
    if len(labels) != len(runs):
        raise UsageError(f"--names gives {len(labels)} names for {len(runs)} runs")
    if len(set(labels)) != len(labels):
        raise UsageError(f"run names must differ ({', '.join(labels)}); use --names")
    rows = report.table_rows(labels, summaries)
    if fmt in ("table", "markdown"):
        sys.stdout.write(report.render_text(rows, labels, markdown=fmt == "markdown"))
    elif fmt == "jsonl":
        for r in rows:
            options.echo_data(json.dumps(r))
    else:
        w = csv.writer(sys.stdout, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(["metric"] + labels)
        for r in rows:
            w.writerow([r["metric"]] + ["" if r[n] is None else r[n] for n in labels])
    if plot:
        report.plot(plot, labels, summaries)
