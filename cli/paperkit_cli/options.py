"""Shared command class and option bundles, so every command spells the common options the same way.

Usage in a command module::

    from paperkit_cli import options

    @options.command("conformal-cv")
    @click.option(...)
    @options.seed_option
    @options.output_options
    def cli(..., seed, output, fmt):
        ...

``options.command`` adds ``--config``/``--print-config`` and ``-q``/``-v``/``--debug`` to every command.
Only click and the standard library are imported here: ``paperkit --help`` must stay light.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from paperkit_cli import state

GLOBAL_FLAGS_KEY = "paperkit.global_flags"
META_KEY = "paperkit.meta"

# Options every command has that steer the run itself and are not part of its configuration.
META_PARAMS = frozenset({"config", "print_config", "quiet", "verbose", "debug", "help"})


class PipeClosed(Exception):
    """stdout's reader went away (``| head``); raised instead of BrokenPipeError so click cannot eat it."""


def config_key(param: click.Parameter) -> str:
    """How a parameter is spelled in config files, --print-config and manifests: its long option name."""
    longs = [o for o in getattr(param, "opts", []) if o.startswith("--")]
    return longs[0][2:] if longs else (param.name or "").replace("_", "-")


def _config_keys(command: click.Command) -> dict[str, str]:
    """Accepted config spellings → parameter name (the long option name and the parameter name)."""
    keys: dict[str, str] = {}
    for p in command.params:
        if p.name and p.name not in META_PARAMS:
            keys[config_key(p)] = p.name
            keys[p.name] = p.name
    return keys


def _load_config(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from paperkit.core.config import load_config

    state.settings["command"] = ctx.command.name
    shown = [config_key(p) for p in ctx.command.params if p.name and p.name not in META_PARAMS]
    data = load_config(value, _config_keys(ctx.command), command=ctx.command.name or "", shown=shown)
    ctx.default_map = {**(ctx.default_map or {}), **data}
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


SOURCE_NAMES = {"DEFAULT": "default", "DEFAULT_MAP": "config", "ENVIRONMENT": "env", "COMMANDLINE": "flag",
                "PROMPT": "prompt"}


def resolved_parameters(ctx: click.Context) -> dict[str, dict[str, Any]]:
    """Every configuration parameter of the invocation, keyed by its config spelling: value and source."""
    values = dict(ctx.params)
    config = ctx.meta.get(META_KEY, {}).get("config", values.get("config"))
    if config is not None:
        values["config"] = config
    by_name = {p.name: p for p in ctx.command.params}
    out = {}
    for name, value in values.items():
        if name in META_PARAMS - {"config"}:
            continue
        src = ctx.get_parameter_source(name)
        key = config_key(by_name[name]) if name in by_name else name
        out[key] = {"value": _plain(value), "source": SOURCE_NAMES.get(src.name, src.name.lower()) if src else None}
    return out


class PaperkitCommand(click.Command):
    """A click command with the shared options and the shared run bookkeeping."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {}).setdefault("help_option_names", ["-h", "--help"])
        kwargs["context_settings"].setdefault("max_content_width", 100)
        super().__init__(*args, **kwargs)
        self.params.extend([
            click.Option(["--config"], type=click.Path(dir_okay=False), is_eager=True, expose_value=True,
                         callback=_load_config, metavar="FILE",
                         help="Read option values from a YAML file (keys are option names)."),
            click.Option(["--print-config"], is_flag=True,
                         help="Print the resolved options as YAML (usable with --config) and exit."),
            click.Option(["-q", "--quiet"], is_flag=True, help="Only errors on stderr; no progress bars."),
            click.Option(["-v", "--verbose"], count=True, help="More log detail on stderr (-vv for debug)."),
            click.Option(["--debug"], is_flag=True, help="Show tracebacks for errors."),
        ])
        # PAPERKIT_<CMD>_<OPTION>, spelled like the long option (click's automatic names use the
        # Python parameter name, which can differ: --format vs fmt).
        prefix = "PAPERKIT_" + (self.name or "").replace("-", "_").upper()
        for param in self.params:
            if isinstance(param, click.Option) and param.envvar is None and param.name not in ("help", "print_config"):
                param.envvar = f"{prefix}_{config_key(param).replace('-', '_').upper()}"

    def invoke(self, ctx: click.Context) -> Any:
        group_flags = ctx.find_root().meta.get(GLOBAL_FLAGS_KEY, {})
        own = ctx.params
        state.apply(quiet=own.get("quiet", False) or group_flags.get("quiet", False),
                    verbose=max(own.get("verbose", 0), group_flags.get("verbose", 0)),
                    debug=own.get("debug", False) or group_flags.get("debug", False), command=self.name)
        import time

        ctx.meta["paperkit.start_time"] = time.perf_counter()
        # The shared options steer the run; the command's own function never sees them.
        ctx.meta[META_KEY] = {k: ctx.params.pop(k) for k in list(ctx.params) if k in META_PARAMS}
        if ctx.meta[META_KEY].get("print_config"):
            import yaml

            values = {k: v["value"] for k, v in resolved_parameters(ctx).items() if k != "config"}
            click.echo(yaml.safe_dump(values, sort_keys=False, default_flow_style=False), nl=False)
            return None
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise PipeClosed() from e


def command(name: str, **kwargs: Any) -> Callable[[Callable[..., Any]], PaperkitCommand]:
    """``click.command`` with :class:`PaperkitCommand`."""
    return click.command(name, cls=PaperkitCommand, **kwargs)


# ------------------------------------------------------------------------------------- option bundles
def _compose(*decorators: Callable) -> Callable:
    def apply(f: Callable) -> Callable:
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


seed_option = click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
                           help="Seed for every random choice of the run; same seed, same result.")

output_options = _compose(
    click.option("-o", "--output", default="-", show_default=True, metavar="PATH",
                 help="Where to write the result; '-' is stdout. The format follows the suffix."),
    click.option("--format", "fmt", type=click.Choice(["csv", "tsv", "jsonl", "json"]), default=None,
                 help="Output format when the suffix does not say (stdout defaults to JSON lines)."),
    click.option("--manifest", "manifest_path", default=None, metavar="PATH",
                 help="Where to write the manifest [default: <output>.manifest.json; none for stdout]."),
)

run_dir_options = _compose(
    click.option("--run-dir", required=True, type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
                 help="Folder for all outputs: results, plots, checkpoints, config.yaml, manifest.json."),
    click.option("--resume", is_flag=True, help="Continue an unfinished run from its checkpoints."),
    click.option("--force", is_flag=True, help="Overwrite a finished or unfinished run in --run-dir."),
)

device_option = click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                             show_default=True, help="Where torch computes; auto picks CUDA when available.")

jobs_option = click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, show_default=True,
                           help="Worker threads/processes; 0 means one per CPU core.")


def current_context() -> click.Context:
    return click.get_current_context()


def echo_data(line: str) -> None:
    """One line of data on stdout (logs and progress go to stderr)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
