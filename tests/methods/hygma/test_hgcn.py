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
