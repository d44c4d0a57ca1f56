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
    assert set(rows.columns) >= {"layer", "head", "pattern", "density", "recall", "rel_l2", "backend"}
    assert not [c for c in rows.columns if c.endswith("_ms")]
    assert set(read_table(d / "timing.csv").columns) == {"layer", "index_ms", "sparse_ms", "dense_ms", "backend"}
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
    assert r.exit_code == 2 and "--n" in r.stderr and "item 'abc'" in r.stderr
    r = pk("mm-prefill-bench", "--n", "128", "--dtype", "bfloat16", "--device", "cpu", "--run-dir", tmp_path / "c")
    assert r.exit_code == 2 and "for CUDA" in r.stderr
    r = pk("mm-prefill-search", "--synthetic", spec, "--candidates", "vs,zigzag")
    assert r.exit_code == 2 and "item 'zigzag'" in r.stderr and "--candidates" in r.stderr
    r = pk("mm-prefill-search", "--synthetic", "nosuchpreset")
    assert r.exit_code == 2 and "neither a preset" in r.stderr


def test_same_seed_gives_the_same_bytes(pk, spec, tmp_path):
    """Timings live in timing.csv (and the per-layer checkpoints) only: every other file of two runs with the same
    inputs and seed is identical."""
    runs = []
    for name in ("a", "b"):
        d = tmp_path / name
        r = pk("mm-prefill", "--synthetic", spec, "--block-size", "32", "--pattern", "vs", "--density", "0.3",
               "--masks", "--save-out", "--seed", "3", "--run-dir", d, "-q")
        assert r.exit_code == 0, r.stderr
        runs.append(d)
    files = sorted(p.relative_to(runs[0]) for p in runs[0].rglob("*") if p.is_file())
    data = [f for f in files if f.name not in ("manifest.json", "timing.csv") and f.parts[0] != "checkpoints"]
    assert {"heads.csv", "metrics.json", "out.npy", "masks/L0_H1.png"} <= {str(f) for f in data}
    for f in data:
        assert (runs[0] / f).read_bytes() == (runs[1] / f).read_bytes(), f
    assert "_ms" not in (runs[0] / "metrics.json").read_text()
    assert len(read_table(runs[0] / "timing.csv")) == 1


TWO_LAYERS = SPEC + "layers: 2\n"


def test_mm_prefill_resumes_after_its_last_finished_layer(pk, tmp_path):
    """An interrupted run (layer 1 unfinished) continues with --resume: layer 0 is loaded from its checkpoint,
    not recomputed, and the results are the same bytes as an uninterrupted run's."""
    spec = tmp_path / "two.yaml"
    spec.write_text(TWO_LAYERS)
    d = tmp_path / "run"
    args = ("mm-prefill", "--synthetic", spec, "--block-size", "32", "--pattern", "vs", "--density", "0.3",
            "--save-out", "--run-dir", d, "-q")
    assert pk(*args).exit_code == 0
    full = {f: (d / f).read_bytes() for f in ("heads.csv", "metrics.json", "out.npy")}
    for f in ("manifest.json", "heads.csv", "metrics.json", "out.npy", "checkpoints/layer_0001.pt"):
        (d / f).unlink()  # as if stopped while computing layer 1
    first = (d / "checkpoints/layer_0000.pt").stat().st_mtime_ns
    r = pk(*args)
    assert r.exit_code != 0 and "--resume" in r.stderr
    r = pk(*args, "--resume")
    assert r.exit_code == 0, r.stderr
    assert (d / "checkpoints/layer_0000.pt").stat().st_mtime_ns == first
    assert (d / "checkpoints/layer_0001.pt").exists()
    assert {f: (d / f).read_bytes() for f in full} == full


def test_search_resumes_through_its_run_dir(pk, tmp_path):
    """With --run-dir every finished layer is a checkpoint; --resume redoes only the missing layers and writes
    the same patterns; --resume without --run-dir is a usage error."""
    spec = tmp_path / "two.yaml"
    spec.write_text(TWO_LAYERS)
    d = tmp_path / "search"
    base = ("mm-prefill-search", "--synthetic", spec, "--block-size", "32", "--density", "0.3",
            "--candidates", "a_shape,vs", "--run-dir", d, "-q")
    assert pk(*base, "-o", tmp_path / "a.json").exit_code == 0
    heads = read_json(tmp_path / "a.json")["heads"]
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == [
        f"layer_{la:04d}_head_{h:04d}.json" for la in range(2) for h in range(heads)]
    (d / "manifest.json").unlink()
    for h in range(heads):
        (d / f"checkpoints/layer_0001_head_{h:04d}.json").unlink()
    first = (d / "checkpoints/layer_0000_head_0000.json").stat().st_mtime_ns
    r = pk(*base, "--resume", "-o", tmp_path / "b.json")
    assert r.exit_code == 0, r.stderr
    assert (d / "checkpoints/layer_0000_head_0000.json").stat().st_mtime_ns == first
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert set(read_json(tmp_path / "b.json")["layers"]) == {"0", "1"}
    r = pk("mm-prefill-search", "--synthetic", spec, "--resume")
    assert r.exit_code == 2 and "--run-dir" in r.stderr


def test_search_interrupted_inside_a_layer_resumes_to_the_same_bytes(pk, tmp_path, monkeypatch):
    """A search stopped by an error in the middle of a layer keeps a checkpoint per finished head; --resume
    computes only the heads still missing and writes the same bytes as an uninterrupted search."""
    from paperkit.methods.mm_prefill import search

    spec = tmp_path / "two.yaml"
    spec.write_text(TWO_LAYERS)
    base = ("mm-prefill-search", "--synthetic", spec, "--block-size", "32", "--density", "0.3",
            "--candidates", "a_shape,vs", "-q")
    assert pk(*base, "--run-dir", tmp_path / "whole", "-o", tmp_path / "whole.json").exit_code == 0
    heads = read_json(tmp_path / "whole.json")["heads"]
    real, calls, stop = search.search_head, [], [True]

    def stops_at_the_second_head(*args, **kwargs):
        calls.append(kwargs["seed"])
        if len(calls) == 2 and stop[0]:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "search_head", stops_at_the_second_head)
    d = tmp_path / "cut"
    r = pk(*base, "--run-dir", d, "-o", tmp_path / "cut.json")
    assert r.exit_code != 0 and not (tmp_path / "cut.json").exists()
    done = sorted(p.name for p in (d / "checkpoints").iterdir())
    assert done == ["layer_0000_head_0000.json"] and heads >= 2  # stopped inside layer 0
    calls.clear()
    stop[0] = False
    r = pk(*base, "--run-dir", d, "-o", tmp_path / "cut.json", "--resume")
    assert r.exit_code == 0, r.stderr
    assert len(calls) == 2 * heads - 1  # only the missing heads were searched
    assert (tmp_path / "cut.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


def broken_inputs(tmp_path):
    """name → (file, what stderr must say): truncated archives, strings, objects, huge values."""
    import torch

    good = qkv_file(tmp_path, "good.npz")
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    pt = tmp_path / "good.pt"
    torch.save({x: torch.randn(2, 200, 32) for x in "qkv"}, pt)
    cut_pt = tmp_path / "cut.pt"
    cut_pt.write_bytes(pt.read_bytes()[: pt.stat().st_size // 2])
    strings = qkv_file(tmp_path, "strings.npz", q=np.array([["a", "b"]] * 3))
    objects = tmp_path / "objects.npz"
    np.savez(objects, q=np.array([{"x": 1}], dtype=object), k=np.zeros(1), v=np.zeros(1))
    pickled = tmp_path / "pickled.pt"
    torch.save({"q": torch.randn(2, 200, 32), "k": Exception("x"), "v": torch.randn(2, 200, 32)}, pickled)
    huge = qkv_file(tmp_path, "huge.npz", dtype=np.float64,
                    v=np.full((2, 200, 32), 1e308))
    # each value fits float32 products, but q·k/√D would not
    scores = qkv_file(tmp_path, "scores.npz", q=np.full((2, 200, 32), 1.5e19, np.float32),
                      k=np.full((2, 200, 32), -1.5e19, np.float32))
    return {"truncated_npz": (cut, "truncated"), "truncated_pt": (cut_pt, "truncated"),
            "strings": (strings, "dtype <U1"), "objects": (objects, "never loads"),
            "pickled_pt": (pickled, "never loads"), "huge": (huge, "too large"), "scores": (scores, "q·k")}


@pytest.mark.parametrize("command", ["mm-prefill", "mm-prefill-search"])
def test_broken_qkv_files_exit_3_naming_the_file(pk, tmp_path, command):
    for case, (path, message) in broken_inputs(tmp_path).items():
        extra = ["--run-dir", tmp_path / f"out_{case}"] if command == "mm-prefill" else ["-o", tmp_path / "p.json"]
        r = pk(command, "--qkv", path, "--block-size", "32", *extra)
        assert r.exit_code == 3, (case, r.exit_code, r.stderr)
        assert r.stderr.startswith(f"paperkit {command}: error: {path}: "), (case, r.stderr)
        assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, (case, r.stderr)
        low = r.stderr.lower()
        assert "weights_only" not in low and "allow_pickle" not in low and "unsafe" not in low, (case, r.stderr)
        assert r.stdout == ""


def test_boundary_candidates_without_modality_exit_2(pk, tmp_path):
    path = qkv_file(tmp_path)
    r = pk("mm-prefill-search", "--qkv", path, "--block-size", "32", "--candidates", "q_boundary")
    assert r.exit_code == 2 and "no 'modality' array" in r.stderr and "--candidates" in r.stderr, r.stderr
    r = pk("mm-prefill", "--qkv", path, "--block-size", "32", "--pattern", "2d_boundary", "--run-dir", tmp_path / "o")
    assert r.exit_code == 2 and "--pattern 2d_boundary" in r.stderr and "modality" in r.stderr, r.stderr
    # mixed with other candidates, the boundary ones are skipped
    r = pk("mm-prefill-search", "--qkv", path, "--block-size", "32", "--candidates", "q_boundary,vs", "-q")
    assert r.exit_code == 0, r.stderr
    assert {e["pattern"] for e in json.loads(r.stdout)["layers"]["0"].values()} == {"vs"}


@pytest.mark.parametrize("content,message", [
    ("frames: many\n", "frames = 'many'; expected an integer"),
    ("heads: grid\n", "expected a list of head types"),
    ("text_prefix: -4\n", "text_prefix = -4"),
    ("noise: .nan\n", "expected a finite number"),
    ("noise: 1.0e+300\n", "noise = 1e+300 is out of range"),  # passed the check, then overflowed float32
    ("sharpness: 1.0e+30\n", "sharpness = 1e+30 is out of range"),
    ("colour: red\n", "unknown key(s) ['colour']"),
    ("- frames\n", "expected a mapping"),
    ("frames: [\n", "invalid YAML"),
])
def test_synthetic_spec_with_bad_content_exits_3(pk, tmp_path, content, message):
    p = tmp_path / "bad.yaml"
    p.write_text(content)
    for command, extra in (("mm-prefill", ["--run-dir", tmp_path / "o"]), ("mm-prefill-search", [])):
        r = pk(command, "--synthetic", p, *extra)
        assert r.exit_code == 3, (command, r.exit_code, r.stderr)
        assert message in r.stderr and str(p) in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _pattern_doc(**entry_over):
    """A patterns document for 2 heads of 1 layer, as mm-prefill-search writes it."""
    entry = {"pattern": "a_shape", "params": {"local": 16, "sink": 4}, "density": 0.3, "score": 0.9}
    doc = {"format": "paperkit.mm_prefill.patterns", "version": 1, "heads": 2, "layers_count": 1, "block_size": 16,
           "density": 0.3, "tokens": 128, "layers": {"0": {"0": {**entry, **entry_over}, "1": dict(entry)}}}
    return doc


@pytest.mark.parametrize("case,message", [
    ("sink_str", "layer 0 head 0: params.sink = 'abc'"),             # was exit 70 (TypeError)
    ("sink_neg", "layer 0 head 0: params.sink = -5"),                 # was exit 70 (RuntimeError)
    ("sink_huge", "params.sink = 1000000000000; expected a whole number in [0, 128]"),  # was density 1.0, exit 0
    ("phase", "params.phase = 9 is not below params.stride = 4"),
    ("params_list", "params = [1]; expected an object"),
    ("no_head", "layer 0 has no entry for head 1"),                   # was found after the run dir existed
    ("boundary", "pattern 'q_boundary' needs the tokens' modality"),  # likewise
    ("layers_count", "no patterns for layer 1; the tensors have 2 layer(s)"),  # was found mid-run
    ("heads_str", "heads = '2'; expected a positive integer"),        # was "for 2 heads, the tensors have 2"
])
def test_bad_pattern_entries_exit_3_before_the_run_dir(pk, tmp_path, case, message):
    doc = {"sink_str": _pattern_doc(params={"sink": "abc"}), "sink_neg": _pattern_doc(params={"sink": -5}),
           "sink_huge": _pattern_doc(params={"sink": 10**12}),
           "phase": _pattern_doc(pattern="grid", params={"stride": 4, "phase": 9}),
           "params_list": _pattern_doc(params=[1]), "boundary": _pattern_doc(pattern="q_boundary")}.get(case)
    doc = doc or _pattern_doc()
    shape = (2, 128, 16)
    if case == "no_head":
        del doc["layers"]["0"]["1"]
    elif case == "layers_count":
        doc["layers_count"], shape = 5, (2, 2, 128, 16)
    elif case == "heads_str":
        doc["heads"] = "2"
    pf = tmp_path / "pat.json"
    pf.write_text(json.dumps(doc))
    path = qkv_file(tmp_path, shape=shape)
    r = pk("mm-prefill", "--qkv", path, "--patterns", pf, "--device", "cpu", "--block-size", "16",
           "--run-dir", tmp_path / "out", "-q")
    assert r.exit_code == 3, (r.exit_code, r.stderr)
    assert r.stderr.startswith(f"paperkit mm-prefill: error: {pf}: ") and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_good_pattern_entries_still_apply(pk, tmp_path):
    """The checks keep what the search writes: a grid entry with stride and phase, a dense head, boundary
    patterns on data with a modality array."""
    doc = _pattern_doc(pattern="grid", params={"stride": 8, "phase": 3, "sink": 4})
    doc["layers"]["0"]["1"] = {"pattern": "q_boundary", "params": {"sink": 4, "stride": 0, "phase": 0}}
    pf = tmp_path / "pat.json"
    pf.write_text(json.dumps(doc))
    path = qkv_file(tmp_path, shape=(2, 128, 16), modality=np.r_[np.zeros(64), np.ones(64)].astype(np.int8))
    r = pk("mm-prefill", "--qkv", path, "--patterns", pf, "--device", "cpu", "--block-size", "16",
           "--run-dir", tmp_path / "out", "-q")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["patterns"] == {"grid": 1, "q_boundary": 1}


def test_bench_repeats_has_an_upper_bound(pk, tmp_path):
    """--repeats 10^12 ran until killed and left a run dir: the option is bounded (far above the examples' 5)."""
    from paperkit_cli.main import load_command

    repeats = next(p for p in load_command("mm-prefill-bench").params if p.name == "repeats")
    assert repeats.type.max is not None and repeats.type.max >= 100  # checked first: without it the run hangs
    r = pk("mm-prefill-bench", "--device", "cpu", "--heads", "1", "--dim", "8", "-j", "1", "--n", "128",
           "--repeats", str(10**12), "--run-dir", tmp_path / "mb")
    assert r.exit_code == 2 and "--repeats" in r.stderr and not (tmp_path / "mb").exists()


def test_absurd_sizes_are_refused_up_front(pk, tmp_path):
    """Refused from the shapes, before allocating: the estimate and the flag that raises the limit."""
    r = pk("mm-prefill-bench", "--n", "100000000000", "--device", "cpu", "--run-dir", tmp_path / "b")
    assert r.exit_code == 2 and "--max-memory-gb" in r.stderr and "PiB" in r.stderr, r.stderr
    r = pk("mm-prefill-bench", "--n", "4096", "--heads", "100000000", "--device", "cpu", "--run-dir", tmp_path / "b")
    assert r.exit_code == 2 and "--max-memory-gb" in r.stderr and "TiB" in r.stderr, r.stderr
    assert not (tmp_path / "b").exists()
    big = tmp_path / "big.yaml"
    big.write_text("frames: 100000\nheight: 16\nwidth: 16\n")
    for command, extra in (("mm-prefill", ["--run-dir", tmp_path / "o"]), ("mm-prefill-search", [])):
        r = pk(command, "--synthetic", big, *extra)
        assert r.exit_code == 2 and "25,600,128 tokens" in r.stderr and "--max-memory-gb" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()
    # the limit is a flag: a small one refuses a small run, the default lets it through
    path = qkv_file(tmp_path)
    r = pk("mm-prefill", "--qkv", path, "--block-size", "32", "--max-memory-gb", "0.001", "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and "over the limit of 0.001 GiB" in r.stderr, r.stderr
    r = pk("mm-prefill", "--qkv", path, "--block-size", "32", "--run-dir", tmp_path / "s", "-q")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_floats_exit_2(pk, tmp_path, spec, value):
    for args in (["mm-prefill", "--synthetic", spec, "--density", value, "--run-dir", tmp_path / "o"],
                 ["mm-prefill-search", "--synthetic", spec, "--density", value],
                 ["mm-prefill-bench", "--density", value, "--run-dir", tmp_path / "b"],
                 ["mm-prefill", "--synthetic", spec, "--max-memory-gb", value, "--run-dir", tmp_path / "o"]):
        r = pk(*args)
        assert r.exit_code == 2, (args, r.exit_code, r.stderr)
        assert not (tmp_path / "o").exists() and not (tmp_path / "b").exists()


def test_bench_threads_is_spelled_jobs(pk, tmp_path):
    r = pk("mm-prefill-bench", "--n", "128", "--heads", "1", "--dim", "16", "--density", "0.5", "--repeats", "1",
           "--device", "cpu", "-j", "1", "--run-dir", tmp_path / "b", "-q")
    assert r.exit_code == 0, r.stderr
    assert read_json(tmp_path / "b" / "manifest.json")["extra"]["threads"] == 1
    r = pk("mm-prefill-bench", "--threads", "2", "--run-dir", tmp_path / "c")
    assert r.exit_code == 2 and "--threads" in r.stderr


def test_density_budget_is_met_or_warned_about(pk, tmp_path):
    """Issue 29: at N = 512 with 64-token tiles no index reaches --density 0.2 (the diagonal tiles, sinks
    and local window alone are above it): the run warns with the achieved density and why, and the
    summary counts the heads over budget. With 16-token tiles the budget is met and nothing is said."""
    from paperkit.methods.mm_prefill.run import diagonal_share

    assert diagonal_share(512, 64) == pytest.approx(8 * 64 * 65 / 2 / (512 * 513 / 2))
    assert diagonal_share(100, 64) == pytest.approx((64 * 65 / 2 + 36 * 37 / 2) / (100 * 101 / 2))
    path = qkv_file(tmp_path, shape=(2, 512, 16))
    r = pk("mm-prefill", "--qkv", path, "--pattern", "vs", "--density", "0.2", "--run-dir", tmp_path / "a")
    assert r.exit_code == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["mean_density"] > 0.3 and s["heads_over_budget"] == 2
    warned = [x for x in r.stderr.splitlines() if "not met" in x]
    assert len(warned) == 1 and warned[0].startswith("paperkit mm-prefill: warning: --density 0.2 is not met at N = 512")
    assert f"mean {s['mean_density']:.3f}" in warned[0] and "64-token tiles" in warned[0] and "--block-size" in warned[0]
    r = pk("mm-prefill", "--qkv", path, "--pattern", "vs", "--density", "0.2", "--block-size", "16",
           "--run-dir", tmp_path / "b")
    assert r.exit_code == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["mean_density"] <= 0.2 * 1.01 and s["heads_over_budget"] == 0 and "not met" not in r.stderr
