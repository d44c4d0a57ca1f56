"""Training checks of the spec (scaled down for CI; the full ones are ``heavy``) and FAITH against closed
forms and the per-graph loop."""

import numpy as np
import pytest
import torch

from paperkit.methods.dcgnn.data import generate
from paperkit.methods.dcgnn.faith import evaluate_faith, perturbations, perturbed_probs
from paperkit.methods.dcgnn.model import DCGNN
from paperkit.methods.dcgnn.run import selection_split, split_indices
from paperkit.methods.dcgnn.train import (
    FitConfig,
    explanation_auroc,
    export_rule,
    param_groups,
    predict,
    split_metrics,
    train_model,
    validation_scores,
)

torch.set_num_threads(1)


def fit(kind, n_graphs, cfg, seed=0):
    gs = generate(kind, n_graphs, seed=0)
    sp = split_indices(gs, 0)   # as dcgnn-fit: the checkpoint chosen on in-distribution validation graphs
    model, _ = train_model(gs, sp["train"], cfg, seed, progress=lambda it, **k: it,
                           val_idx=sp[selection_split(sp)])
    pred = predict(model, gs, sp["test"])
    return gs, sp, model, pred


def check_redblue(n_graphs, min_acc, min_rule, **kw):
    cfg = FitConfig(segnn="smgnn", channels="dual", **kw)
    gs, sp, model, pred = fit("redblue", n_graphs, cfg)
    acc = split_metrics(gs, sp["test"], pred)["acc"]
    rule = export_rule(model, gs, predict(model, gs, sp["train"]))
    assert acc >= min_acc
    assert model.relevance()[1] > min_rule
    assert rule["terms"]["red"] * rule["terms"]["blue"] < 0 and rule["terms"]["red"] > 0


def test_redblue_dc_smgnn_uses_the_rule_ci():
    """Fewer graphs, so fewer steps: a larger lr and smaller batches than the defaults. No warm-up, as the
    official code on Red-Blue (BAColor)."""
    check_redblue(300, min_acc=0.95, min_rule=0.8, epochs=16, warmup=0, hidden=32, lr=5e-3, batch_size=32)


@pytest.mark.heavy
def test_redblue_dc_smgnn_acceptance():
    """The spec's 2,000 graphs × 30 epochs with the example's optimiser settings (lr 5e-3, hidden 32, batch
    32); with the paper's lr 1e-3 and hidden 64, 30 epochs leave the relevance at 0.66 (still moving)."""
    check_redblue(2000, min_acc=0.97, min_rule=0.8, epochs=30, warmup=0, hidden=32, lr=5e-3, batch_size=32)


_GSAT: dict = {}
# GOOD-Motif's official GNN settings (mean readout, BatchNorm) with the example's optimiser settings
MOTIF_GNN = dict(hidden=32, lr=5e-3, batch_size=32, pool="mean", norm="bn")


def gsat_on_motif(n_graphs, epochs):
    key = (n_graphs, epochs)
    if key not in _GSAT:
        _GSAT[key] = fit("motif", n_graphs, FitConfig(segnn="gsat", channels="gnn", epochs=epochs, **MOTIF_GNN))
    return _GSAT[key]


def check_gsat_auroc(n_graphs, epochs):
    """On the held-out graphs of the training bases (id_test), which the model classifies (0.98 at 3,000 ×
    30). Not on the OOD path/star bases, where it is near chance and so are its masks (AUROC 0.42 / 0.04
    measured; examples/dcgnn/README.md)."""
    gs, sp, model, _ = gsat_on_motif(n_graphs, epochs)
    assert explanation_auroc(gs, sp["id_test"], predict(model, gs, sp["id_test"])["mask"]) >= 0.8


@pytest.mark.heavy
def test_gsat_auroc_on_motif_example_scale():
    """Reached since the checkpoint is chosen on ID validation graphs (with the last epoch: 0.42 on this draw).
    No CI-scale version: on ≤ 400 graphs × ≤ 20 epochs GSAT has not learnt the motifs yet (AUROC 0.38–0.48
    measured); AUROC itself is checked against scikit-learn in CI."""
    check_gsat_auroc(600, 20)


@pytest.mark.heavy
def test_gsat_auroc_on_motif_acceptance():
    check_gsat_auroc(3000, 30)


@pytest.mark.heavy
def test_topofeature_dc_beats_smgnn_with_both_channels():
    accs = {}
    for ch in ("dual", "gnn"):
        cfg = FitConfig(segnn="smgnn", channels=ch, epochs=60, warmup=20, hidden=64, norm="bn")
        gs, sp, model, pred = fit("topofeature", 2000, cfg)
        accs[ch] = split_metrics(gs, sp["test"], pred)["acc"]
        if ch == "dual":
            rel = model.relevance()
    assert accs["dual"] >= accs["gnn"]
    assert min(rel) > 0.2


@pytest.mark.heavy
def test_motif_dc_close_to_gin_and_uses_gnn():
    """In distribution (held-out graphs of the training bases), where the paper's model selection works; the
    OOD path bases leave every model near chance at this scale (see examples/dcgnn/README.md)."""
    accs = {}
    for segnn, ch in (("smgnn", "dual"), ("none", "gnn")):
        # the paper's lr 1e-3: at the example's 5e-3 the dual phase wrecks the GNN channel at this length
        cfg = FitConfig(segnn=segnn, channels=ch, epochs=60, warmup=20, constant_feature=True,
                        **{**MOTIF_GNN, "lr": 1e-3})
        gs, sp, model, _ = fit("motif", 3000, cfg)
        accs[ch] = split_metrics(gs, sp["id_test"], predict(model, gs, sp["id_test"]))["acc"]
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


@pytest.mark.parametrize("select", ["best-val", "last"])
def test_selected_checkpoint_has_the_lowest_logged_validation_loss(select):
    """The kept model's cross-entropy and accuracy on the validation graphs, recomputed after training from
    its probabilities, are those logged during training at the kept epoch, which has the lowest logged loss
    over the epochs after warm-up (the first such epoch on ties; the official pipeline's reference metric is
    the ID-validation loss); with ``last`` it is the last epoch."""
    gs = generate("redblue", 80, seed=0)
    sp = split_indices(gs, 0)
    cfg = FitConfig(segnn="smgnn", channels="dual", epochs=6, warmup=2, hidden=8, lr=2e-2, select=select)
    model, hist = train_model(gs, sp["train"], cfg, 0, progress=lambda it, **k: it, val_idx=sp["val"])
    logged = np.array([h["val_loss"] for h in hist])
    probs = predict(model, gs, sp["val"])["probs"].astype(np.float64)
    y = gs.y[sp["val"]]
    loss = -np.mean(np.log(probs[np.arange(len(y)), y]))
    want = int(np.argmin(logged[2:])) + 2 if select == "best-val" else 5
    assert len(set(np.round(logged[2:], 6))) > 1            # the losses differ, so the choice is not trivial
    assert model.selected_epoch == want
    assert loss == pytest.approx(logged[want], rel=1e-5)
    assert float(np.mean(probs.argmax(1) == y)) == hist[want]["val_acc"]
    assert model.temperature == hist[want]["temperature"]


def test_combiner_hold_keeps_relevances_then_releases_them():
    """combiner_hold: the LEN relevances stay at their start (0.5 / 0.5) in the first epochs after the warm-up,
    while the rule channel learns through the combined output; afterwards they move."""
    gs = generate("redblue", 80, seed=0)
    sp = split_indices(gs, 0)
    cfg = FitConfig(segnn="smgnn", channels="dual", epochs=4, warmup=1, combiner_hold=2, hidden=8, lr=2e-2,
                    side_lr=2e-2, batch_size=16, select="last")
    model, hist = train_model(gs, sp["train"], cfg, 0, progress=lambda it, **k: it)
    rel = [h["rule_relevance"] for h in hist]
    assert rel[:3] == pytest.approx([0.5] * 3, abs=1e-6)
    assert abs(rel[3] - 0.5) > 1e-3
    assert torch.count_nonzero(model.rule.linear.weight) > 0


def test_param_groups_rule_weight_decay():
    cfg = FitConfig(lr=1e-3, side_lr=5e-3, rule_weight_decay=1e-3)
    model = DCGNN(2, 2, hidden=8)
    groups = param_groups(model, cfg)
    by_id = {id(p): g for g in groups for p in g["params"]}
    assert len(by_id) == len(list(model.parameters()))
    assert all(by_id[id(p)]["weight_decay"] == 1e-3 and by_id[id(p)]["lr"] == 5e-3 for p in model.rule.parameters())
    assert all(by_id[id(p)].get("weight_decay", 0.0) == 0.0 and by_id[id(p)]["lr"] == 5e-3
               for p in model.combiner.parameters())
    assert all(by_id[id(p)]["lr"] == 1e-3 for p in model.gnn.parameters())


def test_validation_scores_known_answer():
    probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.0, 1.0]])
    acc, loss = validation_scores(probs, np.array([0, 1, 1, 0]))
    assert acc == 0.5
    assert loss == pytest.approx(-(np.log(0.9) + np.log(0.8) + np.log(0.4) + np.log(1e-12)) / 4)


def test_id_val_is_held_apart_from_training_graphs_when_val_is_ood():
    motif, rb = generate("motif", 120, seed=0), generate("redblue", 50, seed=0)
    sm, sr = split_indices(motif, 3), split_indices(rb, 3)
    assert "id_val" not in sr                               # Red-Blue's val split is in-distribution
    stored_train = np.flatnonzero(motif.split == 0)
    assert len(sm["id_val"]) == round(0.1 * len(stored_train))
    assert not set(sm["id_val"]) & set(sm["train"])
    np.testing.assert_array_equal(np.sort(np.concatenate([sm["id_val"], sm["train"]])), stored_train)
    np.testing.assert_array_equal(split_indices(motif, 3)["id_val"], sm["id_val"])


# ------------------------------------------------------------------------------------------- FAITH
def _tiny_gnn(gs, seed=0):
    torch.manual_seed(seed)
    return DCGNN(gs.x.shape[1], gs.n_classes, hidden=8, segnn="smgnn", channels="gnn").eval()


def test_faith_batched_equals_per_graph_loop():
    gs = generate("motif", 12, seed=1)
    model, idx = _tiny_gnn(gs), np.arange(12)
    mask = predict(model, gs, idx)["mask"]
    pert = perturbations(gs, idx, mask, ratio=0.3, budgets=[0.1, 0.5], n_samples=2, seed=0)
    big = perturbed_probs(model, gs, pert.entries, chunk=4096)
    loop = perturbed_probs(model, gs, pert.entries, chunk=1)
    np.testing.assert_allclose(big, loop, rtol=1e-5, atol=1e-6)
    assert len(pert.entries) == 12 * (1 + 2 * 2 * 2)       # every motif graph has > 6 directed edges


def test_faith_of_an_edge_blind_model_is_closed_form():
    """A rule-only model ignores edges: every distance is 0, so Suf = 1, Nec = 0, FAITH = 0."""
    gs = generate("redblue", 8, seed=0)
    model = DCGNN(2, 2, channels="rule").eval()
    mask = np.random.default_rng(0).random(gs.edge_index.shape[1])
    sc = evaluate_faith(model, gs, np.arange(8), mask, ratio=0.3, budgets=[0.05], n_samples=2, seed=0)
    assert sc["sufficiency"][0] == 1.0 and sc["necessity"][0] == 0.0 and sc["faith"][0] == 0.0


def _cycle(n, marked, first=0):
    """Edges of an n-cycle (both directions) and node features [marked, 1]."""
    u = np.arange(n)
    e = np.stack([u, (u + 1) % n])
    return np.concatenate([e, e[::-1]], 1) + first, np.stack([np.isin(u, marked), np.ones(n)], 1)


class MarkedEdgeModel(torch.nn.Module):
    """p(class 1) = 0.05 + 0.9·s/6, s = kept directed edges whose two ends are marked (x[:, 0] = 1)."""

    def forward(self, data):
        both = (data.x[data.edge_index[0], 0] * data.x[data.edge_index[1], 0]).double()
        s = torch.zeros(data.num_graphs, dtype=torch.float64).index_add_(0, data.batch[data.edge_index[0]], both)
        p1 = 0.05 + 0.9 * s / 6
        return {"logits": torch.log(torch.stack([1 - p1, p1], -1))}


def test_faith_hand_computed_official_definition():
    """Three graphs: a 10-cycle whose explanation (top 30% = 3 edges) is exactly the marked path 0-1-2-3, a
    10-cycle without marked nodes, and a triangle (6 directed edges: skipped). Mean size Ē = (20+20+6)/3, so
    α = 0.1 removes k_nec = ⌊1.53⌋ = 1 explanation edge and k_suf = ⌊3.07⌋ = 3 complement edges.
    Graph 1: removing one of the 3 marked edges drops s from 6 to 4, p1 from 0.95 to 0.65, L1 = 0.6 in every
    draw, so Nec = 1 − e^−0.6; complement edges do not matter: Suf = 1. Graph 2: s = 0 always: Suf 1, Nec 0.
    FAITH = harmonic mean of the means (Suf 1, Nec (1 − e^−0.6)/2), not the mean of per-graph FAITHs."""
    from paperkit.methods.dcgnn.data import GraphSet

    e1, x1 = _cycle(10, [0, 1, 2, 3])
    e2, x2 = _cycle(10, [], first=10)
    e3, x3 = _cycle(3, [], first=20)
    gs = GraphSet(x=np.concatenate([x1, x2, x3]).astype(np.float32),
                  edge_index=np.concatenate([e1, e2, e3], 1).astype(np.int64),
                  graph_ptr=np.array([0, 10, 20, 23]), y=np.array([1, 0, 0]), feature_names=["marked", "one"],
                  class_names=["a", "b"])
    score1 = np.where(np.isin(e1, [0, 1, 2, 3]).all(0), 1.0, 0.0)
    mask = np.concatenate([score1, np.random.default_rng(0).random(20), np.zeros(6)])
    sc = evaluate_faith(MarkedEdgeModel(), gs, np.arange(3), mask, ratio=0.3, budgets=[0.1], n_samples=5, seed=0)
    nec = (1 - np.exp(-0.6)) / 2
    assert sc["graphs_sufficiency"][0] == 2 and sc["graphs_necessity"][0] == 2
    assert sc["sufficiency"][0] == pytest.approx(1.0)
    assert sc["necessity"][0] == pytest.approx(nec)
    assert sc["faith"][0] == pytest.approx(2 * nec / (1 + nec))


def test_removal_counts_and_undirected_pairs():
    gs = generate("motif", 3, seed=0)
    idx = np.arange(3)
    mask = np.arange(gs.edge_index.shape[1], dtype=float)
    pert = perturbations(gs, idx, mask, ratio=0.5, budgets=[0.1], n_samples=1, seed=0)
    eptr, n_edges = gs.edge_ptr(), np.diff(gs.edge_ptr())
    k_nec, k_suf = int(0.1 * n_edges.mean()), int(0.2 * n_edges.mean())
    for g in range(3):
        full, suf, nec = pert.entries[3 * g:3 * g + 3]
        e = gs.edge_index[:, eptr[g]:eptr[g + 1]]
        kept = {tuple(p) for p in e[:, suf[1]].T}
        assert all((v, u) in kept for u, v in kept)          # both directions leave together
        assert full[1].all()
        n_expl = int(np.ceil(0.5 * n_edges[g] / 2))
        assert (~suf[1]).sum() == 2 * min(k_suf, n_edges[g] // 2 - 2, n_edges[g] // 2 - n_expl)
        assert (~nec[1]).sum() == 2 * min(k_nec, n_edges[g] // 2 - 2, n_expl)
        assert not (~suf[1] & ~nec[1]).any()                 # complement and explanation are disjoint
    assert pert.cell.tolist() == [-1, 0, 1] * 3


def check_gt_beats_random(n_graphs, epochs):
    """On in-distribution (training-base) graphs, where the model has learnt the motifs."""
    gs, sp, model, _ = gsat_on_motif(n_graphs, epochs)
    idx = sp["train"][:60]
    gt = gs.edge_gt[np.concatenate([np.arange(*gs.edge_ptr()[g:g + 2]) for g in idx])].astype(float)
    kw = dict(ratio=0.25, budgets=[0.05, 0.1], n_samples=3, seed=0)
    f_gt = evaluate_faith(model, gs, idx, gt, **kw)["faith"].mean()
    f_rand = evaluate_faith(model, gs, idx, gt, random_explanation=True, **kw)["faith"].mean()
    assert f_gt > f_rand


def test_faith_ground_truth_beats_random_ci():
    check_gt_beats_random(300, 20)


@pytest.mark.heavy
def test_faith_ground_truth_beats_random_acceptance():
    check_gt_beats_random(3000, 30)
