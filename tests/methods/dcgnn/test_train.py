"""Training checks of the spec (scaled down for CI; the full ones are ``heavy``) and FAITH against closed
forms and the per-graph loop."""

import numpy as np
import pytest
import torch

from paperkit.methods.dcgnn.data import generate
from paperkit.methods.dcgnn.faith import evaluate_faith, faith_scores, perturbations, perturbed_probs
from paperkit.methods.dcgnn.model import DCGNN
from paperkit.methods.dcgnn.run import split_indices
from paperkit.methods.dcgnn.train import (
    FitConfig,
    explanation_auroc,
    export_rule,
    predict,
    split_metrics,
    train_model,
)

torch.set_num_threads(1)


def fit(kind, n_graphs, cfg, seed=0):
    gs = generate(kind, n_graphs, seed=0)
    sp = split_indices(gs, 0)
    model, _ = train_model(gs, sp["train"], cfg, seed, progress=lambda it, **k: it)
    pred = predict(model, gs, sp["test"])
    return gs, sp, model, pred


def check_redblue(n_graphs, min_acc, min_rule, **kw):
    cfg = FitConfig(segnn="smgnn", channels="dual", **kw)
    gs, sp, model, pred = fit("redblue", n_graphs, cfg)
    acc = split_metrics(gs, sp["test"], pred)["acc"]
    rule = export_rule(model, gs)
    assert acc >= min_acc
    assert model.relevance()[1] > min_rule
    assert rule["terms"]["red"] * rule["terms"]["blue"] < 0 and rule["terms"]["red"] > 0


def test_redblue_dc_smgnn_uses_the_rule_ci():
    """Fewer graphs, so fewer steps: a larger lr and smaller batches than the defaults."""
    check_redblue(300, min_acc=0.95, min_rule=0.8, epochs=16, warmup=6, hidden=16, lr=5e-3, batch_size=32)


@pytest.mark.heavy
def test_redblue_dc_smgnn_acceptance():
    check_redblue(2000, min_acc=0.97, min_rule=0.8, epochs=30, warmup=20)


_GSAT: dict = {}


def gsat_on_motif(n_graphs, epochs):
    key = (n_graphs, epochs)
    if key not in _GSAT:
        _GSAT[key] = fit("motif", n_graphs, FitConfig(segnn="gsat", channels="gnn", epochs=epochs, hidden=64))
    return _GSAT[key]


def check_gsat_auroc(n_graphs, epochs):
    gs, sp, model, pred = gsat_on_motif(n_graphs, epochs)
    assert explanation_auroc(gs, sp["test"], pred["mask"]) >= 0.8


def test_gsat_auroc_on_motif_ci():
    check_gsat_auroc(400, 10)


@pytest.mark.heavy
def test_gsat_auroc_on_motif_acceptance():
    check_gsat_auroc(3000, 30)


@pytest.mark.heavy
def test_topofeature_dc_beats_smgnn_with_both_channels():
    accs = {}
    for ch in ("dual", "gnn"):
        cfg = FitConfig(segnn="smgnn", channels=ch, epochs=60, warmup=20, hidden=64)
        gs, sp, model, pred = fit("topofeature", 2000, cfg)
        accs[ch] = split_metrics(gs, sp["test"], pred)["acc"]
        if ch == "dual":
            rel = model.relevance()
    assert accs["dual"] >= accs["gnn"]
    assert min(rel) > 0.2


@pytest.mark.heavy
def test_motif_dc_close_to_gin_and_uses_gnn():
    accs = {}
    for segnn, ch in (("smgnn", "dual"), ("none", "gnn")):
        cfg = FitConfig(segnn=segnn, channels=ch, epochs=40, warmup=20, hidden=64, constant_feature=True)
        gs, sp, model, pred = fit("motif", 3000, cfg)
        accs[ch] = split_metrics(gs, sp["test"], pred)["acc"]
        if ch == "dual":
            rel = model.relevance()
    assert accs["dual"] >= accs["gnn"] - 0.02
    assert rel[0] > 0.5


def test_same_seed_same_model_outputs():
    cfg = FitConfig(segnn="gsat", channels="dual", epochs=2, warmup=1, hidden=8)
    a = fit("redblue", 60, cfg)[3]
    b = fit("redblue", 60, cfg)[3]
    np.testing.assert_array_equal(a["probs"], b["probs"])
    np.testing.assert_array_equal(a["mask"], b["mask"])


# ------------------------------------------------------------------------------------------- FAITH
def _tiny_gnn(gs, seed=0):
    torch.manual_seed(seed)
    return DCGNN(gs.x.shape[1], gs.n_classes, hidden=8, segnn="smgnn", channels="gnn").eval()


def test_faith_batched_equals_per_graph_loop():
    gs = generate("motif", 12, seed=1)
    model, idx = _tiny_gnn(gs), np.arange(12)
    mask = predict(model, gs, idx)["mask"]
    entries = perturbations(gs, idx, mask, ratio=0.3, budgets=[0.1, 0.5], n_samples=2, seed=0)
    big = perturbed_probs(model, gs, entries, chunk=4096)
    loop = perturbed_probs(model, gs, entries, chunk=1)
    np.testing.assert_allclose(big, loop, rtol=1e-5, atol=1e-6)
    assert len(entries) == 12 * (1 + 2 * 2 * 2)


def test_faith_of_an_edge_blind_model_is_closed_form():
    """A rule-only model ignores edges: every distance is 0, so Suf = 1, Nec = 0, FAITH = 0."""
    gs = generate("redblue", 8, seed=0)
    model = DCGNN(2, 2, channels="rule").eval()
    mask = np.random.default_rng(0).random(gs.edge_index.shape[1])
    sc = evaluate_faith(model, gs, np.arange(8), mask, ratio=0.3, budgets=[0.2], n_samples=2, seed=0)
    assert sc["sufficiency"][0] == 1.0 and sc["necessity"][0] == 0.0 and sc["faith"][0] == 0.0


def test_faith_scores_formula():
    # one graph, one budget, one sample: p(G) = (1, 0); complement removal → (0.5, 0.5); explanation → (0, 1)
    probs = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    sc = faith_scores(probs, 1, 1, 1)
    suf, nec = np.exp(-1.0), 1 - np.exp(-2.0)
    assert sc["sufficiency"][0] == pytest.approx(suf)
    assert sc["necessity"][0] == pytest.approx(nec)
    assert sc["faith"][0] == pytest.approx(2 * suf * nec / (suf + nec))


def test_removal_counts_and_undirected_pairs():
    gs = generate("motif", 3, seed=0)
    idx = np.arange(3)
    mask = np.arange(gs.edge_index.shape[1], dtype=float)
    entries = perturbations(gs, idx, mask, ratio=0.5, budgets=[1.0], n_samples=1, seed=0)
    eptr = gs.edge_ptr()
    for g in range(3):
        full, suf, nec = entries[3 * g:3 * g + 3]
        e = gs.edge_index[:, eptr[g]:eptr[g + 1]]
        kept = {tuple(p) for p in e[:, suf[1]].T}
        assert all((v, u) in kept for u, v in kept)          # both directions leave together
        assert full[1].all() and (suf[1] | nec[1]).all() and not (suf[1] & nec[1]).any()
        assert suf[1].sum() + nec[1].sum() == e.shape[1]    # budget 1: complement + explanation = all


def check_gt_beats_random(n_graphs, epochs):
    """On in-distribution (training-base) graphs, where the model has learnt the motifs."""
    gs, sp, model, _ = gsat_on_motif(n_graphs, epochs)
    idx = sp["train"][:60]
    gt = gs.edge_gt[np.concatenate([np.arange(*gs.edge_ptr()[g:g + 2]) for g in idx])].astype(float)
    kw = dict(ratio=0.25, budgets=[0.2, 0.4], n_samples=3, seed=0)
    f_gt = evaluate_faith(model, gs, idx, gt, **kw)["faith"].mean()
    f_rand = evaluate_faith(model, gs, idx, gt, random_explanation=True, **kw)["faith"].mean()
    assert f_gt > f_rand


def test_faith_ground_truth_beats_random_ci():
    check_gt_beats_random(400, 10)


@pytest.mark.heavy
def test_faith_ground_truth_beats_random_acceptance():
    check_gt_beats_random(3000, 30)
