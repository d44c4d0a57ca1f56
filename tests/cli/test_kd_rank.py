"""kd-rank / kd-rank-diag through the real entry point: outputs, determinism, resume, γ = 0, bad input."""

import json

import numpy as np
import pytest

from paperkit.core.io import read_json
from paperkit.core.tables import read_table

TINY = ["--train-per-class", "6", "--test-per-class", "3", "--teacher-hidden", "32", "--teacher-epochs", "2",
        "--epochs", "2", "--batch-size", "64", "-j", "1", "-q"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from paperkit_cli.main import main

    d = tmp_path_factory.mktemp("kdr") / "run"
    try:
        main(["kd-rank", *TINY, "--seeds", "0,1", "--base", "kd", "--run-dir", str(d)])
    except SystemExit as e:
        assert e.code in (0, None)
    return d


def test_run_dir_outputs_and_table(tiny_run):
    d = tiny_run
    for name in ("results.csv", "curves.csv", "summary.csv", "timing.csv", "teacher.pt", "teacher.json",
                 "teacher_test.npy", "student_kd_rank_s0.pt", "student_kd_norank_s1_test.npy", "config.yaml",
                 "manifest.json"):
        assert (d / name).exists(), name
    res = read_table(d / "results.csv")
    assert len(res) == 4 and set(res.column("rank")) == {"on", "off"}
    for col in ("top1", "top5", "kendall_tau", "kl", "temperature", "ce_weight", "base_weight", "rank_weight", "rank_k"):
        assert res.has(col), col
    assert list(res.column("rank_weight")) == [0.0, 0.0, 1.0, 1.0]
    curves = read_table(d / "curves.csv")
    assert len(curves) == 8 and curves.has("test_rank_loss")
    summ = read_table(d / "summary.csv")
    assert len(summ) == 2 and summ.has("kendall_tau_std")


def test_stdout_is_one_json_line_and_same_seed_same_bytes(pk, tiny_run, tmp_path):
    d = tmp_path / "again"  # two threads here, one in tiny_run: the data files do not depend on it
    r = pk("kd-rank", *TINY, "--seeds", "0,1", "--base", "kd", "-j", "2", "--device", "cpu", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1
    out = json.loads(r.stdout)
    assert {x["rank"] for x in out["summary"]} == {"on", "off"}
    for name in ("results.csv", "curves.csv", "summary.csv", "teacher_test.npy"):
        assert (d / name).read_bytes() == (tiny_run / name).read_bytes(), name


def test_resume_and_finished_run(pk, tiny_run, tmp_path):
    """A finished run is not overwritten; an unfinished one resumes from its stages to the same results."""
    args = ["kd-rank", *TINY, "--seeds", "0,1", "--base", "kd", "--run-dir", tiny_run]
    assert pk(*args).exit_code == 1  # finished: not overwritten
    before = (tiny_run / "results.csv").read_bytes()
    (tiny_run / "manifest.json").unlink()
    (tiny_run / "checkpoints" / "kd_rank_s1.json").unlink()
    r = pk(*args, "--resume")
    assert r.exit_code == 0, r.stderr
    assert (tiny_run / "results.csv").read_bytes() == before


def test_rank_weight_zero_reproduces_the_base_rows(pk, tiny_run, tmp_path):
    """--rank-weight 0 trains only the base: its rows are identical to the rank-off rows of a γ = 1 run."""
    d = tmp_path / "zero"
    r = pk("kd-rank", *TINY, "--seeds", "0,1", "--base", "kd", "--rank-weight", "0", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    zero, full = read_table(d / "results.csv"), read_table(tiny_run / "results.csv")
    assert len(zero) == 2
    for col in ("top1", "top5", "kendall_tau", "kl"):
        assert list(zero.column(col)) == list(full.column(col)[:2]), col


def test_digits_with_loaded_teacher_and_wrong_teacher(pk, tiny_run, tmp_path):
    d = tmp_path / "dig"
    r = pk("kd-rank", "--data", "digits", *TINY, "--seeds", "0", "--base", "lskd,mlkd", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    assert read_json(d / "teacher.json")["top1"] > 50
    r = pk("kd-rank", "--data", "digits", *TINY, "--seeds", "0", "--base", "none", "--teacher", d / "teacher.pt",
           "--run-dir", tmp_path / "dig2")
    assert r.exit_code == 0, r.stderr
    # a synth100 teacher (100 classes) on digits (10 classes): one line, exit 3
    r = pk("kd-rank", "--data", "digits", *TINY, "--teacher", tiny_run / "teacher.pt", "--run-dir", tmp_path / "bad")
    assert r.exit_code == 3
    assert "100 classes" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad").exists()
    import torch

    torch.save({"kind": "something else"}, tmp_path / "other.pt")
    r = pk("kd-rank", "--data", "digits", *TINY, "--teacher", tmp_path / "other.pt", "--run-dir", tmp_path / "bad")
    assert r.exit_code == 3 and "not a kd-rank teacher" in r.stderr


def test_npy_folder_with_teacher_logits(pk, tmp_path):
    rng = np.random.default_rng(0)
    src = tmp_path / "data"
    src.mkdir()
    X = rng.normal(size=(120, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0)
    W = rng.normal(size=(5, 3))
    for part, sl in (("train", slice(0, 80)), ("test", slice(80, 120))):
        np.save(src / f"X_{part}.npy", X[sl])
        np.save(src / f"y_{part}.npy", y[sl])
        np.save(src / f"teacher_{part}.npy", X[sl] @ W)
    r = pk("kd-rank", "--data", f"npy:{src}", "--teacher", "logits", *TINY, "--seeds", "0", "--run-dir", tmp_path / "r")
    assert r.exit_code == 0, r.stderr
    assert read_json(tmp_path / "r" / "teacher.json")["source"] == "logits"
    np.save(src / "teacher_test.npy", np.full((40, 3), np.nan))
    r = pk("kd-rank", "--data", f"npy:{src}", "--teacher", "logits", *TINY, "--run-dir", tmp_path / "r2")
    assert r.exit_code == 3 and "NaN" in r.stderr


@pytest.mark.parametrize("args, code, text", [
    (["--base", "fitnet"], 2, "fitnet"),
    (["--rank-form", "cosine"], 2, "cosine"),
    (["--rank-weight", "-1"], 2, "rank-weight"),
    (["--ce-weight", "-0.5"], 2, "ce-weight"),
    (["--temperature", "-4"], 2, "temperature"),
    (["--temperature", "0"], 2, "temperature"),
    (["--rank-k", "0"], 2, "rank-k"),
    (["--data", "cifar100"], 2, "unknown data"),
    (["--data", "npy:/nonexistent/dir"], 3, "no such folder"),
    (["--teacher", "/nonexistent/teacher.pt"], 3, "no such file"),
    (["--seeds", "0,x"], 2, "seeds"),
    (["--student-hidden", "32,-1"], 2, "hidden"),
])
def test_bad_input_is_one_line_and_an_exit_code(pk, tmp_path, args, code, text):
    r = pk("kd-rank", *TINY, *args, "--run-dir", tmp_path / "r")
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert text in r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith(("paperkit kd-rank: error:", "Error:")) or "error" in lines[-1].lower()
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "r").exists()


# ------------------------------------------------------------------------------------------ kd-rank-diag
def _logits(tmp_path, n=200, C=50, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.normal(0, 3, size=(n, C))
    t[np.arange(n), rng.integers(0, C, n)] += 8
    s = t + rng.normal(0, 2, size=(n, C))
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "s.npy", s)
    return tmp_path / "t.npy", tmp_path / "s.npy"


def test_diag_rows_plot_and_stderr(pk, tmp_path):
    t, s = _logits(tmp_path)
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", s, "--plot", tmp_path / "share.png")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    shares = [x for x in rows if x["diagnostic"] == "grad_share"]
    scales = [x for x in rows if x["diagnostic"] == "scale"]
    assert len(shares) == 10 and len(scales) == 2
    assert sum(x["kl_share"] for x in shares) == pytest.approx(1.0)
    assert sum(x["rank_share"] for x in shares[:5]) > 0.4 > sum(x["kl_share"] for x in shares[:5])
    assert (tmp_path / "share.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "50% least probable" in r.stderr
    r = pk("kd-rank-diag", "--logits-t", t, "--logits-s", s, "--bins", "4", "-o", tmp_path / "d.csv")
    assert r.exit_code == 0 and len(read_table(tmp_path / "d.csv")) == 6


def test_diag_bad_input(pk, tmp_path):
    t, s = _logits(tmp_path)
    np.save(tmp_path / "short.npy", np.zeros((10, 50)))
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", tmp_path / "short.npy")
    assert r.exit_code == 3 and "same shape" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    bad = np.load(s)
    bad[3, 4] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", tmp_path / "nan.npy")
    assert r.exit_code == 3 and "NaN" in r.stderr and "rows 3, 0-based" in r.stderr
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", s, "--rank-form", "cosine")
    assert r.exit_code == 2
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", s, "--temperature", "-1")
    assert r.exit_code == 2
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", s, "--scales", "0.5,-2")
    assert r.exit_code == 2 and "scale" in r.stderr
    r = pk("kd-rank-diag", "--teacher-logits", tmp_path / "missing.npy", "--student-logits", s)
    assert r.exit_code == 3 and "no such file" in r.stderr


# ------------------------------------------------------------------------------- review findings
def test_defaults_live_in_the_settings_dataclass():
    """One source of defaults: the library's training default agrees with the command's."""
    from paperkit.methods.kd_rank import TrainSettings
    from paperkit.methods.kd_rank.run import KdRankSettings

    assert TrainSettings().epochs == KdRankSettings().epochs == 20
    assert KdRankSettings().seeds == (0, 1, 2) and KdRankSettings().device == "auto"


@pytest.mark.parametrize("cmd, args, text", [
    ("kd-rank", ["--lr", "1e300"], "--lr"),
    ("kd-rank", ["--temperature", "1e300"], "--temperature"),
    ("kd-rank", ["-T", "4"], "-T"),
    ("kd-rank", ["--jobs", "-1"], "--jobs"),
    ("kd-rank", ["--device", "tpu"], "--device"),
    ("kd-rank", ["--base", "kd,kd"], "twice"),
    ("kd-rank-diag", ["--temperature", "1e300"], "--temperature"),
    ("kd-rank-diag", ["--scales", "0.5,1e300"], "1e300"),
])
def test_out_of_range_options_are_usage_errors(pk, tmp_path, cmd, args, text):
    extra = ["--run-dir", tmp_path / "r"] if cmd == "kd-rank" else ["--teacher-logits", "t.npy", "--student-logits",
                                                                    "s.npy"]
    r = pk(cmd, *TINY[:-1], *args, *extra) if cmd == "kd-rank" else pk(cmd, *args, *extra)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert text in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "r").exists()


def test_absurd_synth100_size_is_refused_before_allocating(pk, tmp_path):
    r = pk("kd-rank", *TINY[:-1], "--train-per-class", "100000000", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2, r.stderr
    assert "--max-memory-gb" in r.stderr and "GiB" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
    r = pk("kd-rank", *TINY[:-1], "--train-per-class", "5000", "--max-memory-gb", "0.01", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "0.01 GiB" in r.stderr


def test_truncated_teacher_checkpoint_is_an_input_error(pk, tiny_run, tmp_path):
    data = (tiny_run / "teacher.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    r = pk("kd-rank", *TINY, "--teacher", tmp_path / "cut.pt", "--run-dir", tmp_path / "r")
    assert r.exit_code == 3, r.stderr
    assert "cut.pt" in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "r").exists()


def test_npy_features_beyond_float32_are_refused(pk, tmp_path):
    rng = np.random.default_rng(0)
    src = tmp_path / "data"
    src.mkdir()
    for part, n in (("train", 40), ("test", 20)):
        X = rng.normal(size=(n, 4))
        if part == "train":
            X[3, 1] = 1e300  # finite in float64, infinite in float32 (what training computes in)
        np.save(src / f"X_{part}.npy", X)
        np.save(src / f"y_{part}.npy", rng.integers(0, 3, n))
    r = pk("kd-rank", "--data", f"npy:{src}", *TINY, "--seeds", "0", "--run-dir", tmp_path / "r")
    assert r.exit_code == 3, r.stderr
    assert "X_train.npy" in r.stderr and "float32" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_diag_reads_stdin_and_refuses_truncated_and_huge_input(pk, tmp_path):
    t, s = _logits(tmp_path, n=40, C=12)
    ref = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", s)
    assert ref.exit_code == 0, ref.stderr
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", "-", input=s.read_bytes())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == ref.stdout
    r = pk("kd-rank-diag", "--teacher-logits", "-", "--student-logits", "-", input=s.read_bytes())
    assert r.exit_code == 2 and "stdin" in r.stderr
    np.savez(tmp_path / "t.npz", logits=np.load(t))
    cut = (tmp_path / "t.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(cut[: len(cut) // 2])
    r = pk("kd-rank-diag", "--teacher-logits", tmp_path / "cut.npz", "--student-logits", s)
    assert r.exit_code == 3 and "cut.npz" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    huge = np.load(s)
    huge[0, 0] = 1e100  # float64 holds it, but the losses (squares, sums, ×scale/T) would overflow
    np.save(tmp_path / "huge.npy", huge)
    r = pk("kd-rank-diag", "--teacher-logits", t, "--student-logits", tmp_path / "huge.npy")
    assert r.exit_code == 3, (r.stderr, r.stdout[:200])
    assert "huge.npy" in r.stderr and "magnitude" in r.stderr and r.stdout == ""


def test_npy_labels_must_be_integral_and_the_error_names_the_row(pk, tmp_path):
    """1.0 is class 1; 1.5 is no class: refused (never truncated to 1), naming the first bad row, 0-based."""
    rng = np.random.default_rng(0)
    src = tmp_path / "data"
    src.mkdir()
    for part, n in (("train", 40), ("test", 20)):
        np.save(src / f"X_{part}.npy", rng.normal(size=(n, 4)).astype(np.float32))
        np.save(src / f"y_{part}.npy", rng.integers(0, 3, n).astype(np.float64))
    r = pk("kd-rank", "--data", f"npy:{src}", *TINY, "--seeds", "0", "--run-dir", tmp_path / "ok")
    assert r.exit_code == 0, r.stderr
    y = np.load(src / "y_train.npy")
    y[7], y[9] = 1.5, 2.25
    np.save(src / "y_train.npy", y)
    r = pk("kd-rank", "--data", f"npy:{src}", *TINY, "--seeds", "0", "--run-dir", tmp_path / "bad")
    assert r.exit_code == 3, r.stderr
    assert "y_train.npy" in r.stderr and "row 7" in r.stderr and "1.5" in r.stderr and "2 such rows" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()
