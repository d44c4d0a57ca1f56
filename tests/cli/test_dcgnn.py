"""dcgnn-* commands: outputs, same seed ⇒ same metrics.json, the model feeding faith and explain, and the
issue's bad-input list (one line naming the key or value, exit 2 or 3, no run dir)."""

import json

import numpy as np
import pytest

from paperkit.methods.dcgnn.data import generate, write_npz


@pytest.fixture(scope="module")
def motif_npz(tmp_path_factory):
    p = tmp_path_factory.mktemp("dcgnn") / "motif.npz"
    write_npz(p, generate("motif", 60, seed=0))
    return p


_FITTED: list = []


@pytest.fixture
def fitted(pk, motif_npz, tmp_path_factory):
    """Two identical fits, made once for the module (pk is function-scoped)."""
    if _FITTED:
        return _FITTED
    d = tmp_path_factory.mktemp("fit")
    runs = _FITTED
    for name in ("a", "b"):
        r = pk("dcgnn-fit", "--data", motif_npz, "--epochs", "2", "--warmup", "1", "--hidden", "8",
               "--constant-feature", "--seeds", "0,1", "--device", "cpu", "-j", "1", "--run-dir", d / name)
        assert r.exit_code == 0, r.stderr
        runs.append((d / name, r))
    return runs


def test_fit_writes_outputs_and_same_seed_same_metrics(fitted):
    (a, ra), (b, _) = fitted
    for f in ("metrics.json", "rules.json", "edge_masks.npy", "per_seed.csv", "model.pt", "relevance.png",
              "sample_graphs.png", "manifest.json"):
        assert (a / f).is_file(), f
    assert (a / "metrics.json").read_bytes() == (b / "metrics.json").read_bytes()
    assert (a / "edge_masks.npy").read_bytes() == (b / "edge_masks.npy").read_bytes()
    m = json.loads((a / "metrics.json").read_text())
    assert m["model"] == "DC-SMGNN" and m["seeds"] == [0, 1] and m["classes"] == ["house", "cycle", "crane"]
    assert m["summary"]["explanation_auroc"] is not None
    assert np.load(a / "edge_masks.npy").shape[0] == 2
    line = json.loads(ra.stdout)
    assert line["model"] == "DC-SMGNN" and 0 <= line["test_acc"]["mean"] <= 1
    assert ra.stderr.count("channel used:") == 2
    rules = json.loads((a / "rules.json").read_text())
    assert rules[0]["kind"] == "argmax" and set(rules[0]["classes"]) == {"house", "cycle", "crane"}


def test_fit_records_the_selected_epoch_and_saves_that_checkpoint(fitted, motif_npz):
    """The motif set's val split is OOD, so the checkpoint is chosen on id_val graphs held apart from the
    training graphs; with 1 warm-up epoch of 2 only epoch 1 is a candidate. model.pt holds the kept
    checkpoint: reloaded, it gives the per_seed.csv id_val accuracy."""
    import csv

    from paperkit.methods.dcgnn.data import load_data
    from paperkit.methods.dcgnn.run import load_model, split_indices
    from paperkit.methods.dcgnn.train import predict, split_metrics

    (a, _), _ = fitted
    m = json.loads((a / "metrics.json").read_text())
    assert m["selection"] == {"rule": "best-val", "split": "id_val", "epochs": [1, 1]}
    rows = list(csv.DictReader((a / "per_seed.csv").open()))
    gs = load_data(motif_npz)
    idx = split_indices(gs, 0)["id_val"]
    for i, row in enumerate(rows):
        assert int(row["selected_epoch"]) == 1
        model, _ = load_model(a / "model.pt", seed_index=i)
        assert split_metrics(gs, idx, predict(model, gs, idx))["acc"] == pytest.approx(float(row["id_val_acc"]))


@pytest.mark.heavy
def test_seeds_in_parallel_give_the_same_metrics(pk, tmp_path):
    """(heavy: each spawned process imports torch and PyG, ~30 s on a busy 2-core machine) -j 2 trains the two seeds in two processes; the numbers equal those of -j 1 (one thread per seed)."""
    args = ("dcgnn-fit", "--synthetic", "redblue", "--n-graphs", "40", "--epochs", "1", "--warmup", "0",
            "--hidden", "4", "--seeds", "0,1", "--device", "cpu", "-q")
    for j in ("1", "2"):
        r = pk(*args, "-j", j, "--run-dir", tmp_path / j)
        assert r.exit_code == 0, r.stderr
    rows = [(tmp_path / j / "per_seed.csv").read_text() for j in ("1", "2")]
    assert rows[0] == rows[1]


def test_memory_limit_option_named_in_the_refusal(pk, tmp_path):
    r = pk("dcgnn-fit", "--synthetic", "redblue", "--n-graphs", "100000", "--max-memory-gb", "0.001",
           "--run-dir", tmp_path / "run")
    assert r.exit_code == 2 and "--max-memory-gb" in r.stderr and not (tmp_path / "run").exists()


def test_combiner_hold_covering_every_trained_epoch_is_refused_before_the_run(pk, tmp_path):
    r = pk("dcgnn-fit", "--synthetic", "redblue", "--n-graphs", "40", "--epochs", "5", "--warmup", "2",
           "--combiner-hold", "3", "--run-dir", tmp_path / "run")
    assert r.exit_code == 2 and "--combiner-hold 3" in r.stderr and not (tmp_path / "run").exists()


def test_gen_then_fit_rule_channel_on_redblue(pk, tmp_path):
    r = pk("dcgnn-gen", "--dataset", "redblue", "--n-graphs", "40", "-o", tmp_path / "rb.npz")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["graphs"] == 40
    r = pk("dcgnn-fit", "--data", tmp_path / "rb.npz", "--channels", "rule", "--epochs", "1", "--seeds", "3",
           "--run-dir", tmp_path / "run", "-q")
    assert r.exit_code == 0, r.stderr
    rules = json.loads((tmp_path / "run" / "rules.json").read_text())
    assert set(rules[0]["terms"]) == {"red", "blue"} and rules[0]["text"].endswith("> 0")
    assert not (tmp_path / "run" / "edge_masks.npy").exists()


def test_faith_and_explain_from_saved_model(pk, fitted, motif_npz, tmp_path):
    model = fitted[0][0] / "model.pt"
    r = pk("dcgnn-faith", "--model", model, "--data", motif_npz, "--budgets", "0.05,0.1", "--samples", "1",
           "--run-dir", tmp_path / "faith", "-q")
    assert r.exit_code == 0, r.stderr
    rows = (tmp_path / "faith" / "faith.csv").read_text().splitlines()
    assert rows[0] == "seed,explanation,budget,sufficiency,necessity,faith,graphs_sufficiency,graphs_necessity"
    assert len(rows) == 1 + 2 * 3 * 2      # seeds × {model, random, ground truth} × budgets
    out = json.loads(r.stdout)
    assert set(out["mean_faith"]) == {"model", "random", "ground_truth"} and out["random_over_model"] >= 0
    r = pk("dcgnn-explain", "--model", model, "--data", motif_npz, "--max-graphs", "3", "--top-k", "2")
    assert r.exit_code == 0, r.stderr
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(recs) == 3 and all(len(x["top_edges"]) == 2 and x["top_edges"][0][0] < x["top_edges"][0][1] for x in recs)
    assert recs[0]["prediction"] in ("house", "cycle", "crane") and "rule_terms" not in recs[0]


def _npz(path, **edits):
    d = generate("motif", 10, seed=0).arrays()
    d["x"] = d["x"].copy()
    for k, v in edits.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v(d) if callable(v) else v
    np.savez(path, **d)
    return path


BAD = [
    ({"graph_ptr": None}, "missing key 'graph_ptr'"),
    ({"graph_ptr": lambda d: d["graph_ptr"][:-1]}, "graph_ptr"),
    ({"edge_index": lambda d: d["edge_index"] + 10**6}, "outside"),
    ({"y": lambda d: np.zeros_like(d["y"])}, "single class"),
    ({"y": lambda d: d["y"] + 0.5}, "non-integer"),
    ({"edge_gt": lambda d: d["edge_gt"][:-2]}, "edge_gt"),
    ({"x": lambda d: np.where(np.arange(len(d["x"]))[:, None] == 3, np.nan, d["x"])}, "NaN"),
]


@pytest.mark.parametrize("edits, words", BAD)
def test_bad_npz_one_line_exit_3(pk, tmp_path, edits, words):
    r = pk("dcgnn-fit", "--data", _npz(tmp_path / "g.npz", **edits), "--run-dir", tmp_path / "run")
    assert r.exit_code == 3, r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_rule_channel_without_features_refused(pk, tmp_path):
    r = pk("dcgnn-fit", "--data", _npz(tmp_path / "g.npz"), "--channels", "rule", "--run-dir", tmp_path / "run")
    assert r.exit_code == 3 and "needs node features" in r.stderr


def test_unknown_segnn_and_source_errors(pk, tmp_path):
    r = pk("dcgnn-fit", "--synthetic", "redblue", "--segnn", "pgexplainer", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "pgexplainer" in r.stderr
    r = pk("dcgnn-fit", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "exactly one of --data" in r.stderr
    r = pk("dcgnn-gen", "--dataset", "redblue", "--ood", "large", "-o", tmp_path / "x.npz")
    assert r.exit_code == 2 and "--ood" in r.stderr


def test_tu_folder_without_raw_files(pk, tmp_path):
    (tmp_path / "MUTAG" / "raw").mkdir(parents=True)
    r = pk("dcgnn-fit", "--data", tmp_path / "MUTAG", "--run-dir", tmp_path / "run")
    assert r.exit_code == 3 and "MUTAG_A.txt is missing" in r.stderr and "download" in r.stderr


def test_faith_refuses_a_non_model(pk, tmp_path, motif_npz):
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"not a model")
    r = pk("dcgnn-faith", "--model", bad, "--data", motif_npz, "--run-dir", tmp_path / "run")
    assert r.exit_code == 3 and "model.pt" in r.stderr and not (tmp_path / "run").exists()


def test_resume_loads_the_finished_seeds_checkpoints(pk, tmp_path):
    """A run stopped after seed 0: --resume loads seed 0's checkpoint (its mask was a numpy array, which the
    weights-only loader refused, exit 3) and ends where an uninterrupted run ends."""
    args = ("dcgnn-fit", "--synthetic", "redblue", "--n-graphs", "40", "--epochs", "1", "--warmup", "0",
            "--hidden", "4", "--seeds", "0,1", "--device", "cpu", "-j", "1", "-q")
    assert pk(*args, "--run-dir", tmp_path / "full").exit_code == 0
    r = pk(*args, "--run-dir", tmp_path / "cut")
    assert r.exit_code == 0, r.stderr
    (tmp_path / "cut" / "checkpoints" / "seed1.pt").unlink()   # as if stopped while seed 1 trained
    (tmp_path / "cut" / "per_seed.csv").unlink()
    r = pk(*args, "--run-dir", tmp_path / "cut", "--resume")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "cut" / "per_seed.csv").read_text() == (tmp_path / "full" / "per_seed.csv").read_text()


def test_label_far_above_the_graph_count_refused_before_any_work(pk, tmp_path):
    """A stray label of 10^6 made 10^6 + 1 classes: names, metrics and a combiner of 10^13 weights (exit 70,
    or an OOM kill for 10^9)."""
    bad = _npz(tmp_path / "g.npz", y=lambda d: np.where(np.arange(len(d["y"])) == 0, 10**6, d["y"]))
    r = pk("dcgnn-fit", "--data", bad, "--epochs", "1", "--hidden", "4", "--device", "cpu",
           "--run-dir", tmp_path / "run")
    assert r.exit_code == 3, r.stderr
    assert "label 1000000" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def _edit_model(src, dst, **edits):
    import torch

    blob = torch.load(src, weights_only=True)
    for k, v in edits.items():
        blob[k] = v(blob) if callable(v) else v
    torch.save(blob, dst)
    return dst


def _nan_first(blob):
    sd = dict(blob["state_dicts"][0])
    k = next(iter(sd))
    sd[k] = sd[k] * float("nan")
    return [sd] + blob["state_dicts"][1:]


BAD_MODELS = [
    ({"config": lambda b: dict(b["config"], bogus=1)}, "config.bogus"),
    ({"config": "hello"}, "'config' is a str"),
    ({"config": lambda b: dict(b["config"], hidden=-3)}, "config.hidden"),
    ({"config": lambda b: dict(b["config"], hidden=5)}, "has shape"),
    ({"config": lambda b: dict(b["config"], channels="both")}, "config.channels"),
    ({"d_in": 5}, "'d_in' is 5"),
    ({"n_classes": 10**6}, "'n_classes' is 1000000"),
    ({"temperatures": []}, "'temperatures'"),
    ({"seeds": [0]}, "'seeds'"),
    ({"state_dicts": _nan_first}, "NaN"),
    ({"state_dicts": []}, "no trained seeds"),
]


@pytest.mark.parametrize("edits, words", BAD_MODELS)
def test_corrupt_model_file_refused_in_one_line(pk, fitted, motif_npz, tmp_path, edits, words):
    """Each of these gave exit 70 (TypeError, RuntimeError, IndexError, an 8e13-byte allocation) or, for NaN
    weights, exit 0 with null probabilities; an empty model named --seed-index, which dcgnn-faith lacks."""
    bad = _edit_model(fitted[0][0] / "model.pt", tmp_path / "model.pt", **edits)
    r = pk("dcgnn-explain", "--model", bad, "--data", motif_npz, "--max-graphs", "2", "--device", "cpu")
    assert r.exit_code == 3, r.stderr
    assert words in r.stderr and "model.pt" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    if words in ("NaN", "no trained seeds"):
        r = pk("dcgnn-faith", "--model", bad, "--data", motif_npz, "--samples", "1", "--device", "cpu",
               "--run-dir", tmp_path / "faith")
        assert r.exit_code == 3 and words in r.stderr and "--seed-index" not in r.stderr, r.stderr
        assert not (tmp_path / "faith").exists()


def test_explain_on_data_using_some_of_the_models_classes(pk, fitted, motif_npz, tmp_path):
    """Graphs labelled with 2 of the model's 3 classes are explained in the model's classes: no probability is
    dropped (it listed 2 of 3) and a prediction of the third class is named (it was an IndexError, exit 70).
    A label the model does not know is refused."""
    model = fitted[0][0] / "model.pt"
    two = _npz(tmp_path / "two.npz", y=lambda d: d["y"] % 2, class_names=np.array(["a", "b"]))
    for seed_index in ("0", "1"):
        r = pk("dcgnn-explain", "--model", model, "--data", two, "--seed-index", seed_index, "--device", "cpu")
        assert r.exit_code == 0, r.stderr
        recs = [json.loads(x) for x in r.stdout.splitlines()]
        assert all(list(x["probs"]) == ["house", "cycle", "crane"] for x in recs)
        assert all(abs(sum(x["probs"].values()) - 1) < 1e-5 and x["label"] in ("house", "cycle") for x in recs)
    four = _npz(tmp_path / "four.npz", y=lambda d: np.where(np.arange(len(d["y"])) == 0, 3, d["y"]))
    r = pk("dcgnn-explain", "--model", model, "--data", four, "--device", "cpu")
    assert r.exit_code == 3 and "label 3" in r.stderr and "3 classes" in r.stderr, r.stderr
