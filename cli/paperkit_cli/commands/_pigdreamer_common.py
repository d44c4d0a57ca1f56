"""Helpers shared by the pigdreamer-* commands: the run-dir argument and the report of a run's summary."""

from __future__ import annotations

import click

from paperkit_cli import options

run_dirs_argument = click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False), metavar="RUN...")

SUMMARY_COLUMNS = [("variant", "variant", ""), ("return_mean", "return", ".3f"), ("cost_mean", "cost", ".3f"),
                   ("within_limit", "within limit", ".0%"), ("episodes", "episodes", "")]


def report_summary(summary: dict, title: str) -> None:
    options.report_table([summary], SUMMARY_COLUMNS, title=title)
