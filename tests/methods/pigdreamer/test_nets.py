"""Symlog, two-hot, the categorical latents and the KL balance against their definitions."""

import numpy as np
import pytest
import torch

from paperkit.methods.pigdreamer.nets import RSSM, TwoHot, free_bits_kl, kl_categorical, symexp, symlog


def test_symlog_inverts():
    x = torch.linspace(-1e4, 1e4, 1001)
    torch.testing.assert_close(symexp(symlog(x)), x, rtol=1e-5, atol=1e-3)


def test_two_hot_round_trips_and_has_the_right_mean():
    th = TwoHot()
    y = torch.tensor([-300.0, -2.5, -0.01, 0.0, 0.3, 1.0, 7.0, 1234.5])
    enc = th.encode(y)
    torch.testing.assert_close(enc.sum(-1), torch.ones(8))
    assert ((enc > 0).sum(-1) <= 2).all()
    torch.testing.assert_close((enc * th.points).sum(-1), symlog(y), atol=1e-5, rtol=0)   # linear in symlog space
    logits = torch.log(enc + 1e-30)
    torch.testing.assert_close(th.decode(logits), y, rtol=1e-4, atol=1e-4)


def test_kl_categorical_matches_numpy():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(8), size=(3, 8))
    q = rng.dirichlet(np.ones(8), size=(3, 8))
    want = (p * (np.log(p) - np.log(q))).sum((-2, -1))
    got = kl_categorical(torch.tensor(np.log(p)), torch.tensor(np.log(q)))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_free_bits_and_balance():
    """Below one nat the loss is the constant 0.5 + 0.1 (no gradient); above, dyn trains the prior and rep
    the posterior with weights 0.5 and 0.1."""
    post = torch.log_softmax(torch.randn(4, 8, 8) * 3, -1).requires_grad_()
    prior = torch.log_softmax(torch.randn(4, 8, 8) * 3, -1).requires_grad_()
    loss, kl_dyn, kl_rep = free_bits_kl(post, prior)
    kl = kl_categorical(post, prior).detach()
    assert float(kl_dyn) == pytest.approx(float(kl.mean()), rel=1e-6)
    assert loss.item() == pytest.approx(0.6 * float(kl.clamp(min=1).mean()), rel=1e-6)
    same = torch.log_softmax(torch.randn(4, 8, 8), -1)
    loss0, _, _ = free_bits_kl(same, same)
    assert float(loss0) == pytest.approx(0.6)


def test_unimix_and_straight_through_sample():
    rssm = RSSM(embed=4, action_dim=2, deter=16, stoch=4, classes=5, hidden=16)
    logits = torch.full((3, 20), -1e9)
    logits[:, ::5] = 0.0                                   # all mass on class 0 before mixing
    logp = rssm.logprobs(logits)
    torch.testing.assert_close(logp.exp()[..., 1], torch.full((3, 4), 0.01 / 5))
    gen = torch.Generator().manual_seed(0)
    draws = torch.stack([rssm.sample(rssm.logprobs(torch.zeros(1, 20)), gen) for _ in range(4000)])
    assert draws.sum(-1).eq(4).all()
    freq = draws.reshape(4000, 4, 5).mean((0, 1))
    assert (freq - 0.2).abs().max() < 0.02                 # uniform logits → uniform draws
    x = torch.zeros(1, 20, requires_grad=True)
    (rssm.sample(rssm.logprobs(x), gen) * torch.arange(20.0)).sum().backward()
    assert x.grad.abs().sum() > 0                          # gradients pass straight through the one-hot draw
