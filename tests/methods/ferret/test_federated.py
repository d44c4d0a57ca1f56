"""Federated rounds: the digits run (Ferret near FedAvg at a tenth of the upload), exact references for FedAvg/FedKSeed/momentum, resume."""

import numpy as np
import pytest
import torch
from torch import nn

from paperkit.core.errors import ConfigError, InputError
from paperkit.methods import ferret as F


def _rounds_to_reach(rows, loss):
    return next((r["round"] for r in rows if r["test_loss"] <= loss), None)


def test_digits_ferret_matches_fedavg_at_a_tenth_of_the_upload(digits_runs):
    """Digits: FedAvg ≥ 0.90; Ferret (K = 200) within 0.05 of it while uploading < 10% of d."""
    fedavg, ferret = digits_runs["fedavg"][1], digits_runs["ferret"][1]
    assert fedavg[-1]["test_acc"] >= 0.90
    assert ferret[-1]["test_acc"] >= fedavg[-1]["test_acc"] - 0.05
    assert all(r["uplink_floats"] == 200 for r in ferret)
    assert ferret[-1]["uplink_floats"] < 0.10 * 2410
    assert fedavg[-1]["uplink_floats"] == 2410


def test_fedkseed_needs_many_more_rounds(digits_runs):
    """Ferret's loss after 10 rounds is not reached by FedKSeed (5× the local steps) within 30 rounds."""
    ferret, kseed = digits_runs["ferret"][1], digits_runs["fedkseed"][1]
    target = ferret[9]["test_loss"]
    assert _rounds_to_reach(ferret, target) <= 10
    assert _rounds_to_reach(kseed, target) is None
    assert kseed[-1]["test_loss"] < kseed[0]["test_loss"]  # it does learn, just slowly
    assert kseed[-1]["uplink_floats"] == 50  # one scalar per local step (+ a seed index)


def test_fedavg_with_one_client_is_local_sgd():
    """Reference: FedAvg with one client and server lr 1 equals plain SGD on that client's batches."""
    task = F.digits_task(1, None, seed=3)
    cfg = F.FedConfig(algo="fedavg", n_clients=1, fraction=1.0, rounds=2, local_steps=4, lr=0.3, batch_size=8)
    state, _ = F.run_federated(task, cfg)
    model = task.make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    for rnd in range(2):
        gen = torch.Generator().manual_seed(F.derive_seed(0, 0xBA, rnd, 0))
        for _ in range(4):
            opt.zero_grad()
            task.loss(model, task.sample_batch(0, 8, gen)).backward()
            opt.step()
    torch.testing.assert_close(state.weights, nn.utils.parameters_to_vector(model.parameters()).detach())


def test_fedkseed_scalars_rebuild_the_local_trajectory():
    task = F.digits_task(4, None, seed=0)
    fed = F.Federation(task, F.FedConfig(algo="fedkseed", n_clients=4, fraction=0.5, local_steps=6, lr=0.01,
                                         kseed_pool=16))
    msg = fed.client_update(fed.initial_state().weights, 0, 1)
    assert len(msg.indices) == 6 and all(0 <= j < 16 for j in msg.indices)
    # replay by hand: w_T = w_0 − lr Σ g_t z_{j_t}
    w0 = fed.initial_state().weights
    fed2 = F.Federation(task, fed.cfg)
    wT = w0.clone()
    for j, g in zip(msg.indices, msg.payload.tolist(), strict=False):
        wT -= 0.01 * g * fed2._direction(fed2.pool[j])
    torch.testing.assert_close(fed.decode(msg), w0 - wT)
    assert msg.uplink_bytes() == 6 * 4 + 6 * 4


def test_server_momentum_and_lr():
    task = F.digits_task(4, None, seed=0)
    cfg = F.FedConfig(algo="fedavg", n_clients=4, fraction=0.5, local_steps=2, lr=0.1, server_lr=2.0, momentum=0.9)
    fed = F.Federation(task, cfg)
    s0 = fed.initial_state()
    s1, _, m1 = fed.run_round(s0, [])
    s2, _, m2 = fed.run_round(s1, m1)
    d1 = torch.stack([x.payload for x in m1]).mean(0)
    d2 = torch.stack([x.payload for x in m2]).mean(0)
    torch.testing.assert_close(s1.weights, s0.weights - 2.0 * d1)
    torch.testing.assert_close(s2.weights, s1.weights - 2.0 * (0.9 * d1 + d2))


def test_same_seed_same_model_and_resume_equals_uninterrupted():
    task = F.digits_task(6, 0.5, seed=1)
    cfg = F.FedConfig(algo="ferret", n_clients=6, fraction=0.5, rounds=4, local_steps=3, k=30, seed=1)
    full, rows = F.run_federated(task, cfg)
    again, _ = F.run_federated(task, cfg)
    assert torch.equal(full.weights, again.weights)
    half, first = F.run_federated(task, F.FedConfig(**{**cfg.to_dict(), "rounds": 2}))
    resumed, rest = F.run_federated(task, cfg, state=F.ServerState.from_checkpoint(half.to_checkpoint()))
    assert torch.equal(resumed.weights, full.weights)
    assert [r["test_loss"] for r in first + rest] == [r["test_loss"] for r in rows]


def test_clipping_bounds_each_update():
    task = F.digits_task(4, None, seed=0)
    fed = F.Federation(task, F.FedConfig(algo="ferret", n_clients=4, fraction=1.0, local_steps=3, k=20,
                                         clip=1e-3))
    s0 = fed.initial_state()
    s1, _, _ = fed.run_round(s0, [])
    assert float((s1.weights - s0.weights).norm()) <= 1e-3 + 1e-7


@pytest.mark.parametrize("bad, match", [
    (dict(k=0), "--k 0 "), (dict(k=-3), "--k -3 "), (dict(fraction=0.0), r"\(0, 1\]"),
    (dict(fraction=1.5), r"\(0, 1\]"), (dict(algo="sgd"), "unknown"), (dict(lr=-1.0), "lr"),
    (dict(blocks="many"), "--blocks"), (dict(momentum=1.0), "momentum"),
])
def test_config_errors(bad, match):
    with pytest.raises(ConfigError, match=match):
        F.FedConfig(**bad).validate()


def test_more_clients_than_examples_is_an_input_error():
    with pytest.raises(InputError, match="clients"):
        F.digits_task(5000, 0.5, seed=0)


def test_k_smaller_than_blocks_is_refused():
    task = F.digits_task(4, None, seed=0)
    with pytest.raises(ConfigError, match="number of blocks"):
        F.Federation(task, F.FedConfig(n_clients=4, k=2, blocks="tensor"))


def test_client_sampling_fraction():
    task = F.digits_task(20, 0.5, seed=0)
    fed = F.Federation(task, F.FedConfig(n_clients=20, fraction=0.25))
    picks = [fed.sample_clients(r) for r in range(50)]
    assert all(len(p) == 5 and len(set(p)) == 5 for p in picks)
    counts = np.bincount(np.concatenate(picks), minlength=20)
    assert counts.min() > 0  # every client takes part sometime


def test_initial_state_is_the_built_model_even_after_local_training():
    """Several nodes can share one Federation in a process (Flower's simulation engine): training one client
    must not move the starting point of the next."""
    fed = F.Federation(F.digits_task(2, None, seed=0), F.FedConfig(n_clients=2, k=20, local_steps=2))
    w0 = fed.initial_state().weights.clone()
    fed.client_update(w0, 0, 0)
    assert torch.equal(fed.initial_state().weights, w0)
