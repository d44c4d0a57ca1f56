"""The spec's training checks, all ``heavy`` (minutes of CPU per run): the issue's scale (128 px, 8k diagrams)
and a scaled-down 64-px version of the pretraining comparison. At a few dozen diagrams (CI's budget) the
direction does not hold reliably (measured: 48 diagrams, 3 epochs, held-out junction loss 1.86 multi-task vs
1.78 counts-only), so CI checks only the plumbing (tests/cli/test_sve.py, test_model.py)."""

import numpy as np
import pytest
import torch

from paperkit.methods.sve import train as T
from paperkit.methods.sve.render import render_set

torch.set_num_threads(1)
TINY = {"widths": [8, 12, 16, 24], "channels": 16, "grid": 4, "router": "on", "concat": "channel"}


def _heldout_junction_loss(enc, data):
    enc.eval()
    idx = np.arange(len(data["images"]))
    with torch.no_grad():
        out = enc(T.images_tensor(data["images"]))
        t = T.targets(data, idx)
        return float(T.focal_loss(out["junction"], t["jheat"]))


@pytest.mark.heavy
def test_scaled_primitive_pretraining_beats_counts_on_junctions():
    """64 px, 400 diagrams, 6 epochs: the multi-task trunk gives a lower held-out junction loss than heads
    fitted on a counts-only trunk (the direction of spec check 3)."""
    train, held = render_set(21, 400, size=64), render_set(22, 64, size=64)
    cpu = torch.device("cpu")
    torch.manual_seed(0)
    prim = T.build_models(TINY)["encoder"]
    T.train_encoder(prim, train, kind="primitives", epochs=6, batch_size=16, lr=5e-3, seed=0, device=cpu)
    torch.manual_seed(0)
    counts = T.build_models(TINY)["global"]
    T.train_encoder(counts, train, kind="counts", epochs=6, batch_size=16, lr=5e-3, seed=0, device=cpu)
    torch.manual_seed(0)
    heads = T.build_models(TINY)["encoder"]
    heads.load_state_dict({k: v for k, v in counts.state_dict().items() if k.startswith(("backbone.", "fpn."))},
                          strict=False)
    T.train_encoder(heads, train, kind="heads", epochs=6, batch_size=16, lr=5e-3, seed=0, device=cpu,
                    train_parts=T.head_parameters)
    assert _heldout_junction_loss(prim, held) < _heldout_junction_loss(heads, held)


def _encode(pk, tmp_path, name, *args):
    import json

    r = pk("sve-encode", *args, "--run-dir", tmp_path / name, "-q")
    assert r.exit_code == 0, r.stderr
    return json.loads((tmp_path / name / "metrics.json").read_text())


LAPTOP = ["--size", "128", "--n-train", "8000", "--epochs", "6", "--probe-epochs", "10", "--router-baselines"]


@pytest.mark.heavy
def test_primitive_encoder_grounds_and_finds_junctions(pk, tmp_path):
    """Spec check 2: 8k diagrams of 128 px: mAP@0.5 >= 0.5 and junction F1@4px >= 0.7 on the shipped 200."""
    m = _encode(pk, tmp_path, "prim", *LAPTOP)
    assert m["map50"] >= 0.5 and m["junction"]["f1"] >= 0.7, (m["map50"], m["junction"])
    rw = m["router_weights"]
    # spec check 4: the router is within one point of equal weights and its weights differ by question type
    assert m["probe_accuracy"]["all"] >= m["router_baselines"]["equal"]["probe_accuracy"]["all"] - 0.01
    spread = np.ptp(np.array([[w[k] for k in w] for w in rw.values()]), axis=0)
    assert spread.max() > 0.02, rw


@pytest.mark.heavy
def test_primitive_pretraining_beats_counts_only(pk, tmp_path):
    """Spec check 3: >= 10 points of junction F1 and >= 5 points of probe accuracy."""
    prim = _encode(pk, tmp_path, "prim", *LAPTOP[:-1])
    counts = _encode(pk, tmp_path, "counts", *LAPTOP[:-1], "--pretrain", "counts")
    assert prim["junction"]["f1"] - counts["junction"]["f1"] >= 0.10
    assert prim["probe_accuracy"]["all"] - counts["probe_accuracy"]["all"] >= 0.05
