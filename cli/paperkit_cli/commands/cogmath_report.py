"""``paperkit cogmath-report``: tables and a per-dimension bar chart of cogmath-eval runs."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.cogmath.run:ReportSettings"


@options.command("cogmath-report", writes=("plot",),
                 short_help="Print CogMath tables for runs; plot accuracy vs mastery per dimension.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(), metavar="RUN...")
@click.option("--names", type=options.ListOf(), default=None, metavar="A,B,...",
              help="Column names for the runs [default: folder names].")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "csv", "tsv", "jsonl"]), default="table",
              show_default=True, help="Aligned text, a Markdown table, or machine-readable rows; all in percent (a unit column).")
@click.option("--plot", default=None, metavar="FILE.png",
              help="Also write a bar chart: accuracy, relative pass rate of each dimension, pass rate.")
def cli(runs: tuple[str, ...], plot: str | None, **_: object) -> None:
    """Print CogMath tables for runs; plot accuracy vs mastery per dimension.

    Reads the summary.json of each cogmath-eval run directory and prints one row per metric and one
    column per run, to stdout: accuracy of the originals; per dimension its absolute accuracy (share of
    all problems whose inquiry passed) beside its relative pass rate RPR (among problems whose original
    was solved; empty or '-' when none was); the RPR of each stage; pass rate (mastery); overestimation
    (accuracy - pass rate); failed calls. Every format uses one scale: rates in percent (0-100), named
    in the 'unit' column (%, points = percentage points, count). With --plot, writes a PNG of accuracy,
    each dimension's RPR (bars) and absolute accuracy (black ticks), and the pass rate.

    \b
    Examples:
      $ paperkit cogmath-generate --source synthetic:20 -o inq.jsonl
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend rule --run-dir runs/perfect
      $ paperkit cogmath-eval --inquiries inq.jsonl --backend rule --failures memorise --run-dir runs/memoriser
      $ paperkit cogmath-report runs/perfect runs/memoriser --plot runs/dims.png
    """
    import csv
    import json
    import sys

    from paperkit.methods.cogmath import report
    from paperkit.methods.cogmath.run import ReportSettings, execute_report, prepare_report
    from paperkit_cli import runtime

    settings = runtime.settings(ReportSettings)
    inputs = prepare_report(settings, runs, plot=plot)
    rows, labels = execute_report(inputs), inputs.labels
    if settings.fmt in ("table", "markdown"):
        sys.stdout.write(report.render_text(rows, labels, markdown=settings.fmt == "markdown"))
    elif settings.fmt == "jsonl":
        for r in rows:
            options.echo_data(json.dumps(r))
    else:
        w = csv.writer(sys.stdout, delimiter="," if settings.fmt == "csv" else "\t", lineterminator="\n")
        w.writerow(["metric", "unit"] + labels)
        for r in rows:
            w.writerow([r["metric"], r["unit"]] + ["" if r[n] is None else r[n] for n in labels])
    if plot:
        report.plot(plot, labels, inputs.summaries)
