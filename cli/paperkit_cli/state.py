"""Process-wide UI state set once per invocation: verbosity, debug and the command's name.

Group-level flags (``paperkit -q cmd``) and command-level flags (``paperkit cmd -q``) combine (the
command merges them before calling :func:`apply`); ``PAPERKIT_DEBUG=1`` also turns on tracebacks.
"""

from __future__ import annotations

import os
import sys

settings: dict = {"quiet": False, "verbose": 0, "debug": False, "command": None, "argv": None}


def debug_from_env() -> bool:
    return os.environ.get("PAPERKIT_DEBUG", "").lower() not in ("", "0", "false", "no")


def _make_handler():
    import logging

    class _StderrHandler(logging.Handler):
        """Writes to whatever ``sys.stderr`` is at emit time (test runners swap it)."""

        _paperkit = True

        def emit(self, record: logging.LogRecord) -> None:
            try:
                sys.stderr.write(self.format(record) + "\n")
            except (OSError, ValueError):
                pass

    class _Formatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            cmd = settings["command"]
            prefix = f"paperkit {cmd}" if cmd else "paperkit"
            level = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
            return f"{prefix}: {level}{record.getMessage()}"

    handler = _StderrHandler()
    handler.setFormatter(_Formatter())
    return handler


def _warning_line(message: str) -> str:
    # logging.captureWarnings hands us "file:line: Category: text\n  source line"; keep "Category: text".
    first = message.strip().splitlines()[0] if message.strip() else message
    parts = first.split(": ", 1)
    text = parts[1] if len(parts) == 2 and ":" in parts[0] else first
    cmd = settings["command"]
    return f"{'paperkit ' + cmd if cmd else 'paperkit'}: warning: {text}"


def _make_warning_formatter():
    import logging

    class WarningFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return _warning_line(record.getMessage())

    return WarningFormatter()


def apply(*, quiet: bool = False, verbose: int = 0, debug: bool = False, command: str | None = None) -> None:
    settings.update(quiet=bool(quiet), verbose=int(verbose or 0), debug=bool(debug) or debug_from_env())
    if command:
        settings["command"] = command
    import logging  # here, not at the top: --help never needs it

    level = logging.ERROR if settings["quiet"] else (
        logging.DEBUG if settings["verbose"] >= 2 else
        logging.INFO if settings["verbose"] == 1 else logging.WARNING)
    logger = logging.getLogger("paperkit")
    if not any(getattr(h, "_paperkit", False) for h in logger.handlers):
        logger.addHandler(_make_handler())
        logger.propagate = False
    logger.setLevel(level)
    # Python warnings (numpy's RuntimeWarnings, library deprecations) become one prefixed line each
    # instead of raw multi-line warnings; -q hides them.
    logging.captureWarnings(True)
    warn_logger = logging.getLogger("py.warnings")
    if not any(getattr(h, "_paperkit", False) for h in warn_logger.handlers):
        handler = _make_handler()
        handler.setFormatter(_make_warning_formatter())
        warn_logger.addHandler(handler)
        warn_logger.propagate = False
    warn_logger.setLevel(logging.ERROR if settings["quiet"] else logging.WARNING)
    from paperkit.core import progress

    progress.set_quiet(settings["quiet"])
