"""sve-* commands: outputs, same seed same bytes, resume (and baselines added on resume), predict/eval reproduce
stored metrics, bad input."""

import json

import numpy as np
import pytest

TINY = ["--size", "64", "--n-train", "8", "--epochs", "1", "--probe-epochs", "1", "--widths", "8,8,16,16",
        "--channels", "16", "--grid", "4", "--n-eval", "6", "--batch-size", "4", "-j", "1", "-q"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A labelled 64-px NPZ and a random-initialised (but valid) small model file with its metrics."""
    import torch

    from paperkit.core import io
    from paperkit.methods.sve import inputs, train
    from paperkit.methods.sve.render import render_set

    d = tmp_path_factory.mktemp("sve")
    data = render_set(11, 6, size=64)
    io.write_arrays(d / "data.npz", data)
    torch.manual_seed(0)
    cfg = {"size": 64, "widths": [8, 8, 16, 16], "channels": 16, "grid": 4, "router": "on", "concat": "channel",
           "junction_threshold": 0.3}
    models = train.build_models(cfg)
    for m in models.values():
        m.eval()
    metrics = train.evaluate(models, data, grid=4, batch_size=4, device=torch.device("cpu"))
    io.save_torch(d / "model.pt", inputs.model_state(models, cfg, metrics, half=False))
    return d, data


def test_render_same_seed_same_bytes_and_overlays(pk, tmp_path):
    for name in ("a", "b"):
        r = pk("sve-render", "--n", "5", "--size", "64", "--seed", "3", "-o", tmp_path / f"{name}.npz",
               "--png-dir", tmp_path / f"png{name}", "-q")
        assert r.exit_code == 0, r.stderr
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    assert json.loads(r.stdout)["n"] == 5
    assert len(list((tmp_path / "pnga").glob("*.png"))) == 5
    assert (tmp_path / "a.npz.manifest.json").is_file()


def test_encode_resume_then_predict_and_eval_reproduce_metrics(pk, tmp_path):
    run = tmp_path / "run"
    r = pk("sve-encode", *TINY, "--run-dir", run)
    assert r.exit_code == 0, r.stderr
    plain = json.loads((run / "metrics.json").read_text())
    trained = {f: (run / "checkpoints" / f).read_bytes() for f in ("encoder.pt", "global.pt", "probe.pt")}
    assert "router_baselines" not in plain
    # --router-baselines on --resume of the finished run: only the baseline probes are trained
    r = pk("sve-encode", *TINY, "--router-baselines", "--run-dir", run, "--resume")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert {f: (run / "checkpoints" / f).read_bytes() for f in trained} == trained
    for f in ("model.pt", "metrics.json", "curves.csv", "router_weights.csv", "router_weights.png", "overlay_5.png",
              "manifest.json"):
        assert (run / f).is_file(), f
    stored = json.loads((run / "metrics.json").read_text())
    assert summary["map50"] == stored["map50"]
    assert set(stored["router_baselines"]) == {"equal", "global-only"}
    assert stored["router_baselines"]["global-only"]["router_weights"] == {}
    assert {k: v for k, v in stored.items() if k != "router_baselines"} == plain
    # an interrupted run: the probe stage and the outputs are gone; --resume redoes them, same numbers
    for f in ("checkpoints/probe.pt", "manifest.json", "metrics.json", "model.pt"):
        (run / f).unlink()
    r = pk("sve-encode", *TINY, "--router-baselines", "--run-dir", run, "--resume")
    assert r.exit_code == 0, r.stderr
    assert json.loads((run / "metrics.json").read_text()) == stored
    # the held-out set was rendered from the fixed eval seed: write it and score the model on it again
    r = pk("sve-render", "--n", "6", "--size", "64", "--seed", "1000003", "-o", tmp_path / "eval.npz", "-q")
    assert r.exit_code == 0, r.stderr
    r = pk("sve-predict", "--images", tmp_path / "eval.npz", "--model", run / "model.pt", "-o", tmp_path / "p.jsonl",
           "--metrics", tmp_path / "m.json", "--boundary-dir", tmp_path / "edges", "-q")
    assert r.exit_code == 0, r.stderr
    again = json.loads((tmp_path / "m.json").read_text())
    for key in ("map50",):
        assert abs(again[key] - stored[key]) <= 1e-6
    assert abs(again["junction"]["f1"] - stored["junction"]["f1"]) <= 1e-6
    assert abs(again["probe_accuracy"]["all"] - stored["probe_accuracy"]["all"]) <= 1e-6
    rows = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and set(rows[0]) == {"image", "boxes", "classes", "scores", "junctions", "router_weights"}
    assert len(list((tmp_path / "edges").glob("*.png"))) == 6
    r = pk("sve-eval", "--data", tmp_path / "eval.npz", "--model", run / "model.pt")
    assert r.exit_code == 0, r.stderr
    assert abs(json.loads(r.stdout)["boundary"]["f1"] - stored["boundary"]["f1"]) <= 1e-6


def test_bfloat16_training_and_a_run_from_before_the_option_resumes(pk, tmp_path):
    """--dtype bfloat16 trains and is recorded in config.yaml; a run dir whose config.yaml predates --dtype (the key
    removed here) resumes with the option left at its default, and refuses --dtype bfloat16. The manifest holds
    the wall time of each stage the invocation computed."""
    run = tmp_path / "bf16"
    r = pk("sve-encode", *TINY, "--dtype", "bfloat16", "--run-dir", run)
    assert r.exit_code == 0, r.stderr
    assert "dtype: bfloat16" in (run / "config.yaml").read_text()
    old = tmp_path / "old"
    assert pk("sve-encode", *TINY, "--run-dir", old).exit_code == 0
    stored = (old / "metrics.json").read_bytes()
    config = old / "config.yaml"
    config.write_text("".join(line for line in config.read_text().splitlines(True) if not line.startswith("dtype:")))
    for f in ("checkpoints/probe.pt", "manifest.json", "metrics.json"):
        (old / f).unlink()
    r = pk("sve-encode", *TINY, "--dtype", "bfloat16", "--run-dir", old, "--resume")
    assert r.exit_code == 1 and "different parameters (dtype)" in r.stderr
    r = pk("sve-encode", *TINY, "--run-dir", old, "--resume")
    assert r.exit_code == 0, r.stderr
    assert (old / "metrics.json").read_bytes() == stored
    # the manifest times the stages each invocation computed: all of them, then only the redone probe
    seconds = json.loads((run / "manifest.json").read_text())["extra"]["stage_seconds"]
    assert set(seconds) == {"train_data", "encoder", "global", "probe"} and min(seconds.values()) > 0
    assert set(json.loads((old / "manifest.json").read_text())["extra"]["stage_seconds"]) == {"probe"}


@pytest.mark.heavy
def test_shipped_checkpoint_reproduces_its_stored_metrics_and_finds_primitives(pk, tmp_path):
    """sve-small on its held-out set (sve-eval64): the stored metrics within 1e-6, and real detections.
    ~15-25 s of CPU: heavy; CI checks the same round trip on a tiny run above."""
    import torch

    from paperkit.methods.sve.inputs import SHIPPED_EVAL, SHIPPED_EVAL64, SHIPPED_MODEL

    stored = torch.load(SHIPPED_MODEL, weights_only=True)["metrics"]
    assert max(p.stat().st_size for p in (SHIPPED_MODEL, SHIPPED_EVAL, SHIPPED_EVAL64)) < 2 * 2**20
    r = pk("sve-predict", "--images", "sve-eval64", "--model", "sve-small", "-o", tmp_path / "p.jsonl",
           "--metrics", tmp_path / "m.json", "--device", "cpu", "-q")
    assert r.exit_code == 0, r.stderr
    got = json.loads((tmp_path / "m.json").read_text())
    pairs = [(got["map50"], stored["map50"]), (got["junction"]["f1"], stored["junction"]["f1"]),
             (got["boundary"]["f1"], stored["boundary"]["f1"]),
             (got["probe_accuracy"]["all"], stored["probe_accuracy"]["all"])]
    for a, b in pairs:
        assert abs(a - b) <= 1e-6
    rows = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert sum(bool(x["boxes"]) for x in rows) >= 0.9 * len(rows) and sum(bool(x["junctions"]) for x in rows) >= 0.9 * len(rows)
    assert stored["map50"] >= 0.2 and stored["junction"]["f1"] >= 0.4, stored     # a detector, not a smoke test


def test_predict_reads_png_folders(pk, tmp_path, rendered):
    from PIL import Image

    d, data = rendered
    folder = tmp_path / "imgs"
    folder.mkdir()
    img = data["images"][0]
    Image.fromarray(img).save(folder / "a_grey.png")
    Image.fromarray(np.stack([img] * 3, -1)).save(folder / "b_rgb.png")
    Image.fromarray(np.dstack([np.stack([img] * 3, -1), np.full_like(img, 255)])).save(folder / "c_rgba.png")
    Image.fromarray(img.astype(np.uint16) * 257).save(folder / "d_16bit.png")
    Image.fromarray(np.pad(img, ((0, 6), (0, 10)), constant_values=255)).save(folder / "e_odd.png")
    r = pk("sve-predict", "--images", folder, "--model", d / "model.pt", "--device", "cpu", "-q")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["image"] for x in rows] == ["a_grey.png", "b_rgb.png", "c_rgba.png", "d_16bit.png", "e_odd.png"]
    assert rows[0]["junctions"] == rows[1]["junctions"] == rows[2]["junctions"] == rows[3]["junctions"]


def _check(r, code):
    assert r.exit_code == code, f"exit {r.exit_code}: {r.stderr}"
    assert r.stderr.count("\n") == 1 and ": error: " in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_bad_input(pk, tmp_path, rendered):
    import torch
    from PIL import Image

    from paperkit.core import io

    d, data = rendered
    model = d / "model.pt"
    cmyk = tmp_path / "cmyk"
    cmyk.mkdir()
    Image.new("CMYK", (64, 64)).save(cmyk / "x.jpg")
    small = tmp_path / "small"
    small.mkdir()
    Image.new("L", (48, 64), 255).save(small / "x.png")
    np.savez(tmp_path / "nan.npz", images=np.full((2, 64, 64), np.nan))
    np.savez(tmp_path / "noimages.npz", pictures=np.zeros((2, 64, 64), np.uint8))
    np.savez(tmp_path / "labels_missing.npz", images=data["images"])
    outside = dict(data)
    outside["boxes"] = data["boxes"].copy()
    outside["boxes"][0, 2] = 90.0
    io.write_arrays(tmp_path / "outside.npz", outside)
    odd = dict(data)
    odd["images"] = np.pad(data["images"], ((0, 0), (0, 16), (0, 16)), constant_values=255)
    odd["boundary"] = np.pad(data["boundary"], ((0, 0), (0, 16), (0, 16)))
    io.write_arrays(tmp_path / "odd.npz", odd)
    _check(pk("sve-eval", "--data", tmp_path / "odd.npz", "--model", model), 3)
    _check(pk("sve-predict", "--images", tmp_path / "odd.npz", "--model", model, "--metrics", tmp_path / "m.json"), 3)
    ckpt = torch.load(model, weights_only=True)
    ckpt["encoder"]["extra_head.weight"] = torch.zeros(3)
    del ckpt["encoder"]["pixel.2.weight"]
    torch.save(ckpt, tmp_path / "other_heads.pt")
    (tmp_path / "trunc.pt").write_bytes(model.read_bytes()[:300])
    npz = d / "data.npz"
    for args in (["--images", cmyk], ["--images", small], ["--images", tmp_path / "nan.npz"],
                 ["--images", tmp_path / "noimages.npz"], ["--images", npz, "--model", tmp_path / "other_heads.pt"],
                 ["--images", npz, "--model", tmp_path / "trunc.pt"], ["--images", tmp_path / "missing.npz"]):
        _check(pk("sve-predict", "--model", model, *args) if "--model" not in args else pk("sve-predict", *args), 3)
    for path in ("labels_missing.npz", "outside.npz"):
        _check(pk("sve-eval", "--data", tmp_path / path, "--model", model), 3)
        _check(pk("sve-encode", *TINY, "--eval", tmp_path / path, "--run-dir", tmp_path / "r"), 3)
    assert not (tmp_path / "r").exists()
    _check(pk("sve-render", "--n", "0", "-o", tmp_path / "x.npz"), 2)
    _check(pk("sve-render", "--n", "100000000000", "-o", tmp_path / "x.npz"), 2)
    _check(pk("sve-render", "--n", "3", "--size", "100", "-o", tmp_path / "x.npz"), 2)
    _check(pk("sve-render", "--n", "3", "-o", tmp_path / "x.csv"), 2)
    _check(pk("sve-encode", "--n-train", "1000000", "--size", "1024", "--run-dir", tmp_path / "r"), 2)
    if not torch.cuda.is_available():
        r = pk("sve-eval", "--data", npz, "--model", model, "--device", "cuda")
        assert r.exit_code != 0 and "CUDA" in r.stderr and r.stderr.count("\n") == 1
        r = pk("sve-encode", *TINY, "--device", "cuda", "--run-dir", tmp_path / "r")
        assert r.exit_code != 0 and "CUDA" in r.stderr and not (tmp_path / "r").exists()


def test_bad_question_arrays_are_refused_before_the_run(pk, tmp_path, rendered):
    """Question arrays out of range, short, NaN or of the wrong dtype: exit 3 naming the file and the array (they
    used to crash in one_hot/indexing or give a silently wrong probe accuracy), and sve-encode makes no run dir."""
    from paperkit.core import io

    d, data = rendered
    bad = {"q_type": data["q_type"] + 9, "q_class": data["q_class"] + 40, "q_answer": data["q_answer"] + 99,
           "q_options": np.zeros_like(data["q_options"]), "q_values": np.full_like(data["q_values"], np.nan),
           "q_points": data["q_points"] + 500}
    cases = [(f"{k}.npz", k, {k: v}) for k, v in bad.items()]
    cases += [("short.npz", "q_type", {"q_type": data["q_type"][:2]}),
              ("float.npz", "q_class", {"q_class": data["q_class"].astype(np.float64)})]
    for fname, key, change in cases:
        io.write_arrays(tmp_path / fname, {**data, **change})
        r = pk("sve-eval", "--data", tmp_path / fname, "--model", d / "model.pt", "--device", "cpu", "-j", "1")
        _check(r, 3)
        assert fname in r.stderr and f"'{key}'" in r.stderr, r.stderr
    r = pk("sve-encode", *TINY, "--eval", tmp_path / "q_type.npz", "--run-dir", tmp_path / "r")
    _check(r, 3)
    assert not (tmp_path / "r").exists()
    # Other integer and float widths are valid data: cast, not refused (float64 points used to crash in Linear).
    io.write_arrays(tmp_path / "wide.npz", {**data, "q_points": data["q_points"].astype(np.float64),
                                            "q_type": data["q_type"].astype(np.int32)})
    r = pk("sve-eval", "--data", tmp_path / "wide.npz", "--model", d / "model.pt", "--device", "cpu", "-j", "1")
    assert r.exit_code == 0, r.stderr
