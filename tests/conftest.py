"""Shared test helpers.

TRITON_INTERPRET must be set before any Triton kernel module is imported, so it is set here first:
on CPU the Triton kernels run in the interpreter; on a GPU machine set TRITON_INTERPRET=0 to compile.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("PAPERKIT_PROGRESS", "never")
os.environ.setdefault("MPLBACKEND", "Agg")

import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def stdout_bytes(self) -> bytes:
        return self.stdout.encode()


def _code(e: SystemExit) -> int:
    return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


_OPTION = re.compile(r"(?<![\w/.-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# Errors that name another command's option without naming that command (they say how a file was made).
_NAMED_ELSEWHERE = {"rgtg-generate": {"--loss"}}


def _options(command) -> set[str]:
    import click

    return {o for p in command.params if isinstance(p, click.Option) for o in [*p.opts, *p.secondary_opts]}


def _check_named_options(command: str, args: list[str], stderr: str) -> None:
    """An error that tells the user to use an option must name one that exists: every ``--option`` in the
    error line that the user did not type belongs to ``command``, to ``paperkit`` itself, or to a command the
    line names ("refit with conformal-cv --save-model")."""
    from paperkit_cli import registry
    from paperkit_cli.main import cli, load_command

    cmd = load_command(command) if command in registry.available_commands() else None
    if cmd is None:  # not a command (paperkit's own options, or an unknown or planned name): nothing to check
        return
    line = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    known = _options(cmd) | _options(cli) | {"--help"} | _NAMED_ELSEWHERE.get(command, set())
    for other in registry.available_commands():
        if re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", line):
            known |= _options(load_command(other))
    typed = {a.split("=", 1)[0] for a in args}
    unknown = sorted(set(_OPTION.findall(line)) - known - typed)
    assert not unknown, f"paperkit {command}'s error names {unknown}, which it has no option for: {line}"


@pytest.fixture
def pk():
    """Run ``paperkit ARGS...`` in-process through the real entry point (error policy included)."""
    from paperkit_cli.main import main

    def run(*args: str, input: str | bytes | None = None, env: dict | None = None) -> Result:
        runner = CliRunner()
        with runner.isolation(input=input, env=env) as (out, err, _):
            try:
                main([str(a) for a in args])
                code = 0
            except SystemExit as e:
                code = _code(e)
            stdout = out.getvalue().decode(errors="replace")
            stderr = err.getvalue().decode(errors="replace")
        if code in (2, 3) and args:
            _check_named_options(str(args[0]), [str(a) for a in args], stderr)
        return Result(code, stdout, stderr)

    return run


@pytest.fixture
def pk_bin():
    """Run a command as a real subprocess: ``pk_bin("conformal-cv", ...)`` or ``pk_bin(None, "--help")``.

    Uses the installed console scripts when they sit beside this Python, else ``python -m paperkit_cli``.
    """

    def run(command: str | None, *args: str, input: str | bytes | None = None, env: dict | None = None,
            timeout: float = 600, cwd: str | Path | None = None) -> Result:
        full_env = {**os.environ, **(env or {})}
        bindir = Path(sys.executable).parent
        if command is None:
            exe = bindir / "paperkit"
            argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "paperkit_cli"]
        else:
            exe = bindir / f"paperkit-{command}"
            argv = [str(exe)] if exe.exists() else [
                sys.executable, "-c", f"from paperkit_cli.main import run_command; run_command({command!r})"]
        proc = subprocess.run(argv + [str(a) for a in args], input=input.encode() if isinstance(input, str) else input,
                              capture_output=True, env=full_env, timeout=timeout, cwd=cwd)
        return Result(proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"))

    return run


@pytest.fixture(autouse=True)
def _fresh_paperkit_logger():
    """Each test starts with the library's logger as a fresh process has it (the CLI reconfigures it)."""
    yield
    import logging

    logger = logging.getLogger("paperkit")
    logger.handlers = [h for h in logger.handlers if not getattr(h, "_paperkit", False)]
    logger.propagate = True
    logger.setLevel(logging.NOTSET)
    logging.captureWarnings(False)
    warn_logger = logging.getLogger("py.warnings")
    warn_logger.handlers = [h for h in warn_logger.handlers if not getattr(h, "_paperkit", False)]
    warn_logger.propagate = True


@pytest.fixture
def shared_data():
    """``../shared/data`` when present; tests using it skip cleanly when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("shared data folder not present")
    return SHARED_DATA


def pytest_collection_modifyitems(config, items):
    if not any("gpu" in item.keywords for item in items):
        return
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except Exception:  # torch missing or broken: no GPU tests
        has_cuda = False
    if not has_cuda:
        skip = pytest.mark.skip(reason="needs CUDA")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
