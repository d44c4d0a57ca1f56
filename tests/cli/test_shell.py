"""The CLI shell: error policy and exit codes, config precedence, print-config, the papers table."""

import json
import os
import subprocess
import sys

import click
import pytest

from paperkit.core.errors import ConvergenceError, InputError, UsageError
from paperkit_cli import options, runtime
from paperkit_cli.main import run_cli

from ..conftest import ROOT


def _cmd(action):
    @options.command("probe")
    @click.option("--alpha", type=float, default=1.0, show_default=True)
    @click.option("--n-folds", type=click.IntRange(2, 100), default=5)
    @click.option("--name", default="x")
    @options.seed_option
    def cli(alpha, n_folds, name, seed):
        """Probe command for tests."""
        action(alpha=alpha, n_folds=n_folds, name=name, seed=seed)

    return cli


def _run(command, args, capsys, env=None, monkeypatch=None):
    if env and monkeypatch:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit) as e:
        run_cli(command, "paperkit-probe", args, auto_envvar_prefix="PAPERKIT_PROBE")
    out, err = capsys.readouterr()
    return e.value.code, out, err


def _raise(exc):
    def action(**_):
        raise exc

    return action


@pytest.mark.parametrize("exc, code", [
    (InputError("data.csv: column 'y' has 3 NaN values (rows 4, 9, 17); expected finite numbers"), 3),
    (UsageError("--a and --b cannot be used together"), 2),
    (ConvergenceError("solver did not converge in 10 iterations"), 1),
])
def test_known_errors_one_line_and_exit_code(capsys, exc, code):
    rc, out, err = _run(_cmd(_raise(exc)), [], capsys)
    assert rc == code and out == ""
    assert err.count("\n") == 1 and err.startswith("paperkit-probe: error: ") and str(exc) in err


def test_unexpected_error_is_70_and_debug_shows_traceback(capsys, monkeypatch):
    rc, out, err = _run(_cmd(_raise(ZeroDivisionError("boom"))), [], capsys)
    assert rc == 70 and "unexpected ZeroDivisionError: boom" in err and "--debug" in err
    assert err.count("\n") == 1
    # --debug (or PAPERKIT_DEBUG=1) adds the traceback and keeps the exit code.
    rc, out, err = _run(_cmd(_raise(ZeroDivisionError("boom"))), ["--debug"], capsys)
    assert rc == 70 and "Traceback" in err and "ZeroDivisionError: boom" in err
    monkeypatch.setenv("PAPERKIT_DEBUG", "1")
    rc, out, err = _run(_cmd(_raise(InputError("x"))), [], capsys)
    assert rc == 3 and "Traceback" in err


def test_usage_error_out_of_range_is_one_line_exit_2(capsys):
    rc, out, err = _run(_cmd(lambda **_: None), ["--n-folds", "1"], capsys)
    assert rc == 2 and err.count("\n") == 1
    assert "Invalid value for '--n-folds'" in err and "1 is not in the range" in err


def test_interrupt_is_130(capsys):
    rc, _, err = _run(_cmd(_raise(KeyboardInterrupt())), [], capsys)
    assert rc == 130 and "interrupted" in err


def test_config_precedence_default_file_env_flag(tmp_path, capsys, monkeypatch):
    seen = {}
    cmd = _cmd(lambda **kw: seen.update(kw, params=runtime.parameters()))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("alpha: 2.0\nn-folds: 7\nname: from-file\n")

    _run(cmd, [], capsys)
    assert seen["alpha"] == 1.0 and seen["params"]["alpha"]["source"] == "default"
    _run(cmd, ["--config", str(cfg)], capsys)
    assert (seen["alpha"], seen["n_folds"]) == (2.0, 7) and seen["params"]["alpha"]["source"] == "config"
    _run(cmd, ["--config", str(cfg)], capsys, env={"PAPERKIT_PROBE_ALPHA": "3.0"}, monkeypatch=monkeypatch)
    assert seen["alpha"] == 3.0 and seen["params"]["alpha"]["source"] == "env"
    assert seen["n_folds"] == 7
    _run(cmd, ["--config", str(cfg), "--alpha", "4"], capsys)
    assert seen["alpha"] == 4.0 and seen["params"]["alpha"]["source"] == "flag"
    assert seen["params"]["name"] == {"value": "from-file", "source": "config"}
    assert seen["params"]["config"]["value"] == str(cfg)


def test_unknown_config_key_and_bad_yaml(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("alpah: 2\n")
    rc, out, err = _run(_cmd(lambda **_: None), ["--config", str(cfg)], capsys)
    assert rc == 2 and "unknown key 'alpah'" in err and "did you mean 'alpha'" in err and err.count("\n") == 1
    cfg.write_text("alpha: [2\n")
    rc, out, err = _run(_cmd(lambda **_: None), ["--config", str(cfg)], capsys)
    assert rc == 2 and "invalid YAML at line" in err and err.count("\n") == 1
    rc, out, err = _run(_cmd(lambda **_: None), ["--config", str(tmp_path / "missing.yaml")], capsys)
    assert rc == 2 and "no such file" in err
    cfg.write_text("n-folds: 1\n")  # a config value is validated like a flag
    rc, out, err = _run(_cmd(lambda **_: None), ["--config", str(cfg)], capsys)
    assert rc == 2 and "--n-folds" in err


def test_print_config_round_trips(tmp_path, capsys):
    seen = {}
    cmd = _cmd(lambda **kw: seen.update(kw))
    rc, out, _ = _run(cmd, ["--alpha", "0.25", "--name", "zz", "--print-config"], capsys)
    assert rc == 0 and not seen  # printing the config runs nothing
    import yaml

    assert yaml.safe_load(out) == {"alpha": 0.25, "n-folds": 5, "name": "zz", "seed": 0}
    (tmp_path / "p.yaml").write_text(out)
    _run(cmd, ["--config", str(tmp_path / "p.yaml")], capsys)
    assert seen["alpha"] == 0.25 and seen["name"] == "zz"


def test_manifest_beside_output(tmp_path, capsys):
    out_file = tmp_path / "res.csv"

    def action(**kw):
        from paperkit.core import tables

        tables.write_table(out_file, {"a": [1.0]})
        runtime.write_manifest(inputs=[], output=str(out_file), seed=kw["seed"])

    rc, _, _ = _run(_cmd(action), ["--seed", "4", "--alpha", "0.5"], capsys)
    assert rc == 0
    m = json.loads((tmp_path / "res.csv.manifest.json").read_text())
    assert m["seed"] == 4 and m["parameters"]["alpha"] == {"value": 0.5, "source": "flag"}
    assert m["outputs"][0]["path"] == str(out_file) and len(m["outputs"][0]["sha256"]) == 64
    assert m["argv"][:3] == ["paperkit-probe", "--seed", "4"]


def test_papers_table_lists_every_registered_command(pk):
    from paperkit_cli.registry import PAPERS

    r = pk("papers", "--format", "jsonl", "--authors")
    assert r.exit_code == 0 and r.stderr == ""
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["command"] for row in rows] == [c for p in PAPERS for c in p.commands]
    assert all(row["paper"] and row["authors"] and row["reference"] for row in rows)
    assert {row["arxiv"] for row in rows} >= {"2503.01495", "2504.15812"}


def test_unknown_and_planned_commands(pk):
    r = pk("no-such-command")
    assert r.exit_code == 2 and "No such command" in r.stderr and r.stderr.count("\n") == 1
    from paperkit_cli import registry

    planned = [c for c in registry.COMMANDS if not registry.is_available(c)]
    if planned:
        r = pk(planned[0])
        assert r.exit_code == 2 and "not built yet" in r.stderr


BIG_WRITER = """
import click
from paperkit_cli import options
from paperkit_cli.main import run_cli

@options.command("flood")
def cli():
    for i in range(200000):
        options.echo_data(f"line {i}")

run_cli(cli, "paperkit-flood", [])
"""


def test_broken_pipe_exits_quietly(tmp_path):
    # 'paperkit ... | head -1': the writer meets a closed pipe; no traceback, exit 141.
    (tmp_path / "flood.py").write_text(BIG_WRITER)
    script = f"'{sys.executable}' '{tmp_path / 'flood.py'}' | head -1; echo \"rc=${{PIPESTATUS[0]}}\""
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout.splitlines() == ["line 0", "rc=141"]
    assert proc.stderr == ""


def test_global_flags_before_command(pk):
    r = pk("-q", "papers", "--available")
    assert r.exit_code == 0
    r = pk("--version")
    assert r.exit_code == 0 and r.stdout.startswith("paperkit ")


def test_interrupt_wrapped_by_a_library_is_still_130(capsys):
    def wrapped(**_):
        try:
            raise KeyboardInterrupt()
        except KeyboardInterrupt as e:
            raise RuntimeError("serialisation failed") from e  # what torch.save may do on Ctrl-C

    rc, _, err = _run(_cmd(wrapped), [], capsys)
    assert rc == 130 and "interrupted" in err


def test_python_warnings_become_one_prefixed_line(capsys):
    import warnings

    def warn(**_):
        warnings.warn("overflow encountered in multiply", RuntimeWarning, stacklevel=1)

    rc, _, err = _run(_cmd(warn), [], capsys)
    assert rc == 0 and err.strip().splitlines() == ["paperkit probe: warning: RuntimeWarning: overflow encountered in multiply"]
    rc, _, err = _run(_cmd(warn), ["-q"], capsys)
    assert rc == 0 and err == ""


INTERRUPTED_INSIDE_EXEC = """
import click
from paperkit_cli.main import run_cli

@click.command()
def cmd():
    try:   # what a Ctrl-C landing while a dataclass is being built (exec'd source) leaves behind
        exec("raise KeyboardInterrupt")
    except KeyboardInterrupt:
        pass
    raise KeyboardInterrupt

run_cli(cmd, "demo", [])
"""


def test_interrupt_after_one_inside_exec_still_exits_130_not_by_sigint(tmp_path):
    """CPython 3.11 remembers a KeyboardInterrupt that ended an exec() of a string and, run as `python -m`,
    kills itself with SIGINT at exit (a parent sees -2) whatever status it asked for; run_cli clears that."""
    (tmp_path / "interrupted_demo.py").write_text(INTERRUPTED_INSIDE_EXEC)
    proc = subprocess.run([sys.executable, "-m", "interrupted_demo"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 130 and "demo: error: interrupted" in proc.stderr, (proc.returncode, proc.stderr)


SIGTERMED_WRITER = """
import sys, time
import click
from paperkit.core import io
from paperkit_cli.main import run_cli

@click.command()
def cmd():
    with io.atomic_write(sys.argv[1], "w") as f:
        f.write("half")
        print("ready", file=sys.stderr, flush=True)
        time.sleep(60)

run_cli(cmd, "demo", [])
"""


def test_sigterm_unwinds_like_ctrl_c(tmp_path):
    """SIGTERM (a scheduler, `timeout`, `kill`): exit 130 with the interrupt's one line, and the file being
    written is neither left half-written nor as a temporary file. Its default action had killed the process
    where it stood (-15, no message, a .tmp file left behind)."""
    import signal

    script = tmp_path / "writer.py"
    script.write_text(SIGTERMED_WRITER)
    out = tmp_path / "out" / "data.csv"
    out.parent.mkdir()
    proc = subprocess.Popen([sys.executable, str(script), str(out)], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), str(ROOT / "cli")])})
    try:
        assert proc.stderr.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        err = proc.communicate(timeout=30)[1]
    finally:
        proc.kill()
    assert proc.returncode == 130 and "demo: error: interrupted" in err, (proc.returncode, err)
    assert list(out.parent.iterdir()) == []
