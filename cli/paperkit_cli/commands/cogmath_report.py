"""``paperkit cogmath-report``: tables and a per-dimension bar chart of cogmath-eval runs."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.cogmath.run:ReportSettings"


@options.command("cogmath-report", short_help="Print CogMath tables for runs; plot accuracy vs mastery per dimension.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(), metavar="RUN...")
@click.option("--names", type=options.ListOf(), default=None, metavar="A,B,...",
              help="Column names for the runs [default: folder names].")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv", "tsv", "jsonl"]), default="table",
              show_default=True, help="Aligned text, a Markdown table, or machine-readable rows.")
@click.option("--plot", default=None, metavar="FILE.png",
              help="Also write a bar chart: accuracy, relative pass rate of each dimension, pass rate.")
def cli(runs: tuple[str, ...], plot: str | None, **_: object) -> None:
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

    from paperkit.methods.cogmath import report
    from paperkit.methods.cogmath.run import ReportSettings, execute_report, prepare_report
    from paperkit_cli import runtime

    settings = runtime.settings(ReportSettings)
    inputs = prepare_report(settings, runs)
    rows, labels = execute_report(inputs), inputs.labels
    if settings.fmt in ("table", "markdown"):
        sys.stdout.write(report.render_text(rows, labels, markdown=settings.fmt == "markdown"))
    elif settings.fmt == "jsonl":
        for r in rows:
            options.echo_data(json.dumps(r))
    else:
        w = csv.writer(sys.stdout, delimiter="," if settings.fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(["metric"] + labels)
        for r in rows:
            w.writerow([r["metric"]] + ["" if r[n] is None else r[n] for n in labels])
    if plot:
        report.plot(plot, labels, inputs.summaries)
