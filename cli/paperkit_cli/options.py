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
    by_name = {p.name: p for p in ctx.command.params}
    for name, item in data.items():
        kind = by_name[name].type
        if isinstance(item, list) and hasattr(kind, "to_text"):
            try:   # a run dir's config.yaml keeps K/N and HOST:PORT as lists
                data[name] = item = kind.to_text(tuple(item))
            except (TypeError, ValueError, IndexError):
                pass   # not such a pair: refused below as a list
        _check_config_value(ctx, by_name[name], item, source=value)
    ctx.default_map = {**(ctx.default_map or {}), **data}
    return value


_YAML_KIND = {dict: "a mapping", list: "a list"}


def _check_config_value(ctx: click.Context, param: click.Parameter, value: Any, *, source: str) -> None:
    """Refuse a config value of the wrong YAML type or value before click sees it (exit 2, one line)."""
    from paperkit.core.errors import ConfigError

    key = config_key(param)
    takes_list = isinstance(param.type, ListOf) or getattr(param, "multiple", False) or param.nargs != 1
    if isinstance(value, dict) or (isinstance(value, list) and not takes_list):
        raise ConfigError(f"{source}: '{key}' is {_YAML_KIND[type(value)]}; expected {_describe(param)}")
    if value is None:
        return
    takes_bool = (isinstance(param, click.Option) and param.is_flag) or isinstance(param.type, click.types.BoolParamType)
    items = value if isinstance(value, list) else [value]
    if not takes_bool and any(isinstance(v, bool) for v in items):
        # click would read YAML true as 1 (or "True"); YAML also turns an unquoted yes/no/on/off into a boolean
        raise ConfigError(f"{source}: '{key}' is a YAML boolean; expected {_describe(param)} "
                          "(quote yes/no/on/off to mean text)")
    item_type = param.type.item if isinstance(param.type, ListOf) else param.type
    if isinstance(item_type, click.types.IntParamType):
        # click's INT takes a float and truncates it (5.9 → 5); on the command line "5.9" is refused
        for v in items:
            if isinstance(v, float) and not v.is_integer():
                raise ConfigError(f"{source}: '{key}' = {v!r} is not a whole number; expected {_describe(param)}")
    try:
        param.type_cast_value(ctx, value)
    except click.BadParameter as e:
        raise ConfigError(f"{source}: '{key}': {e.format_message()}") from None
    except (TypeError, ValueError, OverflowError) as e:
        raise ConfigError(f"{source}: '{key}' = {value!r} is invalid ({e}); expected {_describe(param)}") from None


def _describe(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and param.is_flag:
        return "true or false"
    if isinstance(param.type, click.Choice):
        return "one of " + ", ".join(map(str, param.type.choices))
    if isinstance(param.type, ListOf) and param.type.item is not None:
        return f"a list of {param.type.item.name.removesuffix(' range')} values"
    return f"a single {param.type.name.removesuffix(' range')} value"


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


SOURCE_NAMES = {"DEFAULT": "default", "DEFAULT_MAP": "config", "ENVIRONMENT": "env", "COMMANDLINE": "flag",
                "PROMPT": "prompt"}


def resolved_parameters(ctx: click.Context, *, as_text: bool = False) -> dict[str, dict[str, Any]]:
    """Every configuration parameter of the invocation, keyed by its config spelling: value and source.

    ``as_text``: a value whose type parses text into a tuple (K/N, HOST:PORT) is given as that text, so that
    --config reads back what --print-config writes (run dirs keep the tuple, which their resume compares)."""
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
        to_text = getattr(by_name[name].type, "to_text", None) if name in by_name else None
        shown = to_text(value) if as_text and to_text is not None and value is not None else _plain(value)
        out[key] = {"value": shown, "source": SOURCE_NAMES.get(src.name, src.name.lower()) if src else None}
    return out


# ------------------------------------------------------------------------------------------ types
class Shard(click.ParamType):
    """``K/N``: the K-th of N shards (1 <= K <= N), as a tuple (K, N)."""

    name = "shard"

    def convert(self, value, param, ctx) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        try:
            k, n = (int(v) for v in str(value).split("/"))
        except ValueError:
            self.fail(f"'{value}' is not K/N (for example 2/8)", param, ctx)
        if n < 1 or not 1 <= k <= n:
            self.fail(f"'{value}': expected 1 <= K <= N", param, ctx)
        return k, n

    @staticmethod
    def to_text(value: tuple[int, int]) -> str:
        return f"{value[0]}/{value[1]}"


class FiniteFloat(click.ParamType):
    """A float option that refuses NaN and ±inf (click's FLOAT and FloatRange let them through).

    Bounds are optional; ``min_open``/``max_open`` exclude the bound itself. Every float option of
    every command uses this type (``tests/test_meta.py`` checks it).
    """

    name = "float"

    def __init__(self, min: float | None = None, max: float | None = None, *, min_open: bool = False,
                 max_open: bool = False) -> None:
        self.min, self.max, self.min_open, self.max_open = min, max, min_open, max_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        import math

        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number", param, ctx)
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.min is not None and (x < self.min or (self.min_open and x == self.min)) or \
                self.max is not None and (x > self.max or (self.max_open and x == self.max)):
            self.fail(f"{value!r} is not in {self._interval()}", param, ctx)
        return x

    def _interval(self) -> str:
        lo = "-inf" if self.min is None else f"{self.min:g}"
        hi = "inf" if self.max is None else f"{self.max:g}"
        return f"{'(' if self.min_open or self.min is None else '['}{lo}, {hi}{')' if self.max_open or self.max is None else ']'}"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str | None:
        return "FLOAT"

    def __repr__(self) -> str:
        return f"FiniteFloat{self._interval()}"


class ListOf(click.ParamType):
    """A comma-separated list option (``A,B,C``), or a YAML list in a config file; returns a tuple.

    Each item goes through ``item`` (a click type, e.g. ``click.INT`` or :class:`FiniteFloat`) or must
    be one of ``choices``. A bad item is a usage error (exit 2) naming the item.
    """

    name = "list"

    def __init__(self, item: Any = click.STRING, *, choices: Any = None, unique: bool = False,
                 min_items: int = 1) -> None:
        self.item = click.types.convert_type(item)
        self.choices = tuple(choices) if choices is not None else None
        self.unique, self.min_items = unique, min_items

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple:
        if isinstance(value, (list, tuple)):
            raw = list(value)
        elif isinstance(value, str):
            raw = [] if not value.strip() else [v.strip() for v in value.split(",")]
        else:
            raw = [value]
        out = []
        for item in raw:
            if isinstance(item, str) and not item:
                self.fail(f"{value!r} has an empty item", param, ctx)
            if isinstance(item, (list, dict)):
                self.fail(f"item {item!r} is not a single value", param, ctx)
            if self.choices is not None:
                if str(item) not in self.choices:
                    self.fail(f"item '{item}' is not one of {', '.join(self.choices)}", param, ctx)
                out.append(str(item))
                continue
            try:
                out.append(self.item.convert(item, param, ctx))
            except click.BadParameter as e:
                self.fail(f"item '{item}': {e.message}", param, ctx)
        if len(out) < self.min_items:
            self.fail(f"expected at least {self.min_items} item(s)", param, ctx)
        if self.unique and len(set(out)) != len(out):
            dup = next(x for x in out if out.count(x) > 1)
            self.fail(f"item '{dup}' is given twice", param, ctx)
        return tuple(out)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str | None:
        if self.choices is not None:
            return "[" + "|".join(self.choices) + "],..."
        return f"{self.item.name.upper()},..."

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
        from click.shell_completion import CompletionItem

        if self.choices is None:
            return []
        head, _, last = incomplete.rpartition(",")
        prefix = head + "," if head else ""
        return [CompletionItem(prefix + c) for c in self.choices if c.startswith(last)]


def _finite_floats(param: click.Parameter) -> None:
    """Every float option refuses NaN/inf: click's FLOAT and FloatRange become FiniteFloat (same bounds)."""
    t = param.type
    if isinstance(t, click.FloatRange):
        param.type = FiniteFloat(t.min, t.max, min_open=t.min_open, max_open=t.max_open)
    elif isinstance(t, click.types.FloatParamType):
        param.type = FiniteFloat()
    elif isinstance(t, click.Tuple):
        t.types = [FiniteFloat() if type(x) is click.types.FloatParamType else x for x in t.types]


class PaperkitCommand(click.Command):
    """A click command with the shared options and the shared run bookkeeping."""

    # Parameters that name files the command writes (output_options' two, plus the command's own
    # ``writes=``); every other path-like value may be a file it reads.
    OUTPUTS = ("output", "manifest_path")

    def __init__(self, *args: Any, writes: tuple[str, ...] = (), array_formats: tuple[str, ...] = (),
                 **kwargs: Any) -> None:
        self.writes = frozenset((*self.OUTPUTS, *writes))
        self.array_formats = array_formats   # what --output may be besides a table (by its suffix)
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
        for param in self.params:
            _finite_floats(param)
        # PAPERKIT_<CMD>_<OPTION>, spelled like the long option (click's automatic names use the
        # Python parameter name, which can differ: --format vs fmt).
        prefix = "PAPERKIT_" + (self.name or "").replace("-", "_").upper()
        for param in self.params:
            if isinstance(param, click.Option) and param.envvar is None and param.name not in ("help", "print_config"):
                param.envvar = f"{prefix}_{config_key(param).replace('-', '_').upper()}"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # --print-config writes a config to edit: options that are required for a run may be missing.
        if "--print-config" not in args:
            return super().parse_args(ctx, args)
        required = [p for p in self.params if p.required]
        for p in required:
            p.required = False
        try:
            return super().parse_args(ctx, args)
        finally:
            for p in required:
                p.required = True

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

            values = {k: v["value"] for k, v in resolved_parameters(ctx, as_text=True).items() if k != "config"}
            click.echo(yaml.safe_dump(values, sort_keys=False, default_flow_style=False), nl=False)
            return None
        _check_outputs(self, ctx.params)
        if "jobs" in ctx.params:
            from paperkit.core.resources import set_threads

            set_threads(ctx.params["jobs"])
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise PipeClosed() from e


def _check_suffix(option: str, value: str, metavar: str | None) -> None:
    """An output whose metavar names its kind (PATH.npz, FILE.json, PNG) must carry that suffix: dcgnn-gen
    wrote NPZ bytes to x.csv, and a PNG went to plot.txt."""
    from paperkit.core.errors import UsageError
    from paperkit.core.io import is_stdio

    if not metavar or is_stdio(value):
        return
    suffix = ".png" if metavar == "PNG" else os.path.splitext(metavar)[1].lower()
    if suffix and not value.lower().endswith(suffix):
        raise UsageError(f"{option} {value}: expected a {suffix} file ({metavar})")


def _check_outputs(command: PaperkitCommand, params: dict[str, Any]) -> None:
    """Usage error, before any work, for an output the command cannot write well: one that names a file
    another option or argument reads (``-o train.csv`` once replaced the training data), a file of a run dir
    given as input, or another output; a table suffix it cannot write; a suffix its metavar rules out."""
    from paperkit.core.errors import UsageError
    from paperkit.core.io import detect_format, files_named, is_stdio, refuse_overwriting_inputs

    outputs, inputs, kinds = {}, [], {}
    for p in command.params:
        value = params.get(p.name or "")
        if value is None:
            continue
        if p.name in command.writes:
            if isinstance(value, (str, os.PathLike)):
                option = p.opts[-1] if isinstance(p, click.Option) else p.human_readable_name
                outputs[option] = value
                kinds[option] = getattr(p, "metavar", None)
        else:
            inputs += files_named(value)
    output = params.get("output")
    if "fmt" in params and isinstance(output, str) and not is_stdio(output):
        # output_options' table: a suffix it cannot be written as is refused before any work (and plots)
        kind = detect_format(output, params["fmt"], default="jsonl")
        if kind not in ("csv", "tsv", "jsonl", "json", *command.array_formats):
            raise UsageError(f"{output}: a table cannot be written as '{kind}'; use .csv, .tsv, .jsonl or .json"
                             + (f" (or .{', .'.join(command.array_formats)})" if command.array_formats else ""))
    if outputs:
        refuse_overwriting_inputs(outputs, inputs)
    for option, value in outputs.items():
        _check_suffix(option, os.fspath(value), kinds[option])


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

# For commands whose one result is a JSON object (no table formats to choose from).
json_output_options = _compose(
    click.option("-o", "--output", default="-", show_default=True, metavar="PATH.json",
                 help="Where to write the JSON result; '-' is stdout."),
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

# More threads than this only crashes (numba/OpenMP segfaulted at -j 100000000 after a minute of setup).
MAX_JOBS = 1024
JOBS = click.IntRange(0, MAX_JOBS)

jobs_option = click.option("--jobs", "-j", type=JOBS, default=0, show_default=True,
                           help="Worker threads/processes (numba, torch, pools); 0 means one per CPU core "
                                "(under make -jN, the cores divided by N). Results do not depend on it.")


def seeds_option(default: str = "0,1,2", help: str = "Seeds to repeat the run over (a list: 0,1,2).") -> Callable:
    """``--seeds 0,1,2``: always a list (a count of seeds is ``--n-seeds N``)."""
    return click.option("--seeds", type=ListOf(click.IntRange(0, 2**63 - 1), unique=True), default=default,
                        show_default=True, metavar="S1,S2,...", help=help)


def current_context() -> click.Context:
    return click.get_current_context()


def report(text: str) -> None:
    """A human-readable summary on stderr, unless quieted (``-q`` on the group or the command)."""
    if state.settings.get("quiet") or not text:
        return
    click.echo(text.rstrip("\n"), err=True)


def report_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]], *, title: str | None = None,
                 footer: str | None = None) -> None:
    """An aligned table on stderr. ``columns`` are ``(key, header, format spec)``; text left-aligned,
    numbers right-aligned; a missing or None cell shows '-'."""
    if state.settings.get("quiet"):
        return
    cells = []
    for r in rows:
        line = []
        for key, _, spec in columns:
            v = r.get(key)
            line.append("-" if v is None else format(v, spec) if spec else str(v))
        cells.append(line)
    numeric = [all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in rows if r.get(k) is not None)
               for k, _, _ in columns]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, (_, h, _) in enumerate(columns)]

    def fmt(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    lines = ([title] if title else []) + [fmt([h for _, h, _ in columns])] + [fmt(c) for c in cells]
    report("\n".join(lines + ([footer] if footer else [])))


def echo_data(line: str) -> None:
    """One line of data on stdout (logs and progress go to stderr)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
