"""Model parts against references: the masked GIN layer vs PyG's GINConv and a dense formula, symmetrised
scores, GSAT's KL vs torch.distributions, the LEN relevances, the schedules, AUROC vs scikit-learn, the
exported rule read back as text, and a tiny TU folder read offline."""

import re

import numpy as np
import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods.dcgnn.data import generate, read_tu
from paperkit.methods.dcgnn.model import DCGNN, EntropyLinear, GINEncoder, bernoulli_kl, symmetrise
from paperkit.methods.dcgnn.train import (
    FitConfig,
    auroc,
    channel_temperature,
    export_rule,
    gsat_prior,
    predict,
    to_pyg,
)

torch.set_num_threads(1)


def test_masked_gin_matches_pyg_ginconv_and_dense_formula():
    from torch_geometric.nn import GINConv

    torch.manual_seed(0)
    enc = GINEncoder(3, 5, n_layers=1).eval()
    conv = enc.convs[0]
    with torch.no_grad():
        conv.eps.fill_(0.3)
    ref = GINConv(conv.nn, eps=0.3).eval()
    x = torch.randn(7, 3)
    ei = torch.tensor([[0, 1, 1, 2, 3, 5, 6, 4], [1, 0, 2, 1, 4, 6, 5, 3]])
    torch.testing.assert_close(enc(x, ei), ref(x, ei))
    mask = torch.rand(ei.shape[1])
    A = torch.zeros(7, 7)
    A[ei[1], ei[0]] = mask          # messages flow source → target
    with torch.no_grad():
        dense = conv.nn(1.3 * x + A @ x)
    torch.testing.assert_close(enc(x, ei, mask), dense, rtol=1e-5, atol=1e-5)


def test_symmetrised_scores_equal_on_both_directions():
    gs = generate("redblue", 5, seed=0)
    ei = torch.from_numpy(gs.edge_index)
    vals = torch.rand(ei.shape[1], generator=torch.Generator().manual_seed(1))
    sym = symmetrise(vals, ei, int(gs.graph_ptr[-1])).numpy()
    pos = {(int(u), int(v)): j for j, (u, v) in enumerate(gs.edge_index.T)}
    for (u, v), j in pos.items():
        k = pos[(v, u)]
        assert sym[j] == sym[k]
        assert sym[j] == pytest.approx((vals[j] + vals[k]).item() / 2)


def test_bernoulli_kl_matches_torch_distributions():
    p = torch.rand(50).clamp(0.01, 0.99)
    ref = torch.distributions.kl_divergence(torch.distributions.Bernoulli(p), torch.distributions.Bernoulli(0.7))
    torch.testing.assert_close(bernoulli_kl(p, 0.7), ref.mean(), rtol=1e-4, atol=1e-6)


def test_entropy_linear_relevance_is_softmax_of_column_l1_norms():
    layer = EntropyLinear(4, 3, temperature=0.6)
    torch.testing.assert_close(layer.alpha(), torch.full((4,), 0.25))     # equal column norms at start
    with torch.no_grad():
        layer.weight.copy_(torch.randn(3, 4))
    w = layer.weight.detach()
    alpha = torch.softmax(w.abs().sum(0) / 0.6, dim=-1)
    torch.testing.assert_close(layer.alpha(), alpha)
    x = torch.rand(5, 4)
    torch.testing.assert_close(layer(x), (x * alpha) @ w.T)


def test_schedules():
    assert [gsat_prior(e) for e in (0, 9, 10, 25, 40, 99)] == pytest.approx([0.9, 0.9, 0.8, 0.7, 0.5, 0.5])
    cfg = FitConfig(epochs=41, warmup=20, end_temp=0.3)
    assert channel_temperature(19, cfg) == 1.0
    assert channel_temperature(20, cfg) == 1.0
    assert channel_temperature(30, cfg) == pytest.approx(0.65)
    assert channel_temperature(40, cfg) == pytest.approx(0.3)
    # the official get_temp: 1 while epoch <= 20 whatever the warm-up, then 1 - 0.7 * epoch / epochs
    off = FitConfig(epochs=100, warmup=0, end_temp=0.3, temp_schedule="official")
    assert [channel_temperature(e, off) for e in (0, 5, 20)] == [1.0, 1.0, 1.0]
    assert channel_temperature(21, off) == pytest.approx(0.853)
    assert channel_temperature(99, off) == pytest.approx(0.307)


def test_official_inits():
    """combiner_init random keeps PyTorch's init (unequal columns); rule_init default keeps nn.Linear's."""
    torch.manual_seed(0)
    ours = DCGNN(2, 2, hidden=8)
    torch.manual_seed(0)
    off = DCGNN(2, 2, hidden=8, combiner_init="random", rule_init="default")
    assert ours.relevance() == pytest.approx((0.5, 0.5), abs=1e-6)
    assert abs(off.relevance()[0] - 0.5) > 1e-3
    assert torch.count_nonzero(ours.rule.linear.weight) == 0
    assert torch.count_nonzero(off.rule.linear.weight) == off.rule.linear.weight.numel()


def test_auroc_equals_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300) + 0.3 * y, 1)      # many ties
    assert auroc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc(s, np.zeros(300)) is None


TERM = re.compile(r"([+-][0-9.e+-]+)\*count\((\w+)\)")


def evaluate_rule_text(text, counts):
    """Read 'w1*count(a) w2*count(b) c > 0' without eval: parse the terms, the bias and the comparison."""
    lhs = text.rsplit(">", 1)[0]
    terms = {name: float(w) for w, name in TERM.findall(lhs)}
    bias = float(TERM.sub("", lhs).strip())
    return sum(w * counts[name] for name, w in terms.items()) + bias > 0


def test_exported_rule_as_text_reproduces_rule_channel():
    gs = generate("redblue", 40, seed=4)
    torch.manual_seed(0)
    model = DCGNN(2, 2, hidden=8, channels="rule", constant_feature=True).eval()
    with torch.no_grad():
        model.rule.linear.weight.copy_(torch.tensor([[0.2, -0.3, 0.01], [-0.1, 0.25, -0.02]]))
        model.rule.linear.bias.copy_(torch.tensor([0.1, -0.4]))
    rule = export_rule(model, gs)
    assert set(rule["terms"]) == {"red", "blue", "nodes"}
    decided = predict(model, gs, np.arange(gs.n_graphs))["probs"].argmax(1)
    for g in range(gs.n_graphs):
        x = gs.x[gs.graph_ptr[g]:gs.graph_ptr[g + 1]]
        counts = {"red": x[:, 0].sum(), "blue": x[:, 1].sum(), "nodes": len(x)}
        assert int(evaluate_rule_text(rule["text"], counts)) == decided[g]


def test_pyg_batches_keep_edge_order():
    gs = generate("motif", 12, seed=0)
    data = to_pyg(gs, np.array([3, 7]))
    eptr = gs.edge_ptr()
    np.testing.assert_array_equal(data[1].edge_index.numpy() + gs.graph_ptr[7], gs.edge_index[:, eptr[7]:eptr[8]])


def _write_tu(root, name, with_labels=True):
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    (raw / f"{name}_A.txt").write_text("1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4\n")
    (raw / f"{name}_graph_indicator.txt").write_text("1\n1\n1\n2\n2\n")
    if with_labels:
        (raw / f"{name}_graph_labels.txt").write_text("1\n-1\n")
    (raw / f"{name}_node_labels.txt").write_text("0\n1\n0\n1\n1\n")
    return root / name


def test_tu_folder_read_offline(tmp_path):
    gs = read_tu(_write_tu(tmp_path, "TOY"))
    np.testing.assert_array_equal(gs.graph_ptr, [0, 3, 5])
    np.testing.assert_array_equal(gs.y, [1, 0])
    assert gs.edge_index.shape == (2, 6) and gs.x.shape == (5, 2)
    np.testing.assert_array_equal(gs.x.argmax(1), [0, 1, 0, 1, 1])


def test_tu_folder_without_raw_files_is_refused(tmp_path):
    with pytest.raises(InputError, match="graph_labels.txt is missing"):
        read_tu(_write_tu(tmp_path, "TOY", with_labels=False))


def test_binary_channels_enter_the_combiner_as_class_one_probabilities():
    """Two classes: one input per channel, σ((l₁ − l₀)/t), which at t = 1 is softmax(l)[1] (the official
    single binary logit); the product t-norm then gives p(class 1) = p_gnn · p_rule."""
    from paperkit.methods.dcgnn.model import Combiner, channel_inputs

    logits = torch.randn(6, 2)
    torch.testing.assert_close(channel_inputs(logits, 1.0), torch.softmax(logits, -1)[:, 1:])
    g, r = torch.rand(6, 1), torch.rand(6, 1)
    out = torch.softmax(Combiner("product", 2, 10, 0.6)(torch.cat([g, r], -1)), -1)
    torch.testing.assert_close(out[:, 1:], g * r, rtol=1e-4, atol=1e-5)
    assert Combiner("len", 2, 10, 0.6).entropy.weight.shape == (10, 2)
    assert Combiner("len", 3, 30, 0.6).entropy.weight.shape == (30, 6)
