import torch

from paperkit.methods.hygma.mixers import QMixer, VDNMixer


def test_qmix_is_monotone_in_every_agent_q_on_random_inputs():
    torch.manual_seed(0)
    mixer = QMixer(5, 11)
    q = torch.randn(64, 5, requires_grad=True)
    state = torch.randn(64, 11)
    total = mixer(q, state)
    assert total.shape == (64,)
    (grad,) = torch.autograd.grad(total.sum(), q)
    assert (grad >= 0).all() and (grad > 0).any()


def test_qmix_keeps_leading_dims_and_vdn_sums():
    mixer = QMixer(3, 4)
    assert mixer(torch.randn(2, 7, 3), torch.randn(2, 7, 4)).shape == (2, 7)
    q = torch.randn(2, 7, 3)
    torch.testing.assert_close(VDNMixer()(q, None), q.sum(-1))
