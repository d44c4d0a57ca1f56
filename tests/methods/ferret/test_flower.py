"""Flower: the message codec, the Message-API apps against a stand-in Grid (equal to the simulation, a lost
client, server-side resume), a real loopback federation (flower-superlink + flower-supernode, TLS) and
Flower's simulation engine with 50 virtual clients."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from paperkit.core.errors import ConfigError, InputError
from paperkit.methods import ferret
from paperkit.methods.ferret.flower import decode_rounds, encode_rounds

ROOT = Path(__file__).resolve().parents[3]
def test_codec_round_trips_messages():
    m1 = ferret.ClientMessage(3, 1, "ferret", torch.randn(7), seed=2**62 + 5, counts=[3, 4])
    m2 = ferret.ClientMessage(0, 1, "ferret", torch.randn(5), seed=9, counts=[5])
    m3 = ferret.ClientMessage(1, 2, "fedkseed", torch.randn(2), indices=[4, 4000])
    out = decode_rounds(encode_rounds([(1, [m1, m2]), (2, [m3])], "ferret"), "ferret")
    assert [r for r, _ in out] == [1, 2]
    got = out[0][1] + out[1][1]
    for a, b in zip([m1, m2, m3], got, strict=False):
        assert (a.client, a.seed, a.counts, a.indices) == (b.client, b.seed, b.counts, b.indices)
        assert torch.equal(a.payload, b.payload)
    assert decode_rounds(encode_rounds([], "ferret"), "ferret") == []



# ------------------------------------------------------------------------- apps on a stand-in Grid
@pytest.fixture(autouse=True)
def _task_identity():
    """Flower stamps messages with the process's task identity (set by flwr-serverapp/-clientapp)."""
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 0, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


class FakeGrid:
    """Delivers each message to an in-process ClientApp handler with its node's Context (what a SuperNode
    does); ``lose=(partition, round)`` makes that node vanish mid-round (no reply, gone from the node list)."""

    def __init__(self, n: int, settings: dict, lose: tuple[int, int] | None = None, fail_at_round: int | None = None):
        from flwr.app import Context, RecordDict

        self.settings, self.lose, self.fail_at_round = settings, lose, fail_at_round
        self.nodes = {1000 + 7 * i: Context(run_id=1, node_id=1000 + 7 * i, node_config={"partition-id": i},
                                            state=RecordDict(), run_config={}) for i in range(n)}

    def get_node_ids(self):
        return list(self.nodes)

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        from flwr.app import Message

        return Message(content, dst_node_id, message_type, group_id=group_id)

    def send_and_receive(self, messages, *, timeout=None):
        from flwr.app import Error, Message

        from paperkit.methods.ferret.flower import client_query, client_train

        out = []
        for m in messages:
            node = m.metadata.dst_node_id
            ctx = self.nodes[node]
            if m.metadata.message_type == "train":
                rnd = int(m.content["task"]["round"]) + 1
                if self.fail_at_round == rnd:
                    raise KeyboardInterrupt  # the server process is stopped during this round
                if self.lose and ctx.node_config["partition-id"] == self.lose[0] and rnd == self.lose[1]:
                    del self.nodes[node]
                    continue
                handler = client_train
            else:
                handler = client_query
            try:
                reply = handler(m, ctx, self.settings)
            except Exception as e:  # noqa: BLE001 - as Flower turns a ClientApp exception into an error reply
                reply = Message(Error(code=0, reason=str(e)), reply_to=m)
            out.append(reply)
        return out


def _settings(run_dir, n=3, rounds=3, fraction=1.0, **kw):
    from paperkit.methods.ferret.flower import run_settings

    cfg = ferret.FedConfig(n_clients=n, fraction=fraction, rounds=rounds, k=40, local_steps=3, seed=5, **kw)
    task = {"task": "digits", "model_dir": None, "clients": n, "dirichlet": 0.5, "d_model": 64, "layers": 2}
    return run_settings(task=task, fed=cfg, run_dir=run_dir, min_clients=n, wait_timeout=5, round_timeout=5)


def _serve(grid, settings):
    from flwr.app import Context, RecordDict

    from paperkit.methods.ferret.flower import server_main

    server_main(grid, Context(run_id=1, node_id=0, node_config={}, state=RecordDict(), run_config={}), settings)
    return torch.load(Path(settings["run_dir"]) / "checkpoints" / "state.pt", weights_only=True)


def _simulate(settings, rounds=None, lost=None):
    """The in-process simulation of the same run; ``lost=(partition, round)`` replays that round without it."""
    torch.set_num_threads(1)
    cfg = ferret.FedConfig(**settings["fed"])
    fed = ferret.Federation(ferret.digits_task(cfg.n_clients, 0.5, seed=cfg.seed), cfg)
    state, prev = fed.initial_state(), []
    for _ in range(rounds or cfg.rounds):
        if lost and state.round + 1 >= lost[1]:
            chosen = [c for c in fed.sample_clients(state.round) if c != lost[0]]
            prev = [fed.client_update(state.weights, state.round, c) for c in chosen]
            state = fed.aggregate(state, prev)
        else:
            state, _, prev = fed.run_round(state, prev)
    return state


def test_apps_equal_the_simulation_bit_for_bit(tmp_path):
    settings = _settings(tmp_path, momentum=0.5)  # momentum: the replicas must carry it too
    saved = _serve(FakeGrid(3, settings), settings)
    assert torch.equal(saved["state"]["weights"], _simulate(settings).weights)
    assert saved["state"]["round"] == 3


def test_apps_with_per_block_seed_pools_equal_the_simulation(tmp_path):
    """--seed-pool per-block travels in the run settings; the pool indices travel in the codec's header."""
    settings = _settings(tmp_path, rounds=2, seed_pool="per-block", alloc="prop2")
    saved = _serve(FakeGrid(3, settings), settings)
    assert torch.equal(saved["state"]["weights"], _simulate(settings).weights)
    other = {**settings, "fed": {**settings["fed"], "seed_pool": "run"}}
    assert not torch.equal(saved["state"]["weights"], _simulate(other).weights)  # the pool was used


def test_a_client_lost_mid_round_does_not_stop_the_run(tmp_path):
    settings = _settings(tmp_path)
    saved = _serve(FakeGrid(3, settings, lose=(1, 2)), settings)

    rows = json.loads(saved["rows"])
    assert [r["clients"] for r in rows] == [3, 2, 2] and [r["failures"] for r in rows] == [0, 1, 1]
    assert torch.equal(saved["state"]["weights"], _simulate(settings, lost=(1, 2)).weights)
    notes = (tmp_path / "flower" / "progress.jsonl").read_text()
    assert "partition 1 was lost" in notes


def test_server_resumes_from_its_checkpoint_with_fresh_clients(tmp_path):
    settings = _settings(tmp_path, rounds=4, fraction=0.67)
    with pytest.raises(KeyboardInterrupt):
        _serve(FakeGrid(3, settings, fail_at_round=3), settings)
    assert torch.load(tmp_path / "checkpoints" / "state.pt", weights_only=True)["state"]["round"] == 2
    saved = _serve(FakeGrid(3, settings), settings)  # new nodes: empty replicas, the history is replayed
    assert torch.equal(saved["state"]["weights"], _simulate(settings).weights)
    assert "resumed_at" in (tmp_path / "flower" / "progress.jsonl").read_text()


def test_client_with_other_data_is_left_out(tmp_path):
    from flwr.app import ConfigRecord, Context, Message, RecordDict

    from paperkit.methods.ferret.flower import client_query

    data = tmp_path / "d.jsonl"
    data.write_text("".join(f'{{"instruction": "say {i}", "output": "{i}"}}\n' for i in range(20)))
    settings = _settings(tmp_path)
    settings["task"]["task"], settings["data_sha256"] = f"jsonl:{data}", "0" * 64
    ctx = Context(run_id=1, node_id=3, node_config={"partition-id": 0, "control-dir": str(tmp_path)},
                  state=RecordDict(), run_config={})
    ask = Message(RecordDict({"ask": ConfigRecord({"what": "partition"})}), 3, "query")
    with pytest.raises(InputError, match="differs from the server"):
        client_query(ask, ctx, settings)
    assert json.loads((tmp_path / "error").read_text())["exit_code"] == 3  # ferret-client exits 3 on it
    ctx.node_config["partition-id"] = 7
    with pytest.raises(ConfigError, match="the server's run has 3 clients"):
        client_query(ask, ctx, _settings(tmp_path))


# ------------------------------------------------------------------------ Flower's simulation engine
@pytest.mark.slow
def test_simulation_engine_runs_50_virtual_clients(tmp_path):
    """flwr.simulation.run_simulation: 50 virtual SuperNodes in this process, 5 sampled per round."""
    pytest.importorskip("ray", reason="Flower's simulation engine needs the flwr[simulation] extra (Ray)")
    from paperkit.methods.ferret.flower import run_virtual

    settings = _settings(tmp_path, n=50, rounds=2, fraction=0.1)
    settings["wait_timeout"] = settings["round_timeout"] = 120.0
    run_virtual(settings, 50)
    saved = torch.load(tmp_path / "checkpoints" / "state.pt", weights_only=True)
    assert saved["state"]["round"] == 2
    assert torch.equal(saved["state"]["weights"], _simulate(settings).weights)


# ------------------------------------------------------------------------- real Flower processes
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "lib"), str(ROOT / "cli")]),
                OMP_NUM_THREADS="1", PAPERKIT_PROGRESS="never")


CMD = [sys.executable, "-m", "paperkit_cli"]
ALGO = ["--clients", "2", "--fraction", "1", "--rounds", "3", "--k", "40", "--local-steps", "3", "--seed", "5"]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("certs")
    subprocess.run([*CMD, "ferret-certs", "--nodes", "3", "--run-dir", str(d / "c")], check=True, env=_env(),
                   capture_output=True, timeout=60)
    return d / "c"


def _start(args, **kw):
    return subprocess.Popen([*CMD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                            **kw)


def _finish(procs, timeout):
    out = []
    try:
        for p in procs:
            out.append(p.communicate(timeout=timeout))
    finally:
        for p in procs:
            _stop(p)
    return out


def _stop(p):
    """SIGTERM first: the wrappers then stop the Flower processes they started."""
    if p.poll() is None:
        p.terminate()
        try:
            p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()


def _wait_for_port(server, port):
    deadline = time.monotonic() + 60
    while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
        assert time.monotonic() < deadline and server.poll() is None
        time.sleep(0.3)


def _assert_equals_the_simulation(tmp_path, server_dir):
    from paperkit.core.tables import read_table

    settings = _settings(tmp_path, n=2)
    hist = read_table(server_dir / "history.csv")
    assert list(hist.column("clients")) == [2, 2, 2] and list(hist.column("failures")) == [0, 0, 0]
    torch.set_num_threads(1)
    sim_rows = ferret.run_federated(ferret.digits_task(2, 0.5, seed=5), ferret.FedConfig(**{**settings["fed"], "rounds": 3}))[1]
    assert list(hist.column("test_loss")) == [r["test_loss"] for r in sim_rows]  # bit for bit
    served = torch.load(server_dir / "model.pt", weights_only=True)["weights"]
    assert torch.equal(served, _simulate(settings, rounds=3).weights)


def _tls_server(certs, port, run_dir, *extra):
    return _start(["ferret-server", "--listen", f"127.0.0.1:{port}", "--tls-ca", str(certs / "ca.crt"),
                   "--tls-cert", str(certs / "server.crt"), "--tls-key", str(certs / "server.key"),
                   "--min-clients", "2", "--wait-timeout", "120", "--round-timeout", "60", *ALGO,
                   "--run-dir", str(run_dir), *extra])


def _client(certs, port, i, *extra, max_wait=60):
    return ["ferret-client", "--server", f"127.0.0.1:{port}", "--tls-ca", str(certs / "ca.crt"),
            "--partition-id", str(i), "--max-wait", str(max_wait), *extra]


@pytest.mark.slow
def test_authenticated_tls_federation_refuses_an_intruder_and_equals_the_simulation(tmp_path, certs):
    """ferret-server (flower-superlink, TLS, SuperNode authentication admitting node-0's and node-1's keys)
    on 127.0.0.1: a node signing with node-2's key is refused with a one-line error; then 2 ferret-clients
    (flower-supernode) with the admitted keys run 3 rounds, and every round's test loss and the final model
    equal ferret-train's bit for bit. (A client lost mid-round is covered in process against the Grid; with
    real Flower processes that case is flaky here: the surviving client's reply was sometimes lost too —
    see examples/ferret/README.md.)"""
    port = _free_port()
    keys = tmp_path / "two.csv"
    keys.write_text("".join((certs / f"node-{i}.pub").read_text() for i in range(2)))
    server = _tls_server(certs, port, tmp_path / "server", "--auth-keys", str(keys))
    try:
        _wait_for_port(server, port)
        intruder = _start(_client(certs, port, 0, "--auth-key", str(certs / "node-2.key"), max_wait=20))
        _, cerr = intruder.communicate(timeout=120)
        assert intruder.returncode == 1, cerr
        assert "refused this node" in cerr and len(cerr.strip().splitlines()) <= 2, cerr
        clients = [_start(_client(certs, port, i, "--auth-key", str(certs / f"node-{i}.key"))) for i in range(2)]
        (out, err), *client_out = _finish([server, *clients], timeout=400)
        assert server.returncode == 0, err[-3000:] + str(client_out)[-2000:]
        assert all(c.returncode == 0 for c in clients), client_out
    finally:
        _stop(server)
    _assert_equals_the_simulation(tmp_path, tmp_path / "server")


@pytest.mark.heavy
def test_loopback_tls_federation_without_authentication_equals_the_simulation(tmp_path, certs):
    """The same federation with TLS only (no SuperNode authentication), as most users run it."""
    port = _free_port()
    server = _tls_server(certs, port, tmp_path / "server")
    clients = [_start(_client(certs, port, i)) for i in range(2)]
    (out, err), *client_out = _finish([server, *clients], timeout=400)
    assert server.returncode == 0, err[-3000:] + str(client_out)[-2000:]
    assert all(c.returncode == 0 for c in clients), client_out
    _assert_equals_the_simulation(tmp_path, tmp_path / "server")


@pytest.mark.slow
def test_sigterm_stops_the_superlink_too(tmp_path):
    port = _free_port()
    server = _start(["ferret-server", "--insecure", "--listen", f"127.0.0.1:{port}", "--wait-timeout", "120",
                     *ALGO, "--run-dir", str(tmp_path / "s")])
    try:
        _wait_for_port(server, port)
        server.terminate()
        _, err = server.communicate(timeout=60)
        assert server.returncode == 130 and "interrupted" in err, err
        assert socket.socket().connect_ex(("127.0.0.1", port)) != 0  # the SuperLink is gone with it
    finally:
        _stop(server)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_sigkill_of_the_server_stops_the_superlink_too(tmp_path):
    """A SIGKILLed ferret-server runs no cleanup; the kernel still ends its SuperLink (and with it Flower's
    ServerApp process), so the port is free again."""
    port = _free_port()
    server = _start(["ferret-server", "--insecure", "--listen", f"127.0.0.1:{port}", "--wait-timeout", "120",
                     *ALGO, "--run-dir", str(tmp_path / "s")])
    try:
        _wait_for_port(server, port)
        server.kill()
        server.communicate(timeout=30)
        deadline = time.monotonic() + 30
        while socket.socket().connect_ex(("127.0.0.1", port)) == 0:
            assert time.monotonic() < deadline, "the SuperLink outlived a SIGKILLed ferret-server"
            time.sleep(0.3)
    finally:
        _stop(server)


def _gone(pid: int, within: float) -> bool:
    """True once ``pid`` has exited (a zombie left for init to reap counts as exited)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_a_wrapped_process_ends_when_its_starter_is_killed():
    """die_with_parent: a process started through it ends when the process that started it is SIGKILLed
    (which can run no cleanup), and without the wrapper the same process outlives it."""
    starter = ("import subprocess, sys, time\n"
               "from paperkit.methods.ferret.deploy import die_with_parent\n"
               "cmd = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
               "child = subprocess.Popen(die_with_parent(cmd) if sys.argv[1] == 'wrapped' else cmd,\n"
               "                         start_new_session=True)\n"
               "print(child.pid, flush=True)\n"
               "time.sleep(60)\n")
    for mode, ends in (("wrapped", True), ("plain", False)):
        parent = subprocess.Popen([sys.executable, "-c", starter, mode], stdout=subprocess.PIPE, text=True,
                                  env=_env())
        child = int(parent.stdout.readline())
        try:
            time.sleep(0.5)  # the wrapper has made its request and become the child's command
            assert not _gone(child, 0.1)
            parent.kill()
            parent.wait()
            assert _gone(child, 5.0 if ends else 2.0) is ends, mode
        finally:
            if not _gone(child, 0.1):
                os.kill(child, 9)
