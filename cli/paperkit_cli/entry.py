"""Console-script targets for the per-command executables: ``paperkit-<cmd> = paperkit_cli.entry:<cmd>``.

Any registered command name (dashes as underscores) resolves to a function that runs that command, so
adding an executable is one line in ``pyproject.toml``.
"""

from __future__ import annotations

from collections.abc import Callable


def __getattr__(attr: str) -> Callable[[], None]:
    from paperkit_cli import registry

    name = attr.replace("_", "-")
    if name not in registry.COMMANDS:
        raise AttributeError(f"no paperkit command '{name}'")

    def entry() -> None:
        from paperkit_cli.main import run_command

        run_command(name)

    entry.__name__ = attr
    return entry
