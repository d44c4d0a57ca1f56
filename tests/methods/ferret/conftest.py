"""Shared fixtures: the digits runs are trained once per session (several tests check them)."""

import pytest
import torch


@pytest.fixture(scope="session")
def digits_runs():
    """FedAvg, Ferret (K = 200, 8% of d) and FedKSeed on digits: 20 clients, Dirichlet 0.5, 5 per round, 30 rounds."""
    from paperkit.methods import ferret

    torch.set_num_threads(1)
    task = ferret.digits_task(20, 0.5, seed=0)
    common = dict(n_clients=20, fraction=0.25, rounds=30, local_steps=10, seed=0)
    runs = {}
    for name, cfg in {
        "fedavg": ferret.FedConfig(algo="fedavg", lr=0.5, **common),
        "ferret": ferret.FedConfig(algo="ferret", lr=0.5, k=200, **common),
        # FedKSeed with 5× the local steps (the paper gives it 200 ZO steps) and its best lr on this task
        "fedkseed": ferret.FedConfig(algo="fedkseed", lr=0.01, **{**common, "local_steps": 50}),
    }.items():
        state, rows = ferret.run_federated(task, cfg)
        runs[name] = (state, rows)
    return runs
