"""conformal-cv, conformal-sim and conformal-combine end to end: outputs, determinism, resume, the
bad-input matrix, and options that must never run code (--model module:Class)."""

import json

import numpy as np
import pytest

from paperkit.core.io import read_array, write_array
from paperkit.core.tables import read_table, write_table
from paperkit.methods.conformal import combine


# ------------------------------------------------------------------------------------------ conformal-cv
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
    assert t.columns[:8] == ["row", "method", "y_pred", "lower", "upper", "length", "n_segments", "segments"]
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
    ("alpha", 2, "'0.7' is not in (0, 0.5]"),
    ("alpha-zero", 2, "'0' is not in (0, 0.5]"),
    ("columns", 3, "missing feature column(s) 'c'"),
    ("model", 2, "unknown regression model 'svm9'"),
    ("method", 2, "item 'bogus' is not one of"),
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


# ----------------------------------------------------------------------------------------- conformal-sim
def test_sim_writes_results_plot_and_resumes(pk, tmp_path):
    d = tmp_path / "sim"
    args = ["conformal-sim", "--n", "40", "--p", "3,8", "--reps", "6", "--methods", "mod,e-mod,eu-mod,cvplus,split",
            "--run-dir", d]
    r = pk(*args)
    assert r.exit_code == 0, r.stderr
    line = json.loads(r.stdout)
    assert line["dimensions"] == [3, 8]
    for f in ("results.csv", "reps.csv", "coverage_length.png", "manifest.json", "config.yaml"):
        assert (d / f).exists(), f
    t = read_table(d / "results.csv")
    assert len(t) == 10 and set(t.column("method")) == {"mod", "e-mod", "eu-mod", "cvplus", "split"}
    first = (d / "results.csv").read_bytes()
    # a finished run is protected; --resume reuses the checkpoints and gives the same bytes
    assert pk(*args).exit_code == 1
    (d / "manifest.json").unlink()
    (d / "results.csv").unlink()
    r2 = pk(*args, "--resume")
    assert r2.exit_code == 0, r2.stderr
    assert (d / "results.csv").read_bytes() == first
    # changed parameters cannot resume
    assert pk(*args[:-2], "--reps", "7", "--run-dir", d, "--resume").exit_code == 1


def test_sim_bad_options(pk, tmp_path):
    r = pk("conformal-sim", "--p", "5,x", "--run-dir", tmp_path / "a")
    assert r.exit_code == 2 and "--p" in r.stderr
    r = pk("conformal-sim", "--methods", "mod,bonferroni", "--run-dir", tmp_path / "b")
    assert r.exit_code == 2 and "item 'bonferroni' is not one of" in r.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


# ------------------------------------------------------------------------------------- conformal-combine
def test_combine_matches_library(pk, tmp_path):
    rng = np.random.default_rng(0)
    p = (1 + rng.integers(0, 20, (30, 5))) / 21
    write_array(tmp_path / "p.npy", p)
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "--alpha", "0.1", "--combiner", "mean,e,u,eu,min",
           "--seed", "5", "-o", tmp_path / "c.csv")
    assert r.exit_code == 0, r.stderr
    t = read_table(tmp_path / "c.csv")
    u = np.random.default_rng(5).random(30)
    for name in ("mean", "e", "u", "eu", "min"):
        sel = t.column("combiner") == name
        assert np.allclose(t.column("value")[sel], combine(p, name, u))
    e = t.column("combiner") == "e"
    assert np.array_equal(t.column("keep")[e] == "true", combine(p, "e") > 0.1 + 1e-12)
    assert (tmp_path / "c.csv.manifest.json").exists()


def test_combine_reads_tables_and_writes_stdout(pk, tmp_path):
    write_table(tmp_path / "p.csv", {"f1": [0.5, 0.05], "f2": [0.3, 0.1], "f3": [0.9, 0.02]})
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.csv", "--combiner", "e")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["keep"] for x in rows] == [True, False]
    assert [x["row"] for x in rows] == [0, 1]  # 0-based, as everywhere in paperkit
    assert rows[1]["value"] == pytest.approx(min(0.05, 0.075, 0.17 / 3))


@pytest.mark.parametrize("value,code,needle", [
    (1.5, 3, "outside (0, 1]"), (0.0, 3, "outside (0, 1]"), (np.nan, 3, "outside (0, 1]")])
def test_combine_bad_values(pk, tmp_path, value, code, needle):
    p = np.full((4, 3), 0.5)
    p[2, 1] = value
    write_array(tmp_path / "p.npy", p)
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "-o", tmp_path / "o.csv")
    assert r.exit_code == code and needle in r.stderr and "row 2, column 1 (0-based)" in r.stderr
    assert not (tmp_path / "o.csv").exists()


def test_combine_bad_options(pk, tmp_path):
    write_array(tmp_path / "p.npy", np.full((2, 3), 0.5))
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "--combiner", "median")
    assert r.exit_code == 2 and "item 'median' is not one of" in r.stderr
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "--alpha", "0.6")
    assert r.exit_code == 2 and "alpha" in r.stderr


# ---------------------------------------------------------------------- options that must never run code
def _code_cases(sentinel):
    return {
        "subprocess-run": ["--model", "subprocess:run", "--model-param", f"args=touch {sentinel}",
                           "--model-param", "shell=true"],
        "os-system": ["--model", "os:system", "--model-param", f"command=touch {sentinel}"],
        "builtins-eval": ["--model", "builtins:eval", "--model-param",
                          f"source=open({str(sentinel)!r}, 'w').close()"],
        "module-function": ["--model", "os:mkdir", "--model-param", f"path={sentinel}"],
        # a class, but not an estimator: constructing it would create the file
        "non-estimator-class": ["--model", "logging:FileHandler", "--model-param", f"filename={sentinel}"],
    }


@pytest.mark.parametrize("case", ["subprocess-run", "os-system", "builtins-eval", "module-function",
                                  "non-estimator-class"])
def test_model_module_class_never_calls_a_non_estimator(pk, data, case):
    sentinel = data / "sentinel"
    r = pk("conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y",
           *_code_cases(sentinel)[case], "-o", data / "o.csv")
    assert r.exit_code == 2, r.stderr
    assert "not a scikit-learn estimator class" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not sentinel.exists(), "the option ran code"
    assert not (data / "o.csv").exists()


def test_model_from_config_and_env_is_checked_the_same_way(pk, data):
    sentinel = data / "sentinel"
    cfg = data / "c.yaml"
    cfg.write_text(f"model: 'subprocess:run'\nmodel-param: ['args=touch {sentinel}', 'shell=true']\n")
    base = ["conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y"]
    r = pk(*base, "--config", cfg, "-o", data / "o.csv")
    assert r.exit_code == 2 and "not a scikit-learn estimator class" in r.stderr
    r = pk(*base, "--model-param", "command=touch " + str(sentinel), "-o", data / "o.csv",
           env={"PAPERKIT_CONFORMAL_CV_MODEL": "os:system"})
    assert r.exit_code == 2 and "not a scikit-learn estimator class" in r.stderr
    assert not sentinel.exists()


def test_model_module_class_accepts_a_real_estimator(pk, data):
    r = pk("conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y",
           "--model", "sklearn.linear_model:Ridge", "--model-param", "alpha=2", "--methods", "mod", "-o", data / "o.csv")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["model"] == "sklearn.linear_model:Ridge"


@pytest.mark.parametrize("model,param,needle", [
    ("ridge", "alpha=-5", "'alpha' parameter of Ridge"),
    ("rf", "n_estimators=0", "'n_estimators' parameter of RandomForestRegressor"),
    ("sklearn.linear_model:Lasso", "alpha=-1", "'alpha' parameter of Lasso"),
])
def test_bad_model_parameter_is_a_usage_error(pk, data, model, param, needle):
    r = pk("conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y",
           "--model", model, "--model-param", param, "-o", data / "o.csv")
    assert r.exit_code == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (data / "o.csv").exists()


def test_parameter_checked_against_the_data_at_fit_is_a_usage_error(pk, data):
    # knn's n_neighbors is valid on its own and only fails against 96 training rows per fold
    r = pk("conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y",
           "--model", "knn", "--model-param", "n_neighbors=500", "--methods", "mod", "-o", data / "o.csv")
    assert r.exit_code == 2, r.stderr
    assert "n_neighbors=500" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_classification_default_model_follows_the_task(pk, tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    cols = {f"x{j}": X[:, j] for j in range(4)} | {"label": y}
    write_table(tmp_path / "tr.csv", {k: v[::2] for k, v in cols.items()})
    write_table(tmp_path / "te.csv", {k: v[1::2] for k, v in cols.items()})
    r = pk("conformal-cv", "--task", "classification", "--train", tmp_path / "tr.csv", "--test", tmp_path / "te.csv",
           "--target", "label", "--methods", "mod", "-o", tmp_path / "o.csv")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["methods"]["mod"]["coverage"] >= 0.8


def test_command_literals_match_the_library():
    from paperkit.methods.conformal.combiners import METHODS
    from paperkit.methods.conformal.run import TABLE_COMBINERS
    from paperkit.methods.conformal.simulation import SIM_METHODS
    from paperkit_cli.commands import _conformal_common as common

    assert common.METHODS == tuple(METHODS) and common.SIM_METHODS == SIM_METHODS
    assert common.COMBINERS == TABLE_COMBINERS


# --------------------------------------------------------------------------- sizes, streams, truncation
def test_sim_refuses_sizes_that_cannot_fit_before_allocating(pk, tmp_path):
    r = pk("conformal-sim", "--n", "100000000000", "--p", "5", "--run-dir", tmp_path / "big")
    assert r.exit_code == 2, r.stderr
    assert "--max-memory-gb" in r.stderr and "TiB" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "big").exists()
    r = pk("conformal-sim", "--n", "40", "--p", "3", "--reps", "2", "--max-memory-gb", "0.000001",
           "--run-dir", tmp_path / "small")
    assert r.exit_code == 2 and "0.000001" not in r.stdout and not (tmp_path / "small").exists()


def test_combine_reads_npy_and_npz_from_stdin(pk, tmp_path):
    import io

    p = np.array([[0.5, 0.3, 0.9], [0.05, 0.1, 0.02]])
    want = pk("conformal-combine", "--pvalues", _saved(tmp_path, p), "--combiner", "e").stdout
    buf = io.BytesIO()
    np.save(buf, p)
    r = pk("conformal-combine", "--pvalues", "-", "--combiner", "e", input=buf.getvalue())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == want
    buf = io.BytesIO()
    np.savez(buf, p=p)
    r = pk("conformal-combine", "--pvalues", "-", "--combiner", "e", input=buf.getvalue())
    assert r.exit_code == 0 and r.stdout == want


def _saved(tmp_path, p):
    write_array(tmp_path / "p.npy", p)
    return tmp_path / "p.npy"


def test_combine_truncated_npz_is_an_input_error(pk, tmp_path):
    np.savez(tmp_path / "p.npz", p=np.full((50, 5), 0.5))
    data = (tmp_path / "p.npz").read_bytes()
    (tmp_path / "t.npz").write_bytes(data[: len(data) // 2])
    r = pk("conformal-combine", "--pvalues", tmp_path / "t.npz", "-o", tmp_path / "o.csv")
    assert r.exit_code == 3, r.stderr
    assert "t.npz" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------- issue 29: the user's conventions, not the paper's
def test_coverage_gives_each_method_the_alpha_of_its_guarantee(pk, data):
    r = _run(pk, data, "--coverage", "0.9", "--methods", "mod,e-mod,cross,cvplus,split,split-2a",
             "-o", data / "o.csv")
    assert r.exit_code == 0, r.stderr
    m = json.loads(r.stdout)["methods"]
    assert all(v["guarantee"] == pytest.approx(0.9) for v in m.values())
    assert m["mod"]["alpha"] == 0.05 and m["e-mod"]["alpha"] == 0.05 and m["split"]["alpha"] == 0.1
    assert m["split-2a"]["alpha"] == 0.05 and m["cross"]["alpha"] < 0.05
    assert json.loads(r.stdout)["coverage_target"] == 0.9
    assert "alpha" in r.stderr.splitlines()[0] and "guarantee" in r.stderr
    # the paper's convention stays: --alpha 0.1 is 0.8 for mod-cross, 0.9 for split
    m = json.loads(_run(pk, data, "--methods", "mod,split", "-o", data / "o.csv").stdout)["methods"]
    assert (m["mod"]["guarantee"], m["split"]["guarantee"]) == (pytest.approx(0.8), pytest.approx(0.9))


@pytest.mark.parametrize("extra,needle", [
    (["--coverage", "0.9", "--alpha", "0.2"], "give one"),
    (["--coverage", "0.995", "--methods", "cross"], "out of reach for cross"),
    (["--coverage", "1"], "'1' is not in [0.5, 1)"),
])
def test_coverage_bad_values_are_usage_errors(pk, data, extra, needle):
    r = _run(pk, data, *extra, "-o", data / "o.csv")
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (data / "o.csv").exists()


def test_rows_are_0_based_with_point_predictions_and_null_segments(pk, data):
    from sklearn.linear_model import LinearRegression

    r = _run(pk, data, "--methods", "mod,cvplus,split")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    mod = [x for x in rows if x["method"] == "mod"]
    assert [x["row"] for x in mod] == list(range(40))
    assert all(x["segments"] is None for x in rows if x["n_segments"] == 1)  # null, not ""
    tr, te = read_table(data / "train.csv"), read_table(data / "test.csv")
    full = LinearRegression().fit(tr.numeric(["a", "b", "c"]), tr.column("y")).predict(te.numeric(["a", "b", "c"]))
    assert np.allclose([x["y_pred"] for x in mod], full)
    for x in rows:
        if x["method"] == "split":  # the split model's prediction is the centre of its interval
            assert x["y_pred"] == pytest.approx((x["lower"] + x["upper"]) / 2)


def test_save_model_then_conformal_predict_gives_the_same_rows(pk, data):
    out, model = data / "sets.jsonl", data / "m.joblib"
    r = _run(pk, data, "--methods", "mod,u-mod,cvplus,split", "--coverage", "0.9", "--save-model", model, "-o", out)
    assert r.exit_code == 0, r.stderr
    r2 = pk("conformal-predict", "--model", model, "--test", data / "test.csv", "-o", data / "again.jsonl")
    assert r2.exit_code == 0, r2.stderr
    assert (data / "again.jsonl").read_bytes() == out.read_bytes()
    assert json.loads(r2.stdout)["methods"] == json.loads(r.stdout)["methods"]
    r3 = pk("conformal-predict", "--model", model, "--test", data / "test.csv", "--alpha", "0.2", "--methods", "mod")
    assert r3.exit_code == 0, r3.stderr
    assert {json.loads(x)["method"] for x in r3.stdout.splitlines()} == {"mod"}
    (data / "junk.joblib").write_bytes(b"not a model")
    r4 = pk("conformal-predict", "--model", data / "junk.joblib", "--test", data / "test.csv")
    assert r4.exit_code == 3 and "not a conformal-cv model file" in r4.stderr and "Traceback" not in r4.stderr
    r5 = pk("conformal-predict", "--model", model, "--test", data / "test.csv", "--methods", "jackknife+")
    assert r5.exit_code == 2 and "training rows" in r5.stderr


def test_categorical_columns_are_one_hot_encoded(pk, tmp_path):
    rng = np.random.default_rng(0)
    colour = np.array(["red", "blue", "green"])[rng.integers(0, 3, 100)]
    x = rng.standard_normal(100)
    y = x + 3.0 * (colour == "red") + 0.1 * rng.standard_normal(100)
    write_table(tmp_path / "tr.csv", {"x": x[:80], "colour": colour[:80], "y": y[:80]})
    test_colour = colour[80:].copy()
    test_colour[0] = "purple"  # never seen in training: zeros, counted
    write_table(tmp_path / "te.csv", {"x": x[80:], "colour": test_colour, "y": y[80:]})
    args = ["conformal-cv", "--train", tmp_path / "tr.csv", "--test", tmp_path / "te.csv", "--target", "y",
            "--model", "ols", "--methods", "mod"]
    r = pk(*args)
    assert r.exit_code == 3 and "--categorical auto" in r.stderr
    r = pk(*args, "--categorical", "auto", "-o", tmp_path / "o.csv")
    assert r.exit_code == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["features"] == ["x", "colour=blue", "colour=green", "colour=red"]
    assert s["unseen_categories"] == {"colour": 1}
    assert s["methods"]["mod"]["mean_length"] < 1.5  # the colour effect (3.0) is learnt
    assert pk(*args, "--categorical", "shade").exit_code == 2


def test_readme_python_snippet_runs():
    import contextlib
    import io
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "examples" / "conformal" / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().startswith("coverage ")


def test_classification_coverage_and_saved_model(pk, tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    perm = np.random.default_rng(1).permutation(150)
    cols = {f"x{j}": X[:, j] for j in range(4)} | {"species": np.array(["setosa", "versicolor", "virginica"])[y]}
    write_table(tmp_path / "tr.csv", {k: v[perm[:100]] for k, v in cols.items()})
    write_table(tmp_path / "te.csv", {k: v[perm[100:]] for k, v in cols.items()})
    r = pk("conformal-cv", "--task", "classification", "--train", tmp_path / "tr.csv", "--test", tmp_path / "te.csv",
           "--target", "species", "--coverage", "0.9", "--methods", "mod,u-mod,cross", "--save-model",
           tmp_path / "m.joblib", "-o", tmp_path / "a.jsonl")
    assert r.exit_code == 0, r.stderr
    assert all(m["guarantee"] == pytest.approx(0.9) for m in json.loads(r.stdout)["methods"].values())
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert rows[0]["row"] == 0 and rows[0]["y_pred"] in {"setosa", "versicolor", "virginica"}
    r = pk("conformal-predict", "--model", tmp_path / "m.joblib", "--test", tmp_path / "te.csv", "-o", tmp_path / "b.jsonl")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()


# ------------------------------------------------------------------------------ full conformal (issue 27)
def test_full_conformal_method(pk, data):
    r = _run(pk, data, "--methods", "e-mod,full", "-o", data / "f.csv")
    assert r.exit_code == 0, r.stderr
    s = json.loads(r.stdout)["methods"]["full"]
    assert s["guarantee"] == pytest.approx(0.9) and s["infinite_sets"] == 0 and s["coverage"] >= 0.8
    t = read_table(data / "f.csv")
    assert len(t) == 80 and set(t.column("method")) == {"e-mod", "full"}
    # a model that is not a linear smoother: one line, exit 2; "all" leaves full out for it
    r = _run(pk, data, "--methods", "full", "--model", "rf", "-o", data / "g.csv")
    assert r.exit_code == 2 and "linear smoothers" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = pk("conformal-cv", "--train", data / "train.csv", "--test", data / "test.csv", "--target", "y",
           "--model", "knn", "--methods", "all", "-o", data / "h.csv")
    assert r.exit_code == 0, r.stderr
    assert "full" not in json.loads(r.stdout)["methods"]


def test_full_conformal_with_a_saved_model_and_minnorm_ols(pk, data):
    model = data / "m.joblib"
    r = _run(pk, data, "--methods", "full", "--save-model", model, "-o", data / "a.csv")
    assert r.exit_code == 0, r.stderr
    r2 = pk("conformal-predict", "--model", model, "--test", data / "test.csv", "-o", data / "b.csv")
    assert r2.exit_code == 0, r2.stderr
    assert (data / "a.csv").read_text() == (data / "b.csv").read_text()
    r3 = _run(pk, data, "--methods", "full", "--model", "minnorm-ols", "-o", data / "c.csv")
    assert r3.exit_code == 0, r3.stderr  # minnorm-ols used to fail in make_model's parameter check


@pytest.mark.parametrize("labels,needle", [
    ([1] * 40, "every label is 1; classification needs at least two classes"),
    ([1] + [0] * 39, "would train on class 0 alone: every row of 1 (1 row) falls in that fold"),
    ([i % 3 + 0.5 for i in range(40)], "the labels are continuous numbers (0.5, 1.5, 2.5, ...)"),
])
def test_classification_labels_no_fold_can_fit_are_refused_before_the_run(pk, tmp_path, labels, needle):
    """One class, a class whose only rows share a fold, or continuous labels: scikit-learn's fit crashed
    (exit 70, "this is a bug"); now one line naming the file, the column and the problem, exit 3."""
    rng = np.random.default_rng(0)
    rows = [f"{a:.4f},{b:.4f},{y}" for (a, b), y in zip(rng.normal(size=(40, 2)), labels, strict=True)]
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n" + "\n".join(rows) + "\n")
    r = pk("conformal-cv", "--task", "classification", "--train", data, "--test", data, "--target", "y",
           "-o", tmp_path / "o.csv")
    assert r.exit_code == 3 and "d.csv: column 'y': " in r.stderr and needle in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "o.csv").exists()


def test_an_output_that_is_the_input_file_is_refused(pk, tmp_path):
    """-o train.csv replaced the training data with the results (exit 0, nothing said)."""
    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    data.write_text("a,y\n" + "\n".join(f"{a:.4f},{2 * a:.4f}" for a in rng.normal(size=20)) + "\n")
    before = data.read_bytes()
    r = pk("conformal-cv", "--train", data, "--test", data, "--target", "y", "-o", data)
    assert r.exit_code == 2 and "is the input file" in r.stderr and data.read_bytes() == before, r.stderr
