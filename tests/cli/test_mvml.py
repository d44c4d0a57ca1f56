"""mvml-make / mvml-fit / mvml-predict through the real entry point."""

import json

import numpy as np
import pytest


@pytest.fixture
def syn(tmp_path, pk):
    out = tmp_path / "syn"
    r = pk("mvml-make", "--dataset", "synthetic", "--n", "100", "--run-dir", out)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["run_dir"] == str(out) and json.loads(r.stdout)["n_samples"] == 100
    return out


def _views(d, k=3):
    return ",".join(str(d / f"view{v + 1}.npy") for v in range(k))


def test_fit_predict_roundtrip_and_determinism(syn, tmp_path, pk):
    args = ["--views", _views(syn), "--labels", syn / "labels.npy", "--m", "8", "--cv", "2",
            "--methods", "tmvml,tnn,ridge-view,br-logistic,mlknn", "--max-iter", "25"]
    r1 = pk("mvml-fit", *args, "--run-dir", tmp_path / "a")
    assert r1.exit_code == 0, r1.stderr
    summary = json.loads(r1.stdout)  # stdout: one JSON line, nothing else
    assert summary["iterations"] == 25 and len(r1.stdout.strip().splitlines()) == 1
    assert "mean ± std" in r1.stderr and "coverage" in r1.stderr
    pk("mvml-fit", *args, "--run-dir", tmp_path / "b")
    for name in ("model.npz", "scores.npy", "metrics.json", "trace.csv", "splits.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a" / "convergence.png").exists() and (tmp_path / "a" / "manifest.json").exists()
    report = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert set(report["cv"]["summary"]) == {"tmvml", "tnn", "ridge-view", "br-logistic", "mlknn"}
    assert "coverage_sklearn" in report["definitions"]
    out = tmp_path / "pred.npy"
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "--what", "scores", "-o", out)
    assert r.exit_code == 0, r.stderr
    np.testing.assert_allclose(np.load(out), np.load(tmp_path / "a" / "scores.npy"))


def test_test_split_and_resume(syn, tmp_path, pk):
    base = ["--views", _views(syn), "--labels", syn / "labels.npy", "--test-views", _views(syn),
            "--test-labels", syn / "labels.npy", "--m", "8", "--max-iter", "25", "--methods", "tmvml,ridge-concat", "--run-dir", tmp_path / "r"]
    assert pk("mvml-fit", *base).exit_code == 0
    assert pk("mvml-fit", *base).exit_code == 1  # finished run: needs --resume or --force
    assert pk("mvml-fit", *base, "--resume").exit_code == 0
    report = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert set(report["test"]) == {"tmvml", "ridge-concat"}


def _bad(tmp_path, pk, *args, code):
    r = pk("mvml-fit", *args, "--run-dir", tmp_path / "bad")
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "error" in r.stderr and r.stdout == ""
    assert not (tmp_path / "bad").exists()  # rejected before the run directory is made: no stub left
    return r.stderr


def test_bad_inputs(syn, tmp_path, pk):
    views, labels = _views(syn), syn / "labels.npy"
    np.save(tmp_path / "short.npy", np.load(syn / "view1.npy")[:50])
    assert "different numbers of samples" in _bad(tmp_path, pk, "--views", f"{tmp_path / 'short.npy'},{syn / 'view2.npy'}",
                                                  "--labels", labels, code=3)
    np.save(tmp_path / "y2.npy", np.load(labels) * 2)
    assert "not 0 or 1" in _bad(tmp_path, pk, "--views", views, "--labels", tmp_path / "y2.npy", code=3)
    x = np.load(syn / "view1.npy")
    x[5, 1] = np.inf
    np.save(tmp_path / "inf.npy", x)
    assert "infinite" in _bad(tmp_path, pk, "--views", f"{tmp_path / 'inf.npy'},{syn / 'view2.npy'}", "--labels", labels, code=3)
    assert "delta" in _bad(tmp_path, pk, "--views", views, "--labels", labels, "--delta", "0", code=2)
    assert "lam" in _bad(tmp_path, pk, "--views", views, "--labels", labels, "--lam", "-1", code=2)
    assert "too large for PCA" in _bad(tmp_path, pk, "--views", views, "--labels", labels, "--map", "pca", "--m", "500", code=3)
    assert "no such file" in _bad(tmp_path, pk, "--views", tmp_path / "nope.npy", "--labels", labels, code=3)
    _bad(tmp_path, pk, "--views", views, code=2)


def test_bad_inputs_found_before_the_run_starts(syn, tmp_path, pk):
    """Inputs the fit itself would reject (test views, ablation settings, sizes under --cv) fail before any
    file is written."""
    views, labels = _views(syn), syn / "labels.npy"
    np.save(tmp_path / "narrow.npy", np.load(syn / "view2.npy")[:, :-1])
    narrow = f"{syn / 'view1.npy'},{tmp_path / 'narrow.npy'},{syn / 'view3.npy'}"
    base = ["--views", views, "--labels", labels, "--m", "8"]
    assert "training view 1 (0-based) has" in _bad(tmp_path, pk, *base, "--test-views", narrow, code=3)
    assert "--test-views has 2 views" in _bad(tmp_path, pk, *base, "--test-views", _views(syn, 2), code=3)
    for value in ("0", "-1", "nan", "inf"):
        assert "--lam-tnn" in _bad(tmp_path, pk, *base, "--methods", "tmvml,tnn", "--lam-tnn", value, code=2)
    assert "--lam-tnn" in _bad(tmp_path, pk, *base, "--lam-tnn", "0", code=2)  # given but unused: still checked
    # penalty none does not use λ, but its 'tnn' ablation does
    assert "lam" in _bad(tmp_path, pk, *base, "--penalty", "none", "--lam", "-1", "--methods", "tnn", code=2)
    for opt, value in (("--mu0", "inf"), ("--rho", "nan"), ("--gamma", "-1"), ("--tol", "nan"),
                       ("--threshold", "inf"), ("--mu-max", "1e-9")):
        # refused by the option's type (naming the option) or by the estimator (naming the parameter)
        err = _bad(tmp_path, pk, *base, opt, value, code=2)
        assert opt in err or opt.lstrip("-").replace("-", "_") in err, err
    # 100 samples: 90 anchors fit on all of them, not on the 70 of a --cv split's training part
    assert "training samples; got 70" in _bad(tmp_path, pk, "--views", views, "--labels", labels, "--m", "90",
                                               "--cv", "2", code=3)
    assert "equal width" in _bad(tmp_path, pk, *base, "--map", "none", code=3)


def test_label_error_shows_a_plain_number(syn, tmp_path, pk):
    np.save(tmp_path / "y2.npy", np.load(syn / "labels.npy") * 2)
    r = pk("mvml-fit", "--views", _views(syn), "--labels", tmp_path / "y2.npy", "--run-dir", tmp_path / "r")
    assert r.exit_code == 3 and "np.float64" not in r.stderr and ": 2.0)" in r.stderr, r.stderr


def test_constant_label_warns(syn, tmp_path, pk):
    Y = np.load(syn / "labels.npy")
    Y[:, 0] = 1
    np.save(tmp_path / "yc.npy", Y)
    r = pk("mvml-fit", "--views", _views(syn), "--labels", tmp_path / "yc.npy", "--m", "8", "--cv", "2",
           "--methods", "tmvml,tnn,ridge", "--run-dir", tmp_path / "c")
    assert r.exit_code == 0, r.stderr
    # 2 splits × 3 TMvML fits + the final fit all see the constant label: warned once per run
    assert sum("constant" in line for line in r.stderr.splitlines()) == 1, r.stderr


def test_predict_bad_model(tmp_path, pk, syn):
    np.savez(tmp_path / "m.npz", W=np.zeros(3))
    r = pk("mvml-predict", "--model", tmp_path / "m.npz", "--views", _views(syn))
    assert r.exit_code == 3 and "not a paperkit mvml model" in r.stderr


@pytest.fixture
def one_view_model(syn, tmp_path, pk):
    d = tmp_path / "one"
    r = pk("mvml-fit", "--views", syn / "view1.npy", "--labels", syn / "labels.npy", "--m", "4", "--max-iter", "5",
           "-q", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    return d / "model.npz"


def test_predict_reads_views_from_stdin_as_npy_or_csv(syn, one_view_model, pk):
    """'-' is sniffed: an .npy stream and a CSV table on stdin score like the file itself."""
    import io

    from_file = pk("mvml-predict", "--model", one_view_model, "--views", syn / "view1.npy", "--what", "scores")
    assert from_file.exit_code == 0, from_file.stderr
    buf = io.BytesIO()
    np.save(buf, np.load(syn / "view1.npy"))
    r = pk("mvml-predict", "--model", one_view_model, "--views", "-", "--what", "scores", input=buf.getvalue())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == from_file.stdout
    x = np.load(syn / "view1.npy")
    csv = ",".join(f"x{j}" for j in range(x.shape[1])) + "\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                                                         for row in x) + "\n"
    r = pk("mvml-predict", "--model", one_view_model, "--views", "-", "--what", "scores", input=csv)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == from_file.stdout


def test_predict_refuses_huge_values_naming_the_file(syn, one_view_model, tmp_path, pk):
    """Finite values near 1e308 used to give NaN scores labelled 0 with exit 0."""
    for big in (1e308, 1e200):
        x = np.load(syn / "view1.npy")
        x[3, 2] = big
        np.save(tmp_path / "big.npy", x)
        r = pk("mvml-predict", "--model", one_view_model, "--views", tmp_path / "big.npy")
        assert r.exit_code == 3, (big, r.stderr)
        assert "big.npy" in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_truncated_npz_is_an_input_error(syn, one_view_model, tmp_path, pk):
    data = one_view_model.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    r = pk("mvml-predict", "--model", tmp_path / "cut.npz", "--views", syn / "view1.npy")
    assert r.exit_code == 3 and "cut.npz" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    np.savez(tmp_path / "view.npz", x=np.load(syn / "view1.npy"))
    data = (tmp_path / "view.npz").read_bytes()
    (tmp_path / "view_cut.npz").write_bytes(data[: len(data) // 2])
    for cmd, extra in (("mvml-predict", ["--model", one_view_model]),
                       ("mvml-fit", ["--labels", syn / "labels.npy", "--run-dir", tmp_path / "r"])):
        r = pk(cmd, *extra, "--views", tmp_path / "view_cut.npz")
        assert r.exit_code == 3 and "view_cut.npz" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "r").exists()


def test_quiet_fit_prints_no_table(syn, tmp_path, pk):
    args = ["mvml-fit", "--views", syn / "view1.npy", "--labels", syn / "labels.npy", "--m", "4", "--max-iter", "3"]
    loud = pk(*args, "--run-dir", tmp_path / "a")
    assert loud.exit_code == 0 and "training data" in loud.stderr
    r = pk("-q", *args, "--run-dir", tmp_path / "q")  # -q on the group, not the command
    assert r.exit_code == 0 and r.stderr == "", r.stderr
    assert json.loads(r.stdout)["iterations"] == 3


def test_views_list_and_stdin_once(syn, tmp_path, pk):
    r = pk("mvml-fit", "--views", f"{syn / 'view1.npy'},,{syn / 'view2.npy'}", "--labels", syn / "labels.npy",
           "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "--views" in r.stderr and "empty item" in r.stderr
    r = pk("mvml-fit", "--views", "-", "--labels", "-", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "stdin" in r.stderr
    assert not (tmp_path / "r").exists()


def test_make_refuses_absurd_sizes_and_needs_force(tmp_path, pk):
    d = tmp_path / "big"
    r = pk("mvml-make", "--dataset", "synthetic", "--n", "100000000000", "--run-dir", d)
    assert r.exit_code == 2 and "--max-memory-gb" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not d.exists()
    r = pk("mvml-make", "--dataset", "planted", "--n", "50", "--out", d)
    assert r.exit_code == 2 and "--out" in r.stderr  # the option is --run-dir now
    d = tmp_path / "small"
    args = ["mvml-make", "--dataset", "planted", "--n", "50", "--run-dir", d]
    assert pk(*args).exit_code == 0
    before = (d / "view1.npy").read_bytes()
    assert pk(*args).exit_code == 1  # a finished run is not overwritten
    assert pk(*args, "--force").exit_code == 0
    assert (d / "view1.npy").read_bytes() == before and np.load(d / "labels.npy").shape[0] == 50


def test_cv_splits_are_stages_of_the_run(syn, tmp_path, pk):
    d = tmp_path / "cv"
    args = ["mvml-fit", "--views", syn / "view1.npy", "--labels", syn / "labels.npy", "--m", "4", "--max-iter", "3",
            "--cv", "2", "-q", "--run-dir", d]
    assert pk(*args).exit_code == 0
    before = (d / "splits.csv").read_bytes()
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == ["split0.json", "split1.json"]
    (d / "manifest.json").unlink()
    (d / "checkpoints" / "split1.json").unlink()
    stamp = (d / "checkpoints" / "split0.json").stat().st_mtime_ns
    assert pk(*args, "--resume").exit_code == 0
    assert (d / "checkpoints" / "split0.json").stat().st_mtime_ns == stamp
    assert (d / "splits.csv").read_bytes() == before


def test_fit_settings_defaults_are_the_estimators():
    import dataclasses

    from paperkit.methods.mvml import TMvML
    from paperkit.methods.mvml.run import MODEL_FIELDS, FitSettings

    settings = FitSettings()
    model = TMvML()
    for name in MODEL_FIELDS:
        assert getattr(settings, name) == getattr(model, name), name
    assert set(MODEL_FIELDS) <= {f.name for f in dataclasses.fields(FitSettings)}


# ------------------------------------------------------------------------------ issue 29: usability
def _labels_csv(syn, tmp_path, names):
    Y = np.load(syn / "labels.npy").astype(int)
    path = tmp_path / "labels.csv"
    path.write_text(",".join(names) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in Y))
    return path, Y.shape[1]


FAST_FIT = ["--m", "4", "--max-iter", "5", "--solver", "numpy", "--map", "pca"]


def test_label_names_from_the_header_reach_the_model_and_predictions(syn, tmp_path, pk):
    q = np.load(syn / "labels.npy").shape[1]
    names = [f"tag{j}" for j in range(q)]
    labels, _ = _labels_csv(syn, tmp_path, names)
    r = pk("mvml-fit", "--views", _views(syn), "--labels", labels, *FAST_FIT, "--run-dir", tmp_path / "a", "-q")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["labels"] == names
    assert json.loads((tmp_path / "a" / "metrics.json").read_text())["label_names"] == names
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "--format", "csv")
    assert r.exit_code == 0, r.stderr
    header = r.stdout.splitlines()[0].split(",")
    assert header == [f"score_{n}" for n in names] + [f"label_{n}" for n in names]
    # --label-names overrides; a wrong count is one line, exit 3
    other = tmp_path / "names.txt"
    other.write_text("".join(f"L{j}\n" for j in range(q)))
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "--label-names", other,
           "--what", "labels", "--format", "csv")
    assert r.stdout.splitlines()[0] == ",".join(f"label_L{j}" for j in range(q))
    other.write_text("a,b\n")
    r = pk("mvml-fit", "--views", _views(syn), "--labels", labels, "--label-names", other, *FAST_FIT,
           "--run-dir", tmp_path / "b")
    assert r.exit_code == 3 and f"2 label names for {q} label columns" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "b").exists()


def test_without_names_columns_are_0_based(syn, tmp_path, pk):
    q = np.load(syn / "labels.npy").shape[1]
    assert pk("mvml-fit", "--views", _views(syn), "--labels", syn / "labels.npy", *FAST_FIT,
              "--run-dir", tmp_path / "a", "-q").exit_code == 0
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "--what", "scores",
           "--format", "csv")
    assert r.stdout.splitlines()[0] == ",".join(f"score_{j}" for j in range(q))
    # a view of the wrong width names the file and its 0-based position
    np.save(tmp_path / "narrow.npy", np.load(syn / "view2.npy")[:, :-1])
    views = f"{syn / 'view1.npy'},{tmp_path / 'narrow.npy'},{syn / 'view3.npy'}"
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", views)
    assert r.exit_code == 3 and "narrow.npy: view 1 (0-based) has" in r.stderr


def test_summary_lists_every_method_and_says_what_scores_are(syn, tmp_path, pk):
    args = ["--views", _views(syn), "--labels", syn / "labels.npy", *FAST_FIT, "--cv", "1",
            "--methods", "tmvml,ridge-view,mlknn"]
    r = pk("mvml-fit", *args, "--run-dir", tmp_path / "a", "-q")
    assert r.exit_code == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["methods"] == ["tmvml", "ridge-view", "mlknn"]
    assert set(s["cv_average_precision"]) == {"tmvml", "ridge-view", "mlknn"}
    report = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert "not a probability" in report["scores"]["tmvml"] and "probabilities" in report["scores"]["mlknn"]
    text = " ".join(pk("mvml-fit", "--help").stdout.split())
    assert "Scores are not probabilities" in text and "numbered from 0" in text
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "-o", tmp_path / "p.csv")
    manifest = json.loads((tmp_path / "p.csv.manifest.json").read_text())
    assert "not a probability" in manifest["extra"]["scores"]


def test_calibrate_gives_probabilities_in_the_model_and_predictions(syn, tmp_path, pk):
    q = np.load(syn / "labels.npy").shape[1]
    r = pk("mvml-fit", "--views", _views(syn), "--labels", syn / "labels.npy", *FAST_FIT, "--calibrate",
           "--run-dir", tmp_path / "a", "-q")
    assert r.exit_code == 0, r.stderr
    P = np.load(tmp_path / "a" / "probabilities.npy")
    assert P.shape == (100, q) and ((P > 0) & (P < 1)).all()
    c = json.loads((tmp_path / "a" / "metrics.json").read_text())["calibration"]
    assert c["method"] == "platt" and c["n_calibration"] == 30 and len(c["a"]) == q
    r = pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "--format", "csv")
    assert r.exit_code == 0, r.stderr
    header = r.stdout.splitlines()[0].split(",")
    assert header[q:2 * q] == [f"prob_{j}" for j in range(q)]
    out = tmp_path / "p.npy"
    assert pk("mvml-predict", "--model", tmp_path / "a" / "model.npz", "--views", _views(syn), "--what",
              "probabilities", "-o", out).exit_code == 0
    np.testing.assert_allclose(np.load(out), P)
    # an uncalibrated model has no probabilities: a usage error, one line
    assert pk("mvml-fit", "--views", _views(syn), "--labels", syn / "labels.npy", *FAST_FIT,
              "--run-dir", tmp_path / "b", "-q").exit_code == 0
    r = pk("mvml-predict", "--model", tmp_path / "b" / "model.npz", "--views", _views(syn), "--what", "probabilities")
    assert r.exit_code == 2 and "not calibrated" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_select_chooses_by_inner_cv_and_reports_it(syn, tmp_path, pk):
    """--select: λ, δ (and m) chosen by inner CV of the training data — of all of it for the saved model,
    of each --cv split's training part for the split — written to metrics.json, the summary and the
    manifest; the saved model carries the chosen values; --resume keeps the selection stage."""
    args = ["--views", _views(syn), "--labels", syn / "labels.npy", "--m", "6", "--max-iter", "10", "--cv", "1",
            "--select", "--select-folds", "2", "--grid-lam", "0.1,10", "--grid-delta", "1", "--grid-m", "4,6"]
    r = pk("mvml-fit", *args, "--run-dir", tmp_path / "s")
    assert r.exit_code == 0, r.stderr
    report = json.loads((tmp_path / "s" / "metrics.json").read_text())
    sel = report["select"]
    assert sel["grid"] == {"lam": [0.1, 10.0], "delta": [1.0], "m": [4, 6]} and sel["folds"] == 2
    assert len(sel["inner_cv"]) == 4 and all(len(row["scores"]) == 2 for row in sel["inner_cv"])
    best = max(sel["inner_cv"], key=lambda row: row["mean"])
    assert sel["chosen"] == {k: best[k] for k in ("lam", "delta", "m")}
    assert json.loads(r.stdout)["selected"] == sel["chosen"]
    assert set(report["cv"]["selected"][0]["chosen"]) == {"lam", "delta", "m"}
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["extra"]["select"]["chosen"] == sel["chosen"]
    assert "chosen" in r.stderr and "inner 2-fold CV" in r.stderr
    from paperkit.core import io
    from paperkit.methods.mvml import TMvML

    model = TMvML.from_arrays(io.read_arrays(tmp_path / "s" / "model.npz"))
    assert (model.lam, model.m) == (sel["chosen"]["lam"], sel["chosen"]["m"])
    assert (tmp_path / "s" / "checkpoints" / "select.json").exists()


def test_select_refuses_a_grid_with_nothing_to_choose(syn, tmp_path, pk):
    r = pk("mvml-fit", "--views", _views(syn), "--labels", syn / "labels.npy", "--penalty", "none", "--select",
           "--run-dir", tmp_path / "n")
    assert r.exit_code == 2 and "nothing to choose" in r.stderr
