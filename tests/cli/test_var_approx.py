"""var-approx commands: outputs, same seed same bytes, shards = unsharded, exit codes for bad input."""

import json

import numpy as np
import pytest

COMMON = ["--steps", "5", "--n-train", "32", "--n-test", "16", "--batch-size", "8", "--device", "cpu", "-q"]
TINY = [*COMMON, "--width", "4", "--embed", "4"]


def test_fit_writes_outputs_and_same_seed_same_metrics(pk, tmp_path):
    for name in ("a", "b"):
        r = pk("var-approx", *TINY, "--mask", "block", "--run-dir", tmp_path / name)
        assert r.exit_code == 0, r.stderr
        assert json.loads(r.stdout)["tokens"] == 84
    a, b = (tmp_path / n / "metrics.json" for n in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()
    m = json.loads(a.read_text())
    assert {"train_rmse", "test_rmse", "test_rel_l2", "test_max_error", "parameters", "attention_pairs"} <= set(m)
    assert m["attention_pairs"] == 4 * 4 + 16 * 20 + 64 * 84        # block mask: scales <= own
    for f in ("model.pt", "pred_grid.png", "manifest.json"):
        assert (tmp_path / "a" / f).is_file()


def test_flow_head_writes_history(pk, tmp_path):
    r = pk("var-approx", *TINY, "--head", "flow", "--run-dir", tmp_path / "f")
    assert r.exit_code == 0, r.stderr
    m = json.loads((tmp_path / "f" / "metrics.json").read_text())
    assert "sample_mean_mse" in m and (tmp_path / "f" / "flow_history.csv").is_file()


def test_optimiser_settings_from_a_config_file_equal_the_options(pk, tmp_path):
    """Config keys lr_schedule, warmup_frac, beta2, standardize_targets reach the fit as their options do."""
    (tmp_path / "c.yaml").write_text("lr: 0.003\nlr_schedule: constant\nwarmup_frac: 0.1\nbeta2: 0.999\n"
                                     "standardize_targets: false\n")
    r = pk("var-approx", *TINY, "--config", tmp_path / "c.yaml", "--run-dir", tmp_path / "c")
    assert r.exit_code == 0, r.stderr
    r = pk("var-approx", *TINY, "--lr", "0.003", "--lr-schedule", "constant", "--warmup-frac", "0.1", "--beta2",
           "0.999", "--no-standardize-targets", "--run-dir", tmp_path / "o")
    assert r.exit_code == 0, r.stderr
    c, o = (json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("c", "o"))
    assert c == o and c["problem"]["lr_schedule"] == "constant" and c["problem"]["standardize_targets"] is False
    d = json.loads((tmp_path / "c" / "metrics.json").read_text())
    r = pk("var-approx", *TINY, "--run-dir", tmp_path / "d")
    assert json.loads((tmp_path / "d" / "metrics.json").read_text())["test_rmse"] != d["test_rmse"]
    (tmp_path / "bad.yaml").write_text("lr_schedule: step\n")
    r = pk("var-approx", *TINY, "--config", tmp_path / "bad.yaml", "--run-dir", tmp_path / "b")
    assert r.exit_code == 2 and "step" in r.stderr and r.stderr.count("\n") == 1


def test_pyramid_and_construct(pk, tmp_path):
    x = np.random.default_rng(0).uniform(size=(3, 2, 2, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = pk("var-approx-pyramid", "--input", tmp_path / "x.npy", "--scales", "2,4,8", "-o", tmp_path / "p.npy")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["tokens"] == 84 and np.load(tmp_path / "p.npy").shape == (3, 84, 4)
    r = pk("var-approx-construct", "--init", "2x2", "--dim", "1", "--delta", "0.25", "-q")
    assert r.exit_code == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["distinct_before"] and rep["distinct_after"]


def test_merged_shards_equal_unsharded_sweep(pk, tmp_path):
    args = ["var-approx-sweep", "--widths", "4,8", "--lipschitz", "1,2", "--seeds", "0,1", "--embeds", "4", *COMMON]
    assert pk(*args, "--run-dir", tmp_path / "all").exit_code == 0
    for k in (1, 2):
        assert pk(*args, "--shard", f"{k}/2", "--run-dir", tmp_path / f"s{k}").exit_code == 0
    r = pk(*args, "--merge", tmp_path / "s1", "--merge", tmp_path / "s2", "--run-dir", tmp_path / "m")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "m" / "sweep.csv").read_bytes() == (tmp_path / "all" / "sweep.csv").read_bytes()
    assert (tmp_path / "m" / "summary.json").read_bytes() == (tmp_path / "all" / "summary.json").read_bytes()


def test_tokenize_writes_error_per_scale_and_same_seed_same_bytes(pk, tmp_path):
    args = ["var-approx-tokenize", "--side", "8", "--scales", "1,2,4,8", "--codebook", "4", "--n-images", "60",
            "--n-test", "20", "--kmeans-init", "1", "-q"]
    for name in ("a", "b"):
        r = pk(*args, "--run-dir", tmp_path / name)
        assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["tokens"] == 85
    a, b = ((tmp_path / n / "tokenize.csv").read_bytes() for n in ("a", "b"))
    assert a == b and a.decode().splitlines()[0].startswith("scales_used,side,tokens,bits")
    assert len(a.decode().splitlines()) == 5
    for f in ("tokenize.png", "recon.png", "codebooks.npz"):
        assert (tmp_path / "a" / f).is_file()


@pytest.mark.parametrize("args, code, words", [
    (["var-approx", "--scales", "4,2,8"], 2, "increasing"),
    (["var-approx", "--scales", "1,4,8"], 2, "below the initial"),
    (["var-approx", "--init", "2by2"], 2, "HxW"),
    (["var-approx", "--width", "0"], 2, "--width"),
    (["var-approx", "--embed", "-1"], 2, "--embed"),
    (["var-approx", "--steps", "0"], 2, "--steps"),
    (["var-approx", "--lipschitz", "0"], 2, "--lipschitz"),
    (["var-approx", "--lipschitz", "nan"], 2, "--lipschitz"),
    (["var-approx", "--target", "digits", "--pca-dim", "9"], 2, "--pca-dim"),
    (["var-approx", "--target", "digits", "--pca-dim", "1"], 2, "--pca-dim"),
    (["var-approx", "--target", "nope"], 2, "--target"),
    (["var-approx", "--ablate", "nope"], 2, "--ablate"),
    (["var-approx", "--width", "10000000"], 2, "--width"),
    (["var-approx", "--lr-schedule", "step"], 2, "--lr-schedule"),
    (["var-approx", "--warmup-frac", "1"], 2, "--warmup-frac"),
    (["var-approx", "--warmup-frac", "-0.1"], 2, "--warmup-frac"),
    (["var-approx", "--beta2", "1"], 2, "--beta2"),
    (["var-approx", "--lr", "nan"], 2, "--lr"),
    (["var-approx-sweep", "--beta2", "-0.5"], 2, "--beta2"),
    (["var-approx-sweep", "--lr-schedule", "cosine"], 2, "--lr-schedule"),
    (["var-approx-sweep", "--shard", "3/2"], 2, "K <= N"),
    (["var-approx-sweep", "--shard", "x"], 2, "K/N"),
    (["var-approx-sweep", "--targets", "nope"], 2, "nope"),
    (["var-approx-sweep", "--merge", "no-such-dir"], 3, "no-such-dir"),
    (["var-approx-construct", "--delta", "0.3"], 2, "1/k"),
    # a huge count is shown as a power (formatting 4**10000 exceeded str()'s digit limit: exit 70)
    (["var-approx-construct", "--init", "100x100", "--scales", "200"], 2, "4^10000"),
    # the sweep's errors name its own list options, with the value as typed
    (["var-approx-sweep", "--widths", "2,4", "--schedules", "8-4-2"], 2, "--schedules 8-4-2 must be strictly"),
    (["var-approx-sweep", "--widths", "2,100000"], 2, "--widths 100000"),
    (["var-approx-sweep", "--embeds", "100000"], 2, "--embeds 100000"),
    (["var-approx-sweep", "--widths", "2", "--lipschitz", "1", "--embeds", "2", "--seeds", "0", "--steps", "1",
      "--n-train", "4", "--n-test", "2", "--batch-size", "2", "--device", "cpu"], 2, "at least 2 widths"),
    (["var-approx-sweep", "--widths", "2,4", "--lipschitz", "1", "--embeds", "2", "--shard", "3/3"], 2, "no cells"),
    (["var-approx", *TINY, "--readout", "pyramid", "--ablate", "no-pyramid"], 2, "--readout pyramid"),
    (["var-approx-tokenize", "--scales", "1,2,4"], 2, "last scale"),
    (["var-approx-tokenize", "--scales", "4,2,16"], 2, "increasing"),
    (["var-approx-tokenize", "--patch", "3"], 2, "divide"),
    (["var-approx-tokenize", "--codebook", "1"], 2, "--codebook"),
    (["var-approx-tokenize", "--n-test", "2000"], 2, "--n-test"),
    (["var-approx-tokenize", "--side", "0"], 2, "--side"),
])
def test_bad_options(pk, tmp_path, args, code, words):
    run_dir = tmp_path / "run"
    extra = [] if args[0] == "var-approx-construct" else ["--run-dir", run_dir]
    r = pk(*args, *extra)
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert words in r.stderr and r.stderr.count("\n") == 1
    assert not run_dir.exists() or args[1] == "--merge"


@pytest.mark.parametrize("make, words", [
    (lambda p: np.save(p, np.ones((2, 2))), "rank"),
    (lambda p: np.save(p, np.full((1, 2, 2, 1), np.nan)), "NaN"),
    (lambda p: p.write_bytes(b"\x93NUMPY\x01"), "x.npy"),
    (lambda p: np.save(p, np.zeros((0, 2, 2, 1))), "holds no maps"),      # torch's interpolation used to crash
    (lambda p: np.save(p, np.zeros((3, 2, 2, 0))), "holds no maps"),
])
def test_bad_pyramid_input(pk, tmp_path, make, words):
    make(tmp_path / "x.npy")
    r = pk("var-approx-pyramid", "--input", tmp_path / "x.npy", "-o", tmp_path / "p.npy")
    assert r.exit_code == 3, r.stderr
    assert words in r.stderr


def _sweep_csv(path, rmse=("0.5", "0.25")):
    path.mkdir()
    rows = [f"{i},fourier,1.0,{w},2,2-4-8,0,0.4,{e},0.1,0.9,50,84" for i, (w, e) in enumerate(zip((2, 4), rmse, strict=True))]
    (path / "sweep.csv").write_text("cell,target,lipschitz,width,embed,scales,seed,train_rmse,test_rmse,test_rel_l2,"
                                    "test_max_error,parameters,tokens\n" + "\n".join(rows) + "\n")


def test_merge_refuses_non_finite_results(pk, tmp_path):
    """A NaN test RMSE in a shard gave exit 0, a NaN slope and bare NaN (not JSON) on stdout."""
    _sweep_csv(tmp_path / "ok")
    r = pk("var-approx-sweep", "--merge", tmp_path / "ok", "--run-dir", tmp_path / "m", "-q")
    assert r.exit_code == 0, r.stderr

    def strict(c):
        raise ValueError(c)
    assert json.loads(r.stdout, parse_constant=strict)["slopes"] == {"fourier/L=1/D=2/2-4-8": -1.0}
    for name, rmse in (("nan", ("nan", "0.25")), ("inf", ("0.5", "inf")), ("zero", ("0", "0.25"))):
        _sweep_csv(tmp_path / name, rmse)
        r = pk("var-approx-sweep", "--merge", tmp_path / name, "--run-dir", tmp_path / f"m_{name}")
        assert r.exit_code == 3, (name, r.stderr)
        assert "sweep.csv" in r.stderr and "test_rmse" in r.stderr and r.stderr.count("\n") == 1
        assert not (tmp_path / f"m_{name}").exists()
