import numpy as np
import pytest
import torch

from paperkit.methods.hygma.hgcn import HGCN, attention_loss, consistency_loss

H = torch.tensor([[1.0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1], [0, 1, 0, 0, 1, 0]])


@pytest.mark.parametrize("mode", ["paper", "code"])
def test_permuting_agents_permutes_outputs(mode):
    torch.manual_seed(0)
    net = HGCN(7, mode=mode)
    x = torch.randn(2, 6, 7)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    out, _ = net(x, H)
    out_p, _ = net(x[:, perm], H[:, perm])
    assert out.shape == (2, 6, 48)
    torch.testing.assert_close(out_p, out[:, perm], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["paper", "code"])
def test_every_parameter_gets_a_gradient_from_the_full_objective(mode):
    torch.manual_seed(1)
    net = HGCN(7, mode=mode)
    out, atts = net(torch.randn(4, 6, 7), H)
    loss = out.pow(2).mean() + 1e-3 * consistency_loss(out, H) + 1e-2 * sum(attention_loss(a, H) for a in atts)
    assert torch.isfinite(loss)
    loss.backward()
    for name, p in net.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_attention_loss_is_zero_at_uniform_and_has_a_gradient():
    net = HGCN(7)
    _, atts = net(torch.randn(3, 6, 7), H)
    loss = attention_loss(atts[0], H)
    assert loss >= 0
    loss.backward()
    assert net.layers[0].query.weight.grad.abs().sum() > 0
    uniform = torch.full((1, 1, 6, 3), 1 / 3)
    assert attention_loss(uniform, H).item() == pytest.approx(0.0, abs=1e-6)
    peaked = torch.tensor([0.5, 0.25, 0.25]).expand(1, 1, 6, 3)
    assert attention_loss(peaked, H).item() == pytest.approx(0.5 * np.log(1.5) + 0.5 * np.log(0.75), rel=1e-5)


def test_consistency_loss_matches_direct_variance():
    f = torch.randn(1, 6, 4)
    h = H[:2]
    direct = (f[0, :3].var(0, unbiased=False).sum() + f[0, 3:].var(0, unbiased=False).sum()) / 2
    torch.testing.assert_close(consistency_loss(f, h), direct)


class _ReferenceLayer(torch.nn.Module):
    """The layer as first written (batch-major, per-(row, head) matrix products): the agents-first layer
    must give the same features, attention and gradients."""

    def __init__(self, in_dim, out_dim, heads, mode):
        super().__init__()
        self.heads, self.mode, self.scale = heads, mode, 1.0 / np.sqrt(out_dim // heads)
        self.theta, self.query, self.key = (torch.nn.Linear(a, out_dim) for a in (in_dim, out_dim, out_dim))
        self.out = torch.nn.Linear(out_dim, out_dim) if mode == "code" else None

    def split(self, x):
        b, m, d = x.shape
        return x.view(b, m, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, h):
        xt = self.theta(x)
        if self.mode == "code":
            xt = torch.relu(xt)
        edges = torch.einsum("en,bnd->bed", h, xt) / h.sum(1).clamp(min=1)[None, :, None]
        q, k = self.split(self.query(xt)), self.split(self.key(edges))
        att = torch.softmax((q @ k.transpose(-1, -2)) * self.scale, dim=-1)   # (B, heads, n, E)
        if self.mode == "code":
            return torch.relu(self.out((att @ self.split(edges)).transpose(1, 2).reshape(xt.shape))), att
        ha = 0.5 * (h.T / h.T.sum(-1, keepdim=True).clamp(min=1) + att)
        dv = ha.sum(-1, keepdim=True).rsqrt()
        de = ha.sum(-2, keepdim=True).clamp(min=1e-6).reciprocal()
        nodes = dv * ((ha * de) @ (ha.transpose(-1, -2) @ (dv * self.split(xt))))
        return torch.relu(nodes.transpose(1, 2).reshape(xt.shape)), att


def _reference_attention_loss(a, h):
    return (a * (a.clamp(min=1e-12) * h.shape[0]).log()).sum(-1).mean()


def _reference_consistency(f, h):
    sizes = h.sum(dim=1).clamp(min=1)[None, :, None]
    means = torch.einsum("en,bnd->bed", h, f) / sizes
    return (((f[:, None] - means[:, :, None]) ** 2).sum(-1) * h[None]).sum(-1).div(sizes[..., 0]).mean()


@pytest.mark.parametrize("mode", ["paper", "code"])
@pytest.mark.parametrize("h", [H[:2], H, torch.tensor([[1.0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]])],
                         ids=["partition", "overlapping", "uncovered-agents"])
def test_agents_first_hgcn_equals_the_reference_layer_outputs_and_gradients(mode, h):
    torch.manual_seed(2)
    net = HGCN(7, mode=mode)
    ref = torch.nn.ModuleList([_ReferenceLayer(7, 64, 4, mode), _ReferenceLayer(64, 48, 4, mode)])
    ref.load_state_dict(net.layers.state_dict())
    x = torch.randn(5, 6, 7)
    out, atts = net(x, h)
    y, ref_atts = x, []
    for layer in ref:
        y, a = layer(y, h)
        ref_atts.append(a)
    torch.testing.assert_close(out, y, rtol=0, atol=1e-6)
    for a, b in zip(atts, ref_atts, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
    torch.testing.assert_close(consistency_loss(out, h), _reference_consistency(y, h), rtol=1e-6, atol=1e-7)
    r = torch.randn(5, 6, 48)
    assert consistency_loss(r, h).item() == pytest.approx(_reference_consistency(r, h).item(), rel=1e-6)
    for a, b in zip(atts, ref_atts, strict=True):
        torch.testing.assert_close(attention_loss(a, h), _reference_attention_loss(b, h), rtol=1e-6, atol=1e-7)
    (out.pow(2).mean() + consistency_loss(out, h) + sum(attention_loss(a, h) for a in atts)).backward()
    (y.pow(2).mean() + _reference_consistency(y, h) + sum(_reference_attention_loss(a, h) for a in ref_atts)).backward()
    for (name, p), q in zip(net.layers.named_parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=1e-6, msg=name)


def _run_objective(net, x, h):
    net.zero_grad()
    out, atts = net(x, h)
    (out.pow(2).mean() + consistency_loss(out, h) + sum(attention_loss(a, h) for a in atts)).backward()
    return out.detach(), [a.detach() for a in atts], {n: p.grad.clone() for n, p in net.named_parameters()}


@pytest.mark.parametrize("h", [H[:2], H, torch.tensor([[1.0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]])],
                         ids=["partition", "overlapping", "uncovered-agents"])
def test_fused_cpu_kernel_equals_the_torch_formulation(h, monkeypatch):
    """The numba attention step (forward and backward) against the torch ops it replaces, on the whole HGCN."""
    from paperkit.methods.hygma import hgcn

    torch.manual_seed(3)
    net, x = HGCN(7), torch.randn(9, 6, 7)
    fused = _run_objective(net, x, h)
    monkeypatch.setattr(hgcn, "FUSE_ON_CPU", False)
    plain = _run_objective(net, x, h)
    torch.testing.assert_close(fused[0], plain[0], rtol=0, atol=1e-6)
    for a, b in zip(fused[1], plain[1], strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
    for name, g in plain[2].items():
        torch.testing.assert_close(fused[2][name], g, rtol=1e-4, atol=1e-6, msg=name)


def test_fused_kernel_gradients_match_finite_differences():
    from paperkit.methods.hygma.hgcn import Incidence
    from paperkit.methods.hygma.kernels import FusedHyperedgeAttention

    inc = Incidence.of(H.double())
    gen = torch.Generator().manual_seed(4)
    # features first: (heads, channels, agents or hyperedges, batch rows)
    x, q = (torch.randn(2, 5, 6, 3, generator=gen, dtype=torch.float64, requires_grad=True) for _ in range(2))
    k = torch.randn(2, 5, 3, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    dv = torch.linspace(0.7, 1.0, 6, dtype=torch.float64)          # a non-trivial D_v^{-1/2}
    assert torch.autograd.gradcheck(
        lambda a, b, c: FusedHyperedgeAttention.apply(a, b, c, inc.half_agents, dv, 0.6), (x, q, k))


def test_rollout_inference_path_equals_the_autograd_path_and_follows_weight_updates():
    """Small no-grad batches take the numba inference path; it must give the training path's features and
    attention, and keep doing so after an optimiser step, load_state_dict and a deep copy (its cached views)."""
    import copy

    from paperkit.methods.hygma import hgcn

    torch.manual_seed(5)
    net, x, h = HGCN(7), torch.randn(4, 6, 7), H

    def both(module):
        with torch.no_grad():
            fast = module(x, h)
        slow = module(x, h)              # grad enabled: the training path
        torch.testing.assert_close(fast[0], slow[0].detach(), rtol=0, atol=1e-6)
        for a, b in zip(fast[1], slow[1], strict=True):
            torch.testing.assert_close(a, b.detach(), rtol=0, atol=1e-6)
        return slow

    assert 4 * 6 <= hgcn.INFER_ROWS
    out, _ = both(net)
    before = out.detach().clone()
    opt = torch.optim.AdamW(net.parameters(), lr=0.1)
    out.pow(2).mean().backward()
    opt.step()
    after, _ = both(net)
    assert (after.detach() - before).abs().max() > 1e-3      # the step changed the outputs, and both paths agree
    other = HGCN(7)
    other.load_state_dict(net.state_dict())
    both(other)
    clone = copy.deepcopy(net)
    with torch.no_grad():
        for p in clone.parameters():
            p.mul_(0.5)
    both(clone)
    both(net)


@pytest.mark.parametrize("rows", [0, 1, 200])
@pytest.mark.parametrize("h", [torch.ones(1, 6), H[:2]], ids=["one-hyperedge", "partition"])
def test_fused_and_torch_paths_agree_on_edge_sizes(h, rows, monkeypatch):
    """An empty batch, one row, and more rows than the rollout path takes (200 × 6 agents > INFER_ROWS), with one
    hyperedge (``grouping="single"``) and two; without and with autograd."""
    from paperkit.methods.hygma import hgcn

    torch.manual_seed(6)
    net, x = HGCN(7), torch.randn(rows, 6, 7)
    outs = []
    for fuse in (True, False):
        monkeypatch.setattr(hgcn, "FUSE_ON_CPU", fuse)
        with torch.no_grad():
            plain = net(x, h)
        outs.append((plain, net(x, h)))
    for (a, atts_a), (b, atts_b) in zip(outs[0], outs[1], strict=True):
        assert a.shape == b.shape == (rows, 6, 48)
        torch.testing.assert_close(a.detach(), b.detach(), rtol=0, atol=1e-6)
        for p, q in zip(atts_a, atts_b, strict=True):
            assert p.shape == q.shape == (rows, 4, 6, h.shape[0])
            torch.testing.assert_close(p.detach(), q.detach(), rtol=0, atol=1e-6)
