"""mm-prefill / mm-prefill-search / mm-prefill-bench through the real entry point: outputs, bad input."""

import json

import numpy as np
import pytest

from paperkit.core.io import read_json
from paperkit.core.tables import read_table


@pytest.fixture(autouse=True)
def one_thread():
    """Small tensor ops are faster on one thread, and the CI machine is shared."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


SPEC = "frames: 4\nheight: 8\nwidth: 8\ntext_prefix: 32\ntext_suffix: 32\nheads: [grid, vs]\n"


@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "spec.yaml"
    p.write_text(SPEC)
    return p


def qkv_file(tmp_path, name="x.npz", shape=(2, 200, 32), dtype=np.float32, **over):
    rng = np.random.default_rng(0)
    arrays = {x: rng.standard_normal(shape).astype(dtype) for x in "qkv"}
    arrays.update(over)
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_search_then_apply(pk, spec, tmp_path):
    pat = tmp_path / "patterns.json"
    r = pk("mm-prefill-search", "--synthetic", spec, "--block-size", "32", "--density", "0.3", "-o", pat, "-q")
    assert r.exit_code == 0, r.stderr
    doc = read_json(pat)
    assert doc["heads"] == 2 and set(doc["layers"]["0"]) == {"0", "1"}
    assert (tmp_path / "patterns.json.manifest.json").exists() or any(tmp_path.glob("patterns*manifest*"))
    # same seed, same patterns bytes
    r2 = pk("mm-prefill-search", "--synthetic", spec, "--block-size", "32", "--density", "0.3", "-q")
    assert json.loads(r2.stdout) == doc
    d = tmp_path / "apply"
    r = pk("mm-prefill", "--synthetic", spec, "--block-size", "32", "--patterns", pat, "--masks", "--save-out",
           "--run-dir", d, "-q")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert len(r.stdout.strip().splitlines()) == 1 and summary["backend"] == "torch"
    rows = read_table(d / "heads.csv")
    assert set(rows.columns) >= {"layer", "head", "pattern", "density", "recall", "rel_l2", "layer_sparse_ms"}
    m = read_json(d / "metrics.json")
    assert [h["pattern"] for h in m["heads"]] == [doc["layers"]["0"][h]["pattern"] for h in ("0", "1")]
    assert all(0 < h["density"] <= 1 and 0 < h["recall"] <= 1 for h in m["heads"])
    assert (d / "masks" / "L0_H1.png").exists() and np.load(d / "out.npy").shape == (1, 2, 320, 64)
    assert read_json(d / "manifest.json")["extra"]["backend"] == "torch" if "extra" in read_json(
        d / "manifest.json") else True


def test_apply_captured_npz_and_pt_dense_is_exact(pk, tmp_path):
    import torch

    path = qkv_file(tmp_path)
    r = pk("mm-prefill", "--qkv", path, "--pattern", "dense", "--block-size", "32", "--run-dir", tmp_path / "a", "-q")
    assert r.exit_code == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["mean_density"] == 1.0 and s["mean_recall"] > 0.99999 and s["mean_rel_l2"] < 1e-5
    data = dict(np.load(path))
    pt = tmp_path / "x.pt"
    torch.save({x: torch.from_numpy(data[x])[None] for x in "qkv"}, pt)  # [L, H, N, D]
    r = pk("mm-prefill", "--qkv", pt, "--pattern", "block", "--density", "0.4", "--block-size", "32",
           "--run-dir", tmp_path / "b", "-q")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["mean_density"] <= 0.4


def test_triton_backend_in_interpreter(pk, tmp_path):
    pytest.importorskip("triton")
    path = qkv_file(tmp_path, shape=(1, 100, 16))
    r = pk("mm-prefill", "--qkv", path, "--pattern", "vs", "--density", "0.5", "--block-size", "32", "--backend",
           "triton", "--run-dir", tmp_path / "t", "-q")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["backend"] == "triton"


def test_bench_writes_csv_and_plot(pk, tmp_path):
    d = tmp_path / "bench"
    r = pk("mm-prefill-bench", "--n", "256,512", "--heads", "2", "--dim", "32", "--density", "0.2", "--repeats", "1",
           "--device", "cpu", "--run-dir", d, "-q")
    assert r.exit_code == 0, r.stderr
    rows = read_table(d / "bench.csv")
    assert list(rows.column("n")) == [256, 512] and all(x > 0 for x in rows.column("speedup"))
    assert (d / "speedup.png").exists()


@pytest.mark.parametrize("case,code,message", [
    ("shapes", 3, "shapes differ"),
    ("dtypes", 3, "dtypes differ"),
    ("short", 3, "fewer than one block"),
    ("nan", 3, "non-finite"),
    ("heads", 3, "for 3 heads"),
    ("unknown_pattern", 3, "unknown pattern 'zigzag'"),
    ("bad_choice", 2, "Invalid value for '--pattern'"),
    ("cuda", 1, "no CUDA device"),
    ("both", 2, "exactly one of"),
])
def test_bad_input_one_line_errors(pk, tmp_path, case, code, message):
    import torch

    if case == "cuda" and torch.cuda.is_available():
        pytest.skip("CUDA present")
    rng = np.random.default_rng(1)
    args = ["--pattern", "vs"]
    if case == "shapes":
        path = qkv_file(tmp_path, k=rng.standard_normal((2, 150, 32)).astype(np.float32))
    elif case == "dtypes":
        path = qkv_file(tmp_path, v=rng.standard_normal((2, 200, 32)))
    elif case == "short":
        path = qkv_file(tmp_path, shape=(2, 20, 32))
    elif case == "nan":
        bad = rng.standard_normal((2, 200, 32)).astype(np.float32)
        bad[1, 5, 3] = np.nan
        path = qkv_file(tmp_path, q=bad)
    else:
        path = qkv_file(tmp_path)
    if case in ("heads", "unknown_pattern"):
        doc = {"format": "paperkit.mm_prefill.patterns", "heads": 3 if case == "heads" else 2, "layers_count": 1,
               "layers": {"0": {str(h): {"pattern": "zigzag" if case == "unknown_pattern" else "vs", "params": {}}
                                for h in range(2)}}}
        pf = tmp_path / "p.json"
        pf.write_text(json.dumps(doc))
        args = ["--patterns", pf]
    if case == "bad_choice":
        args = ["--pattern", "zigzag"]
    if case == "cuda":
        args += ["--device", "cuda"]
    if case == "both":
        args += ["--synthetic", "video"]
    r = pk("mm-prefill", "--qkv", path, *args, "--run-dir", tmp_path / "out", "-q")
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert message in r.stderr and r.stdout == ""
    if code != 2:
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("paperkit mm-prefill: error:")
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_bench_and_search_bad_options(pk, tmp_path, spec):
    r = pk("mm-prefill-bench", "--n", "abc", "--run-dir", tmp_path / "b")
    assert r.exit_code == 2 and "comma-separated" in r.stderr
    r = pk("mm-prefill-bench", "--n", "128", "--dtype", "bfloat16", "--device", "cpu", "--run-dir", tmp_path / "c")
    assert r.exit_code == 2 and "for CUDA" in r.stderr
    r = pk("mm-prefill-search", "--synthetic", spec, "--candidates", "vs,zigzag")
    assert r.exit_code == 2 and "zigzag" in r.stderr
    r = pk("mm-prefill-search", "--synthetic", "nosuchpreset")
    assert r.exit_code == 2 and "neither a preset" in r.stderr
