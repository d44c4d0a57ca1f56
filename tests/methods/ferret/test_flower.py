"""Flower: the message codec, a loopback run (server + 2 clients) equal to the simulation, a lost client."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from paperkit.methods import ferret as F
from paperkit.methods.ferret.flower import decode_rounds, encode_rounds

ROOT = Path(__file__).resolve().parents[3]
TASK = ["--clients", "{n}", "--seed", "5"]
ALGO = ["--fraction", "1", "--rounds", "3", "--k", "40", "--local-steps", "3"]


def test_codec_round_trips_messages():
    m1 = F.ClientMessage(3, 1, "ferret", torch.randn(7), seed=2**62 + 5, counts=[3, 4])
    m2 = F.ClientMessage(0, 1, "ferret", torch.randn(5), seed=9, counts=[5])
    m3 = F.ClientMessage(1, 2, "fedkseed", torch.randn(2), indices=[4, 4000])
    out = decode_rounds(encode_rounds([(1, [m1, m2]), (2, [m3])], "ferret"), "ferret")
    assert [r for r, _ in out] == [1, 2]
    got = out[0][1] + out[1][1]
    for a, b in zip([m1, m2, m3], got, strict=False):
        assert (a.client, a.seed, a.counts, a.indices) == (b.client, b.seed, b.counts, b.indices)
        assert torch.equal(a.payload, b.payload)
    assert decode_rounds(encode_rounds([], "ferret"), "ferret") == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "lib"), str(ROOT / "cli")]),
               OMP_NUM_THREADS="1", PAPERKIT_PROGRESS="never")
    return env


def _run_federation(tmp_path, n_clients, drop=None):
    port = _free_port()
    common = [a.format(n=n_clients) for a in TASK]
    cmd = [sys.executable, "-m", "paperkit_cli"]
    server = subprocess.Popen([*cmd, "ferret-server", "--address", f"127.0.0.1:{port}", "--min-clients",
                               str(n_clients), "--wait-timeout", "60", "--round-timeout", "60", *common, *ALGO,
                               "--run-dir", str(tmp_path / "server")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    clients = []
    for i in range(n_clients):
        extra = ["--drop-round", str(drop[1])] if drop and drop[0] == i else []
        clients.append(subprocess.Popen([*cmd, "ferret-client", "--server", f"127.0.0.1:{port}", "--partition-id",
                                         str(i), "--max-wait", "60", *common, *extra],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env()))
    try:
        out, err = server.communicate(timeout=150)
        for c in clients:
            c.communicate(timeout=30)
    finally:
        for p in [server, *clients]:
            if p.poll() is None:
                p.kill()
    assert server.returncode == 0, err[-2000:] + "".join(c.stderr.read() if c.stderr else "" for c in clients)
    return out, err


@pytest.mark.slow
def test_loopback_flower_run_equals_the_simulation_and_survives_a_lost_client(tmp_path):
    """Server + 2 client processes on localhost, 3 rounds. Rounds 1–2 must equal the in-process simulation
    with the same seeds bit for bit; client 1 then crashes while training round 3, which completes with
    client 0 alone, and the final model equals the in-process replay of exactly that. (One federation
    checks both, as process start-up dominates the cost.)"""
    _, err = _run_federation(tmp_path, 2, drop=(1, 3))
    from paperkit.core.tables import read_table

    torch.set_num_threads(1)
    fed = F.Federation(F.digits_task(2, 0.5, seed=5),
                       F.FedConfig(n_clients=2, fraction=1.0, rounds=3, k=40, local_steps=3, seed=5))
    state, prev, rows = fed.initial_state(), [], []
    for _ in range(2):
        state, row, prev = fed.run_round(state, prev)
        rows.append(row)
    hist = read_table(tmp_path / "server" / "history.csv")
    assert list(hist.column("test_loss"))[:2] == [r["test_loss"] for r in rows]
    assert list(hist.column("uplink_floats")) == [40.0, 40.0, 40.0]
    # round 3: the lost client is a logged failure; the round completes with the other
    assert list(hist.column("clients")) == [2, 2, 1]
    assert list(hist.column("failures")) == [0, 0, 1]
    assert "failed or disconnected" in err
    final = fed.aggregate(state, [fed.client_update(state.weights, 2, 0)])
    served = torch.load(tmp_path / "server" / "model.pt", weights_only=True)["weights"]
    assert torch.equal(served, final.weights)
