"""symeq-basis and symeq-fit: JSON and run-dir outputs, same seed same bytes, bad input exit codes."""

import json

import numpy as np
import pytest

from paperkit.methods.symeq.symtensor import pack, symmetrize

FAST = ("--steps", "30", "--n-test", "64", "--hidden", "4", "--mlp-width", "16", "-j", "1", "-q")


def test_basis_json_dense_and_change_of_basis(pk, tmp_path):
    r = pk("symeq-basis", "--k", "2", "--l", "2", "--n", "2")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["size"] == 5 and out["stable_size"] == 9
    dense = tmp_path / "b.npy"
    r = pk("symeq-basis", "--k", "2", "--l", "1", "--n", "4", "--kind", "diagram", "--dense", dense)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    D, C = np.load(dense), np.array(out["change_of_basis"]["D_in_X"])
    assert D.shape == (4, 4, 10) and np.linalg.matrix_rank(D.reshape(4, -1)) == 4
    assert out["change_of_basis"]["X_in_D"][0][0] == "1/2" and C[0, 0] == 2


def test_fit_writes_outputs_same_seed_same_bytes_and_resumes(pk, tmp_path):
    runs = []
    for name in ("a", "b"):
        r = pk("symeq-fit", "--task", "B", "--n", "4", "--sweep", "8,16", "--test-n", "5", "--seeds", "0,1",
               "--model", "equivariant,mlp,maron", *FAST, "--run-dir", tmp_path / name)
        assert r.exit_code == 0, r.stderr
        runs.append(tmp_path / name)
    for f in ("metrics.json", "curve.csv", "fits.csv", "transfer.csv", "basis.json"):
        assert (runs[0] / f).read_bytes() == (runs[1] / f).read_bytes(), f
    for f in ("model.pt", "learning_curve.png", "transfer.png", "manifest.json"):
        assert (runs[0] / f).is_file()
    m = json.loads((runs[0] / "metrics.json").read_text())
    assert m["basis_size"] == 4 and m["models"]["equivariant"]["test_mse"]["5"]["mean"] > 0
    assert "5" not in m["models"]["mlp"]["test_mse"]  # an MLP cannot run at another n
    assert len((runs[0] / "curve.csv").read_text().splitlines()) == 1 + 3 * 2
    r = pk("symeq-fit", "--task", "B", "--n", "4", "--sweep", "8,16", "--test-n", "5", "--seeds", "0,1",
           "--model", "equivariant,mlp,maron", *FAST, "--run-dir", runs[0], "--resume")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["equivariant"] == m["models"]["equivariant"]["test_mse"]["4"]["mean"]


def test_fit_on_user_data_full_and_packed(pk, tmp_path):
    rng = np.random.default_rng(0)
    X = symmetrize(rng.standard_normal((40, 4, 4)), 2)
    y = (X ** 2).mean(2)
    np.savez(tmp_path / "full.npz", X=X, y=y)
    np.savez(tmp_path / "packed.npz", X=pack(X, 2), y=y)
    for f in ("full.npz", "packed.npz"):
        r = pk("symeq-fit", "--data", tmp_path / f, "--k", "2", "--l", "1", "--test-n", "", "--n-train", "20",
               "--seeds", "0", "--model", "equivariant,mlp", *FAST, "--run-dir", tmp_path / f"r-{f}")
        assert r.exit_code == 0, r.stderr
    a, b = (json.loads((tmp_path / f"r-{f}" / "metrics.json").read_text()) for f in ("full.npz", "packed.npz"))
    assert a["models"] == b["models"]


def _npz(tmp_path, name, **arrays):
    np.savez(tmp_path / name, **arrays)
    return tmp_path / name


@pytest.mark.parametrize("case, code, words", [
    ("asym", 3, "not symmetric"),
    ("shape", 3, "packed length"),
    ("ndim", 3, "shape"),
    ("y", 3, "y has shape"),
    ("nan", 3, "NaN"),
    ("missing", 3, "missing"),
    ("text", 3, ""),
])
def test_fit_bad_data(pk, tmp_path, case, code, words):
    rng = np.random.default_rng(0)
    X = symmetrize(rng.standard_normal((12, 3, 3)), 2)
    y = X.sum(2)
    arrays = {"asym": {"X": X + np.triu(np.ones((3, 3)), 1) * 0.5, "y": y},
              "shape": {"X": rng.standard_normal((12, 7)), "y": y},
              "ndim": {"X": rng.standard_normal((12, 3, 4)), "y": y},
              "y": {"X": X, "y": rng.standard_normal((12, 4))},
              "nan": {"X": np.where(np.eye(3, dtype=bool), np.nan, X), "y": y},
              "missing": {"X": X}}
    if case == "text":
        path = tmp_path / "t.npz"
        path.write_bytes(b"\xff\xfenot an npz")
    else:
        path = _npz(tmp_path, "d.npz", **arrays[case])
    r = pk("symeq-fit", "--data", path, "--test-n", "", "--n-train", "4", "--run-dir", tmp_path / "r")
    assert r.exit_code == code, r.stderr
    assert r.stderr.startswith("paperkit symeq-fit: error:") and words in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_fit_symmetrize_flag_accepts_asymmetric_input(pk, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((24, 3, 3))
    path = _npz(tmp_path, "d.npz", X=X, y=X.sum(2))
    r = pk("symeq-fit", "--data", path, "--test-n", "", "--n-train", "8", "--seeds", "0", "--model", "mlp",
           "--symmetrize", *FAST, "--run-dir", tmp_path / "r")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("args, code, words", [
    (["symeq-basis", "--k", "7"], 2, "above 6"),
    (["symeq-basis", "--k", "-1"], 2, "--k -1: expected a tensor order in 0..6"),   # said "above 6"
    # the memory refusals name the options that size the data (they named --sweep and a bare "n", and offered
    # to "raise the limit" with them)
    (["symeq-fit", "--n", "3", "--n-train", "1000000000000", "--n-test", "8", "--test-n", "", "--steps", "1"], 2,
     "the generated data (sized by --n-train or --sweep"),
    (["symeq-fit", "--n", "1000000000000", "--n-train", "8", "--n-test", "8", "--test-n", "", "--steps", "1"], 2,
     "(sized by --n, --test-n, --hidden"),
    (["symeq-basis", "--n", "0"], 2, "at least 1"),
    (["symeq-basis", "--k", "4", "--l", "4", "--n", "40", "--dense", "x.npy"], 2, "elements"),
    (["symeq-basis", "--k", "6", "--l", "6", "--kind", "diagram"], 2, "change of basis"),
    (["symeq-fit", "--task", "D"], 2, "--task"),
    (["symeq-fit", "--model", "cnn"], 2, "cnn"),
    (["symeq-fit", "--n", "0"], 2, "at least 1"),
    (["symeq-fit", "--task", "C", "--l", "9"], 2, "above 6"),
    (["symeq-fit", "--task", "C", "--k", "3", "--n", "2000"], 2, "memory"),
    (["symeq-fit", "--test-data", "x.npz"], 2, "--data"),
    (["symeq-fit", "--data", "nope.npz", "--test-n", ""], 3, "nope.npz"),
])
def test_bad_options(pk, tmp_path, args, code, words):
    r = pk(*args, "--run-dir", tmp_path / "r") if args[0] == "symeq-fit" else pk(*args)
    assert r.exit_code == code, r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1
