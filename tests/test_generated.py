"""completions/ and man/ are generated from the click tree and committed: they must be current."""

from paperkit_cli import gen, registry

from .conftest import ROOT


def test_generated_files_are_current():
    stale = gen.stale(ROOT)
    assert not stale, f"stale generated files (run 'make completions man'): {stale}"


def test_man_pages_cover_every_command_and_are_roff():
    pages = gen.man_pages()
    assert "man/paperkit.1" in pages
    for name in registry.available_commands():
        page = pages[f"man/paperkit-{name}.1"]
        assert page.startswith(".TH ") and ".SH OPTIONS" in page and ".SH EXIT STATUS" in page
        assert "Examples:" in page
    top = pages["man/paperkit.1"]
    for name in registry.available_commands():
        assert f"\\fB{name}" in top or f".B {name.replace('-', chr(92) + '-')}" in top


def test_completion_scripts_name_every_executable():
    files = gen.completions()
    bash = files["completions/paperkit.bash"]
    assert "_PAPERKIT_COMPLETE" in bash
    for name in registry.available_commands():
        var = "_PAPERKIT_" + name.replace("-", "_").upper() + "_COMPLETE"
        assert var in bash and f"completions/zsh/_paperkit-{name}" in files


def test_bash_completion_really_completes(pk_bin):
    """Drive click's completion protocol as bash would: complete 'paperkit pa'."""
    r = pk_bin(None, env={"_PAPERKIT_COMPLETE": "bash_complete", "COMP_WORDS": "paperkit pa", "COMP_CWORD": "1"})
    assert r.exit_code == 0 and "papers" in r.stdout


def test_help_command_index_lists_what_importing_every_command_would():
    """``paperkit --help`` reads the generated index; the listing must equal click's own, which imports
    every command module, at narrow and wide terminals."""
    import click

    from paperkit_cli.main import cli

    for width in (60, 80, 100, 200):
        ctx = click.Context(cli, info_name="paperkit", max_content_width=width)
        fast, slow = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
        cli.format_commands(ctx, fast)
        click.Group.format_commands(cli, ctx, slow)
        assert fast.getvalue() == slow.getvalue()
        assert all(f"{n} " in fast.getvalue() for n in registry.available_commands())
