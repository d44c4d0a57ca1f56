"""Helpers shared by the pigdreamer-* commands: the run-dir argument and the report of a run's summary."""

from __future__ import annotations

import click

from paperkit_cli import options

run_dirs_argument = click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False), metavar="RUN...")

SUMMARY_COLUMNS = [("variant", "variant", ""), ("return_mean", "return", ".3f"), ("cost_mean", "cost", ".3f"),
                   ("within_limit", "within limit", ".0%"), ("episodes", "episodes", "")]


def report_summary(summary: dict, title: str) -> None:
    """The summary's row on stderr; with the policy that acted where the summary names it (pigdreamer-eval's
    --policy random scores uniform random actions, not the variant's actor)."""
    columns = SUMMARY_COLUMNS if "policy" not in summary else [SUMMARY_COLUMNS[0], ("policy", "policy", ""),
                                                                *SUMMARY_COLUMNS[1:]]
    options.report_table([summary], columns, title=title)
