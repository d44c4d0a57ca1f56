"""``paperkit papers``: the table of commands, the paper each implements, and whether it is built."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("papers", short_help="List the papers and the commands that implement them.")
@click.option("--format", "fmt", type=click.Choice(["table", "tsv", "csv", "jsonl"]), default="table",
              show_default=True, help="Aligned text table, or machine-readable rows.")
@click.option("--available", "only_available", is_flag=True, help="Show only commands that are built.")
@click.option("--authors", is_flag=True, help="Add the authors column.")
def cli(fmt: str, only_available: bool, authors: bool) -> None:
    """List the papers and the commands that implement them.

    One row per command: the command, whether it is available in this installation, the paper's
    venue, title and arXiv id (or OpenReview id). Reads nothing; writes the table to stdout.

    \b
    Examples:
      $ paperkit papers
      $ paperkit papers --available --format jsonl | head -3
    """
    from paperkit_cli.registry import PAPERS, is_available

    rows = []
    for p in PAPERS:
        for c in p.commands:
            ok = is_available(c)
            if only_available and not ok:
                continue
            row = {"command": c, "available": "yes" if ok else "no", "venue": p.venue, "paper": p.title,
                   "arxiv": p.arxiv or "", "openreview": p.openreview or "", "reference": p.reference}
            if authors:
                row["authors"] = p.authors
            rows.append(row)
    _emit(rows, fmt)


def _emit(rows: list[dict], fmt: str) -> None:
    import csv
    import json
    import sys

    if fmt == "jsonl":
        for r in rows:
            options.echo_data(json.dumps(r, ensure_ascii=False))
        return
    if fmt in ("csv", "tsv"):
        w = csv.writer(sys.stdout, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        if rows:
            w.writerow(rows[0].keys())
        for r in rows:
            w.writerow(r.values())
        return
    cols = ["command", "available", "reference", "paper"] + (["authors"] if rows and "authors" in rows[0] else [])
    widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in cols[:-1]}
    options.echo_data("  ".join(c.upper().ljust(widths.get(c, 0)) for c in cols).rstrip())
    for r in rows:
        options.echo_data("  ".join(str(r[c]).ljust(widths.get(c, 0)) for c in cols).rstrip())
