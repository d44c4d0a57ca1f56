"""Error family shared by the library and the CLI.

The library raises these with a message that names the file, field and what was expected; the CLI
turns them into one stderr line and an exit code (see the ``EXIT_*`` constants, documented in the
README and the man pages).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_UNEXPECTED = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class PaperkitError(Exception):
    """Base of every error paperkit reports to a user without a traceback (exit 1)."""

    exit_code = EXIT_ERROR


class UsageError(PaperkitError):
    """Options that do not make sense together, or an output that cannot be written as asked (exit 2)."""

    exit_code = EXIT_USAGE


class ConfigError(UsageError):
    """A configuration file, environment variable or config key is invalid (exit 2)."""


class InputError(PaperkitError):
    """A file or the data in it is missing, malformed or out of range (exit 3)."""

    exit_code = EXIT_INPUT


class ConvergenceError(PaperkitError):
    """A solver or optimiser failed in a way the user must know about (exit 1)."""


class ResourceError(PaperkitError):
    """A request would exceed a memory/time limit, or a device is not available (exit 1)."""


class RunDirError(PaperkitError):
    """A run directory is finished, foreign, or was made with different parameters (exit 1)."""
