"""conformal-cv end to end: outputs, summary, determinism, the bad-input matrix."""

import json

import numpy as np
import pytest

from paperkit.core.io import read_array
from paperkit.core.tables import read_table, write_table


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((160, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.standard_normal(160)
    cols = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}
    write_table(tmp_path / "train.csv", {k: v[:120] for k, v in cols.items()})
    write_table(tmp_path / "test.csv", {k: v[120:] for k, v in cols.items()})
    return tmp_path


def _run(pk, d, *extra):
    return pk("conformal-cv", "--train", d / "train.csv", "--test", d / "test.csv", "--target", "y",
              "--model", "ols", *extra)


def test_writes_sets_summary_pvalues_and_manifest(pk, data):
    out = data / "sets.csv"
    r = _run(pk, data, "--methods", "mod,e-mod,eu-mod,cross,cvplus,split", "--pvalues", data / "p.npy",
             "--summary", data / "s.json", "-o", out)
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)  # stdout: exactly one JSON line
    assert len(r.stdout.strip().splitlines()) == 1
    assert set(summary["methods"]) == {"mod", "e-mod", "eu-mod", "cross", "cvplus", "split"}
    assert summary["methods"]["mod"]["guarantee"] == pytest.approx(0.8)
    assert "guarantee" in r.stderr and "coverage" in r.stderr  # the per-method table
    t = read_table(out)
    assert len(t) == 40 * 6
    assert t.columns[:7] == ["row", "method", "lower", "upper", "length", "n_segments", "segments"]
    mod = t.column("method") == "mod"
    cov = np.mean(t.column("covered")[mod] == "true")
    assert cov == pytest.approx(summary["methods"]["mod"]["coverage"])
    assert read_array(data / "p.npy").shape == (40, 5)
    assert json.loads((data / "s.json").read_text()) == summary
    manifest = json.loads((data / "sets.csv.manifest.json").read_text())
    assert manifest["seed"] == 0


def test_stdout_is_jsonl_rows_and_same_seed_same_bytes(pk, data):
    a = _run(pk, data, "--methods", "u-mod,eu-mod", "--seed", "3")
    b = _run(pk, data, "--methods", "u-mod,eu-mod", "--seed", "3")
    c = _run(pk, data, "--methods", "u-mod,eu-mod", "--seed", "4")
    assert a.exit_code == 0 and a.stdout == b.stdout and a.stdout != c.stdout
    rows = [json.loads(line) for line in a.stdout.splitlines()]
    assert len(rows) == 80 and {r["method"] for r in rows} == {"u-mod", "eu-mod"}


def test_test_file_without_target_gives_sets_without_coverage(pk, data):
    t = read_table(data / "test.csv")
    write_table(data / "x.csv", {c: t.column(c) for c in ("a", "b", "c")})
    r = pk("conformal-cv", "--train", data / "train.csv", "--test", data / "x.csv", "--target", "y",
           "--methods", "mod", "-o", data / "o.csv")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["methods"]["mod"]["coverage"] is None
    assert "covered" not in read_table(data / "o.csv").columns


def test_classification_mode(pk, tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    perm = np.random.default_rng(1).permutation(150)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    cols = {f"x{j}": X[:, j] for j in range(4)} | {"species": names}
    write_table(tmp_path / "tr.csv", {k: v[perm[:100]] for k, v in cols.items()})
    write_table(tmp_path / "te.csv", {k: v[perm[100:]] for k, v in cols.items()})
    r = pk("conformal-cv", "--task", "classification", "--model", "logistic", "--train", tmp_path / "tr.csv",
           "--test", tmp_path / "te.csv", "--target", "species", "--score", "aps", "-o", tmp_path / "sets.jsonl")
    assert r.exit_code == 0, r.stderr
    assert list(json.loads(r.stdout)["methods"]) == ["mod", "e-mod", "u-mod", "eu-mod", "cross", "e-cross",
                                                      "u-cross", "eu-cross"]
    rows = [json.loads(line) for line in (tmp_path / "sets.jsonl").read_text().splitlines()]
    assert all(set(json.loads(x["set"])) <= {"setosa", "versicolor", "virginica"} for x in rows)
    assert json.loads(r.stdout)["methods"]["mod"]["coverage"] >= 0.8


@pytest.mark.parametrize("case,code,needle", [
    ("missing-target", 3, "no column 'yy'"),
    ("non-numeric", 3, "non-numeric"),
    ("nan", 3, "NaN"),
    ("inf-y", 3, "column 'y'"),
    ("few-rows", 3, "cannot be split into 5 folds"),
    ("alpha", 2, "alpha = 0.7 is out of range"),
    ("alpha-zero", 2, "alpha = 0.0 is out of range"),
    ("columns", 3, "missing feature column(s) 'c'"),
    ("model", 2, "unknown regression model 'svm9'"),
    ("method", 2, "unknown method 'bogus'"),
    ("no-file", 3, "no such file"),
])
def test_bad_inputs(pk, data, case, code, needle):
    t = read_table(data / "train.csv")
    cols = {c: t.column(c).astype(object) for c in t.columns}
    train, test, extra = data / "train.csv", data / "test.csv", []
    target = "y"
    if case == "missing-target":
        target = "yy"
    elif case == "non-numeric":
        cols["b"][7] = "abc"
        train = data / "bad.csv"
    elif case == "nan":
        cols["a"][3] = "nan"
        train = data / "bad.csv"
    elif case == "inf-y":
        cols["y"][5] = "inf"
        train = data / "bad.csv"
    elif case == "few-rows":
        cols = {c: v[:3] for c, v in cols.items()}
        train = data / "bad.csv"
    elif case == "alpha":
        extra = ["--alpha", "0.7"]
    elif case == "alpha-zero":
        extra = ["--alpha", "0"]
    elif case == "columns":
        write_table(data / "bad_test.csv", {c: cols[c] for c in ("a", "b", "y")})
        test = data / "bad_test.csv"
    elif case == "model":
        extra = ["--model", "svm9"]
    elif case == "method":
        extra = ["--methods", "mod,bogus"]
    elif case == "no-file":
        train = data / "nope.csv"
    if train == data / "bad.csv":
        write_table(train, cols)
    out = data / "out.csv"
    r = pk("conformal-cv", "--train", train, "--test", test, "--target", target, "--model", "ols", *extra, "-o", out)
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stdout == ""
    assert not out.exists() and not (data / "out.csv.manifest.json").exists()


def test_installed_executable_runs(pk_bin, data):
    r = pk_bin("conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y",
               "--model", "ols", "--methods", "mod,e-mod", "-q", "-o", data / "o.csv")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    assert json.loads(r.stdout)["n_test"] == 40
