"""The ``paperkit`` multi-command: a lazy click group plus the error handling shared by every executable.

Commands are imported only when used (``paperkit --help`` imports the small command modules, which
import nothing heavy at top level). ``run_cli`` turns errors into one stderr line and an exit code:

    0 ok · 1 known error · 2 usage/config error · 3 bad input · 70 unexpected · 130 interrupted ·
    141 stdout closed early (e.g. ``| head``)
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from paperkit_cli import registry, state
from paperkit_cli.options import GLOBAL_FLAGS_KEY, PipeClosed


class LazyGroup(click.Group):
    """A group whose commands come from the static registry and are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return registry.available_commands()

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        state.settings["command"] = name  # so errors raised while parsing are prefixed with the command
        return name, command, rest

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the generated index (``_short_help.py``) instead of importing every
        command module (each costs a few ms of click decorators); click's own listing if it is stale."""
        try:
            from paperkit_cli._short_help import SHORT_HELP
        except ImportError:
            SHORT_HELP = {}
        names = self.list_commands(ctx)
        if not names or any(n not in SHORT_HELP for n in names):
            return super().format_commands(ctx, formatter)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            explicit, text = SHORT_HELP[name]
            rows.append((name, text if explicit else click.utils.make_default_short_help(text, limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in registry.COMMANDS:
            return None
        if not registry.is_available(name):
            paper = registry.PAPER_OF.get(name)
            what = f" ({paper.title})" if paper else ""
            raise click.UsageError(f"'{name}'{what} is planned but not built yet; see 'paperkit papers'")
        module = importlib.import_module(registry.module_name(name))
        return module.cli


def _version() -> str:
    from paperkit import __version__

    return __version__


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "PAPERKIT",
                      "max_content_width": 100},
    epilog="Run 'paperkit papers' for the paper behind each command, 'paperkit COMMAND --help' for details, "
           "and 'man paperkit-COMMAND' once the man pages are installed (see README).",
)
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr; no progress bars.")
@click.option("-v", "--verbose", count=True, help="More log detail on stderr (-vv for debug).")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors (also PAPERKIT_DEBUG=1).")
@click.version_option(version=None, package_name="paperkit-icml25", prog_name="paperkit",
                      message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, quiet: bool, verbose: int, debug: bool) -> None:
    """paperkit: ICML 2025 papers as command-line tools.

    Each command runs one paper's method for real on your files: it reads CSV/TSV/JSONL/NPY inputs,
    writes results to files or stdout (data only; logs and progress go to stderr), and records a
    manifest of what produced them.

    \b
    Examples:
      $ paperkit papers
      $ paperkit conformal-cv --help
    """
    ctx.meta[GLOBAL_FLAGS_KEY] = {"quiet": quiet, "verbose": verbose, "debug": debug}
    state.apply(quiet=quiet, verbose=verbose, debug=debug)


def _fail(prefix: str, message: str, code: int) -> NoReturn:
    line = " ".join(str(message).split())  # always one line
    try:
        sys.stderr.write(f"{prefix}: error: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(code)


def _interrupted(e: BaseException) -> bool:
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _forget_unhandled_interrupt() -> None:
    """CPython 3.11 sets a process-wide flag whenever exec() or eval() of a *string* ends in KeyboardInterrupt,
    even if the interrupt is caught afterwards; at exit the flag makes the interpreter kill itself with SIGINT,
    which overrides our exit status (a parent sees -2, not 130). A Ctrl-C or SIGTERM that lands while a library
    builds a dataclass or namedtuple (exec'd source, e.g. during a lazy import) sets it. We have caught and
    reported the interrupt, so clear the flag. (Its home moved in later versions; there this is a no-op.)"""
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _interrupted_exit(prefix: str) -> NoReturn:
    from paperkit.core.errors import EXIT_INTERRUPTED

    _forget_unhandled_interrupt()
    _fail(prefix, "interrupted; finished outputs were kept, unfinished ones discarded", EXIT_INTERRUPTED)


def _quiet_stdout() -> None:
    # After the reader of stdout has gone, point stdout at /dev/null so the final flush cannot raise.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler, `timeout`, `kill`) unwinds like Ctrl-C: the run stops with exit 130 and its
    message, half-written files are removed, and pools and Flower processes are stopped on the way out.
    Its default action killed the process where it stood, leaving temporary files and orphaned workers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_cli(command: click.Command, prog_name: str, args: list[str] | None = None,
            auto_envvar_prefix: str = "PAPERKIT") -> NoReturn:
    """Run a click command with paperkit's error policy and exit."""
    from paperkit.core.errors import EXIT_BROKEN_PIPE, EXIT_UNEXPECTED, PaperkitError

    argv = sys.argv[1:] if args is None else list(args)
    state.settings.update(quiet=False, verbose=0, debug=False, command=None, argv=[prog_name, *argv])

    def prefix() -> str:
        cmd = state.settings.get("command")
        return f"paperkit {cmd}" if cmd and prog_name == "paperkit" else prog_name

    def debugging() -> bool:
        return state.settings["debug"] or state.debug_from_env() or "--debug" in argv

    def fail(where: str, message: str, code: int) -> NoReturn:
        # --debug adds the traceback; it never changes the exit code.
        if debugging():
            import traceback

            traceback.print_exc(file=sys.stderr)
        _fail(where, message, code)

    try:
        with _sigterm_as_interrupt():
            rv = command.main(args=argv, prog_name=prog_name, standalone_mode=False,
                              auto_envvar_prefix=auto_envvar_prefix)
            sys.stdout.flush()
        sys.exit(rv if isinstance(rv, int) else 0)
    except click.exceptions.UsageError as e:
        path = e.ctx.command_path if e.ctx is not None else prog_name
        hint = f" (see '{path} --help')" if e.ctx is not None else ""
        fail(path, e.format_message() + hint, e.exit_code)
    except click.exceptions.ClickException as e:  # e.g. FileError
        fail(prefix(), e.format_message(), e.exit_code)
    except PaperkitError as e:
        fail(prefix(), str(e), e.exit_code)
    except (PipeClosed, BrokenPipeError):
        _quiet_stdout()
        sys.exit(EXIT_BROKEN_PIPE)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        if isinstance(e.__cause__, EOFError):
            # click turns every EOFError into Abort, as for Ctrl-D at a prompt; it is an input nobody caught
            fail(prefix(), f"unexpected EOFError: {e.__cause__ or 'end of input'} (this is a bug in paperkit; "
                 "rerun with --debug for the traceback)", EXIT_UNEXPECTED)
        _interrupted_exit(prefix())
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the last line of defence
        if _interrupted(e):  # a Ctrl-C that a library re-raised as its own error (e.g. inside torch.save)
            _interrupted_exit(prefix())
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        fail(prefix(), f"unexpected {type(e).__name__}{': ' + msg if msg else ''} "
              "(this is a bug in paperkit; rerun with --debug for the traceback)", EXIT_UNEXPECTED)


def main(args: list[str] | None = None) -> NoReturn:
    """Entry point of the ``paperkit`` executable."""
    run_cli(cli, "paperkit", args)


def run_command(name: str, args: list[str] | None = None) -> NoReturn:
    """Entry point of a ``paperkit-<name>`` executable: the same click command, run on its own."""
    command = cli.get_command(click.Context(cli, info_name="paperkit"), name)
    if command is None:
        _fail(f"paperkit-{name}", f"unknown command '{name}'", 2)
    prefix = "PAPERKIT_" + name.replace("-", "_").upper()
    run_cli(command, f"paperkit-{name}", args, auto_envvar_prefix=prefix)


def load_command(name: str) -> Any:
    """The click command object for ``name`` (for tests and the doc generator)."""
    return cli.get_command(click.Context(cli, info_name="paperkit"), name)
