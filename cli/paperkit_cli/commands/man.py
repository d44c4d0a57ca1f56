"""``paperkit man [COMMAND]``: print a man page, or install them all (for pip users without the repo)."""

from __future__ import annotations

from pathlib import Path

import click

from paperkit_cli import options


@options.command("man", writes=("install_dir",), short_help="Print a man page, or install all of them.")
@click.argument("command", required=False)
@click.option("--install", "install_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Write every page into DIR (a man1 folder on your MANPATH) instead of printing.")
def cli(command: str | None, install_dir: Path | None) -> None:
    """Print the roff man page of COMMAND (or of paperkit itself) on stdout, or install every page.

    The pages are the ones committed in the repository's man/ folder, generated from the same
    command tree, so they always match the installed version.

    \b
    Examples:
      $ paperkit man conformal-cv | man -l -
      $ paperkit man --install ~/.local/share/man/man1 && man paperkit-kd-rank
    """
    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit_cli import gen, registry

    pages = gen.man_pages()
    if install_dir is not None:
        if command:
            raise UsageError("give either a COMMAND to print or --install DIR, not both")
        for rel, text in sorted(pages.items()):
            io.write_text(install_dir / Path(rel).name, text)
        options.report(f"wrote {len(pages)} man pages to {install_dir}")
        return
    key = "man/paperkit.1" if not command else f"man/paperkit-{command}.1"
    if key not in pages:
        raise UsageError(f"no man page for '{command}'; commands: {', '.join(registry.available_commands())}")
    click.echo(pages[key], nl=False)
