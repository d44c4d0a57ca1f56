"""``paperkit completion SHELL``: print the shell completion script (for pip users without the repo)."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("completion", short_help="Print the bash, zsh or fish completion script.")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def cli(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish) on stdout.

    The same scripts are committed in the repository's completions/ folder; this command gives them
    to anyone who installed paperkit with pip. It covers `paperkit` and every `paperkit-<command>`.

    \b
    Examples:
      $ paperkit completion bash > ~/.local/share/bash-completion/completions/paperkit
      $ paperkit completion zsh > "${fpath[1]}/_paperkit"
      $ paperkit completion fish > ~/.config/fish/completions/paperkit.fish
    """
    from paperkit_cli import gen

    files = gen.completions()
    if shell == "zsh":
        text = "\n".join(v for k, v in sorted(files.items()) if k.startswith("completions/zsh/"))
    else:
        text = files[f"completions/paperkit.{shell}"]
    click.echo(text, nl=not text.endswith("\n"))
