"""The shared house mechanisms every command inherits: option types, config checks, error policy,
run dirs and stages, readers and resource limits."""

import io as _io
import os
import sys
import zipfile

import click
import numpy as np
import pytest

from paperkit.core import io, resources
from paperkit.core.errors import InputError, RunDirError, UsageError
from paperkit.core.readers import read_numeric
from paperkit.core.runs import RunDir
from paperkit_cli import options
from paperkit_cli.main import run_cli


@options.command("probe")
@click.option("--alpha", type=options.FiniteFloat(0, 1, min_open=True, max_open=True), default=0.1,
              help="A level in (0, 1).")
@click.option("--folds", type=click.IntRange(2), default=5, help="A count.")
@click.option("--methods", type=options.ListOf(choices=["a", "b", "c"]), default="a,b", help="A list.")
@click.option("--sizes", type=options.ListOf(click.IntRange(1)), default="1,2", help="Numbers.")
@options.jobs_option
@options.seeds_option()
def probe(alpha, folds, methods, sizes, jobs, seeds):
    """A command for the tests."""
    click.echo(f"{alpha} {folds} {','.join(methods)} {sizes} {jobs} {seeds}")


def run(args, capsys):
    with pytest.raises(SystemExit) as e:
        run_cli(probe, "probe", [str(a) for a in args])
    out, err = capsys.readouterr()
    return e.value.code, out, err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "0", "1", "abc"])
def test_finite_float_refuses_non_finite_and_out_of_range(value, capsys):
    code, _, err = run(["--alpha", value], capsys)
    assert code == 2 and err.count("\n") == 1 and "--alpha" in err


def test_lists_parse_and_bad_items_are_usage_errors_naming_the_item(capsys):
    code, out, _ = run(["--methods", "c,a", "--sizes", "3,4"], capsys)
    assert code == 0 and out.split()[2] == "c,a" and "(3, 4)" in out
    for args, item in ((["--methods", "a,zz"], "zz"), (["--sizes", "1,x"], "x"), (["--sizes", "1,,2"], "empty"),
                       (["--seeds", "1,1"], "twice"), (["--seeds", "-1"], "-1")):
        code, _, err = run(args, capsys)
        assert code == 2 and item in err and err.count("\n") == 1, (args, err)


@pytest.mark.parametrize("makeflags, share", [
    ("", 1), (" -j2 --jobserver-auth=3,4", 2), ("k -j3 --jobserver-auth=fifo:/tmp/GMfifo1", 3), (" -j", 0),
    ("--jobs=4", 4), ("--jobs", 0), ("--jobserver-auth=3,4", 1), (" --jobserver-fds=3,4 -j", 0), ("kw", 1), (" -k --no-print-directory", 1),
])
def test_make_jobs_reads_the_parallel_make_from_makeflags(makeflags, share):
    # The forms GNU make 4.x exports to its recipes for make, make -j2, make -k -j3, make -j (unlimited).
    assert resources.make_jobs(makeflags) == share


@pytest.mark.parametrize("cores, makeflags, expected", [
    (8, "", 8), (8, " -j2 --jobserver-auth=3,4", 4), (2, " -j2 --jobserver-auth=3,4", 1),
    (2, " -j8 --jobserver-auth=3,4", 1), (8, " -j3 --jobserver-auth=3,4", 2), (8, " -j", 1),
])
def test_jobs_zero_is_this_jobs_share_of_the_cores_under_a_parallel_make(monkeypatch, cores, makeflags, expected):
    monkeypatch.setattr(resources, "cpu_count", lambda: cores)
    monkeypatch.setenv("MAKEFLAGS", makeflags)
    assert resources.resolve_jobs(0) == resources.resolve_jobs(None) == expected
    assert resources.resolve_jobs(3) == 3      # an explicit -j N is taken as given, make or not


def test_a_command_under_make_j2_takes_half_the_cores(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(resources, "cpu_count", lambda: 4)
    monkeypatch.setenv("MAKEFLAGS", " -j2 --jobserver-auth=3,4")
    before = torch.get_num_threads()
    try:
        code, _, _ = run([], capsys)
        assert code == 0 and resources.jobs() == 2 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_jobs_default_is_every_core_and_sets_the_engines(capsys):
    import numba
    import torch

    code, out, _ = run([], capsys)
    assert code == 0 and out.split()[-4] == "0"
    assert resources.jobs() == resources.resolve_jobs(0)
    before = torch.get_num_threads()
    try:
        resources.set_threads(1)
        assert torch.get_num_threads() == 1 and numba.get_num_threads() == 1 and resources.jobs() == 1
    finally:
        torch.set_num_threads(before)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize("text, needle", [
    ("folds: [1, 2]\n", "'folds' is a list"),
    ("alpha: {a: 1}\n", "'alpha' is a mapping"),
    ("alpha: nan\n", "'alpha'"),
    ("folds: 1\n", "'folds'"),
    ("methods: [a, zz]\n", "zz"),
    ("alpha: 0.2\nalpha: 0.3\n", "given twice"),
    ("a: &a [1, 1]\nb: &b [*a, *a]\nfolds: *b\n", "aliases"),
])
def test_config_values_are_checked_before_the_run(tmp_path, text, needle, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    code, out, err = run(["--config", cfg], capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and out == ""


def test_config_lists_round_trip_through_print_config(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("methods: [b, c]\nsizes: 4,5\n")
    code, out, _ = run(["--config", cfg, "--print-config"], capsys)
    assert code == 0
    (tmp_path / "d.yaml").write_text(out)
    code, out, _ = run(["--config", tmp_path / "d.yaml"], capsys)
    assert code == 0 and out.split()[2] == "b,c" and "(4, 5)" in out


def test_debug_shows_the_traceback_but_keeps_the_exit_code(capsys):
    code, _, err = run(["--alpha", "2"], capsys)
    code_dbg, _, err_dbg = run(["--alpha", "2", "--debug"], capsys)
    assert code == code_dbg == 2 and "Traceback" in err_dbg and "Traceback" not in err

    @options.command("boom")
    def boom():
        """Fails with bad input."""
        raise InputError("x.csv: bad")

    for extra, tb in (([], False), (["--debug"], True)):
        with pytest.raises(SystemExit) as e:
            run_cli(boom, "boom", extra)
        assert e.value.code == 3 and ("Traceback" in capsys.readouterr().err) == tb


# ------------------------------------------------------------------------------------------ run dirs
def test_a_failed_start_does_not_block_the_corrected_rerun(tmp_path):
    d = tmp_path / "run"
    RunDir(d).prepare({"a": 1}, command="x")  # then the run failed before any stage
    RunDir(d).prepare({"a": 2}, command="x")  # corrected rerun: no --resume/--force needed
    assert io.read_yaml(d / "config.yaml")["a"] == 2
    run = RunDir(d)
    run.path.joinpath("checkpoints").mkdir()
    run.save_checkpoint("s.json", {"x": 1})
    with pytest.raises(RunDirError, match="unfinished"):
        RunDir(d).prepare({"a": 2}, command="x")


def test_stages_are_computed_once_and_loaded_on_resume(tmp_path):
    calls = []

    def stage():
        calls.append(1)
        return {"w": [1.0, 2.0]}

    run = RunDir(tmp_path / "r").prepare({"a": 1}, command="x")
    assert run.cached("fit", stage) == {"w": [1.0, 2.0]}
    arrays = run.cached("arr", lambda: {"z": np.arange(3)}, fmt="npz")
    resumed = RunDir(tmp_path / "r", resume=True).prepare({"a": 1}, command="x")
    assert resumed.cached("fit", stage) == {"w": [1.0, 2.0]} and len(calls) == 1
    np.testing.assert_array_equal(resumed.cached("arr", lambda: 1 / 0, fmt="npz")["z"], arrays["z"])
    with pytest.raises(RunDirError, match="different parameters"):
        RunDir(tmp_path / "r", resume=True).prepare({"a": 2}, command="x")


def test_run_dir_files_stay_inside(tmp_path):
    run = RunDir(tmp_path / "r").prepare({}, command="x")
    assert run.file("a_b.csv") == run.path / "a_b.csv"
    for bad in ("../escape.csv", "/etc/passwd", "x/../../y"):
        with pytest.raises(UsageError, match="outside"):
            run.file(bad)


# ------------------------------------------------------------------------------------------- readers
class ModuleLevelThing:
    """An arbitrary Python object: loading it would need full unpickling."""


def test_truncated_and_foreign_binary_files_are_input_errors(tmp_path):
    import torch

    np.savez(tmp_path / "a.npz", x=np.ones((50, 50)))
    (tmp_path / "cut.npz").write_bytes((tmp_path / "a.npz").read_bytes()[:300])
    torch.save({"w": torch.ones(50, 50)}, tmp_path / "a.pt")
    (tmp_path / "cut.pt").write_bytes((tmp_path / "a.pt").read_bytes()[:200])
    (tmp_path / "zip.npz").write_bytes(b"PK\x03\x04garbage")
    for name in ("cut.npz", "zip.npz"):
        with pytest.raises(InputError, match=name):
            io.read_arrays(tmp_path / name)
    with pytest.raises(InputError, match="cut.pt") as e:
        io.load_torch(tmp_path / "cut.pt")
    assert "weights_only" not in str(e.value)

    torch.save({"obj": ModuleLevelThing()}, tmp_path / "code.pt")
    with pytest.raises(InputError, match="never loads") as e:
        io.load_torch(tmp_path / "code.pt")
    assert "weights_only=False" not in str(e.value) and "unsafe" not in str(e.value).lower()


def test_read_numeric_checks_dtype_shape_and_range(tmp_path):
    np.save(tmp_path / "s.npy", np.array([["a", "b"]]))
    np.save(tmp_path / "big.npy", np.array([[1.0, 1e308]]))
    np.save(tmp_path / "nan.npy", np.array([[1.0, np.nan]]))
    np.save(tmp_path / "v.npy", np.arange(3.0))
    with pytest.raises(InputError, match="dtype"):
        read_numeric(tmp_path / "s.npy")
    with pytest.raises(InputError, match="too large"):
        read_numeric(tmp_path / "big.npy", dtype=np.float32)
    with pytest.raises(InputError, match="NaN"):
        read_numeric(tmp_path / "nan.npy")
    with pytest.raises(InputError, match="2-D"):
        read_numeric(tmp_path / "v.npy", ndim=2)
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3,1e308\n")
    with pytest.raises(InputError, match="too large"):
        read_numeric(tmp_path / "t.csv", dtype=np.float32)
    with pytest.raises(InputError, match="too large"):
        read_numeric(tmp_path / "t.csv")  # squares of 1e308 overflow float64 too
    assert read_numeric(tmp_path / "t.csv", finite=False).shape == (2, 2)
    (tmp_path / "h.csv").write_text("x,y\n1,2\n")
    assert read_numeric(tmp_path / "h.csv", header="auto").tolist() == [[1.0, 2.0]]
    (tmp_path / "latin1.csv").write_bytes("a,b\n1,\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8"):
        read_numeric(tmp_path / "latin1.csv")


def test_binary_stdin_is_recognised(monkeypatch):
    buf = _io.BytesIO()
    np.save(buf, np.arange(6.0).reshape(2, 3))

    class Stdin:
        buffer = _io.BytesIO(buf.getvalue())

    monkeypatch.setattr(sys, "stdin", Stdin())
    assert read_numeric("-").shape == (2, 3)

    class TextStdin:
        buffer = _io.BytesIO(b"a,b\n1,2\n")

    monkeypatch.setattr(sys, "stdin", TextStdin())
    assert read_numeric("-").tolist() == [[1.0, 2.0]]
    assert zipfile  # npz streams are sniffed by their zip magic (checked in io.sniff_binary)
    assert io.sniff_binary(b"PK\x03\x04...") == "npz" and io.sniff_binary(b"\x93NUMPY") == "npy"


def test_memory_and_work_limits_name_the_figure_and_the_flag():
    resources.check_memory(1e6, "a small array")
    with pytest.raises(UsageError, match=r"--max-memory-gb") as e:
        resources.check_memory(8 * 1e11 * 1e3, "the regret array (--runs 1e11)", flag=resources.MEMORY_FLAG)
    assert "PiB" in str(e.value) or "TiB" in str(e.value)
    # a command without the option is not told to use it
    with pytest.raises(UsageError, match=r"use smaller sizes$"):
        resources.check_memory(8 * 1e11 * 1e3, "the regret array (--runs 1e11)")
    with pytest.raises(UsageError, match="--max-work"):
        resources.check_work(1e15, "the projection", limit=1e12, flag="--max-work")
    with pytest.raises(UsageError):
        resources.check_memory(float("inf"), "x")


def _sleep_a_while(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


def test_process_pool_stops_at_once_on_an_interrupt():
    """Ctrl-C (or SIGTERM, which run_cli turns into one) inside `-j N` work: queued jobs are dropped and the
    running workers ended, where ProcessPoolExecutor's own exit waited for every job submitted."""
    import time

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), resources.process_pool(2, "fork") as pool:
        for _ in range(4):
            pool.submit(_sleep_a_while, 20.0)
        time.sleep(0.5)
        workers = list(pool._processes)
        raise KeyboardInterrupt
    assert time.monotonic() - t0 < 10
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with resources.process_pool(2, "fork") as pool:   # without an interrupt it is the plain pool
        assert list(pool.map(_sleep_a_while, [0.0, 0.0])) == [0.0, 0.0]


def test_a_pt_stage_that_a_weights_only_load_could_not_read_is_refused_when_written(tmp_path):
    """dcgnn-fit once saved a numpy mask in a .pt stage: the run finished, and --resume could not load it.
    Now the save refuses it; what a weights-only load reads back (a state_dict, tensors, plain values) passes
    and round-trips."""
    import torch

    run = RunDir(tmp_path / "r").prepare({}, command="demo")
    good = {"state": torch.nn.Linear(2, 2).state_dict(), "rows": [{"seed": 0, "loss": 0.5}], "name": "x",
            "mask": torch.ones(3), "none": None}
    run.save_checkpoint("good.pt", good)
    back = run.load_checkpoint("good.pt")
    assert torch.equal(back["state"]["weight"], good["state"]["weight"]) and back["rows"] == good["rows"]
    for bad in ({"mask": np.ones(3)}, {"loss": np.float64(0.5)}, [object()]):
        with pytest.raises(TypeError, match="weights-only"):
            run.save_checkpoint("bad.pt", bad)
        assert not run.has_checkpoint("bad.pt")


def test_an_uncaught_eof_error_is_not_reported_as_ctrl_c(capsys):
    """click turns every EOFError into Abort (Ctrl-D at a prompt); a truncated .gz then said 'interrupted',
    exit 130. An EOFError that no reader caught is a bug: exit 70, with --debug's traceback."""

    @options.command("eof")
    def eof():
        """Hits an end of input nobody handled."""
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")

    with pytest.raises(SystemExit) as e:
        run_cli(eof, "eof", [])
    err = capsys.readouterr().err
    assert e.value.code == 70 and "EOFError: Compressed file ended" in err and "interrupted" not in err


def test_jobs_has_a_ceiling(capsys):
    """-j 100000000 set 10^8 numba/OpenMP threads and segfaulted after a minute (exit 139)."""
    code, _, err = run(["-j", str(options.MAX_JOBS + 1)], capsys)
    assert code == 2 and "--jobs" in err and err.count("\n") == 1
    # not run at -j MAX_JOBS: that would leave torch and OMP at 1024 threads for every later test in the process
    assert options.JOBS.max == options.MAX_JOBS


def test_a_run_dir_under_a_file_is_a_usage_error(tmp_path):
    from paperkit.core.errors import UsageError

    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match=r"--run-dir .*f/run: cannot write there"):
        RunDir(tmp_path / "f" / "run").prepare({"a": 1}, command="x")


def test_format_bytes_stays_short_for_absurd_sizes():
    from paperkit.core.resources import format_bytes

    assert format_bytes(5) == "5 B" and format_bytes(2048) == "2.0 KiB" and format_bytes(3 * 1024**5) == "3.0 PiB"
    assert format_bytes(116415321826934.8 * 1024**5) == "1.2e+14 PiB"   # was 116415321826934.8 PiB
