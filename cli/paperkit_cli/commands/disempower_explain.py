"""``paperkit disempower-explain``: every equation and parameter of disempower-sim with the claim it encodes."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._disempower_common import set_option

SETTINGS = "paperkit.methods.disempower.run:ExplainSettings"


@options.command("disempower-explain", short_help="Print each disempower-sim equation and parameter with its claim.")
@click.option("--scenario", default=None, metavar="NAME|PATH",
              help="Show the values of this scenario (built-in name or YAML file) and where each comes from.")
@set_option
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH", help="Where to write; '-' is stdout.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Plain text for reading, or JSON (equations, parameters, interventions).")
def cli(scenario, overrides, output, fmt):
    """Explain the model: each equation with the claim (1-6) of the paper it encodes, and each parameter
    with its symbol, value, range, prior, claim, paper section and anchor. With --scenario (and --set), each
    value's source: default, scenario or override.

    \b
    Examples:
      $ paperkit disempower-explain
      $ paperkit disempower-explain --scenario early_mitigation --set rho=0 --format json -o explain.json
    """
    from paperkit.core import io
    from paperkit.methods.disempower.run import (
        ExplainSettings,
        execute_explain,
        format_explain,
        prepare_explain,
    )
    from paperkit_cli import runtime

    s = runtime.settings(ExplainSettings)
    result = execute_explain(prepare_explain(s))
    text = format_explain(result) if fmt == "text" else io.dumps_json(result.__dict__) + "\n"
    if io.is_stdio(output):
        options.echo_data(text.rstrip("\n"))
    else:
        io.write_text(output, text)
