"""The ferret commands through the real entry point: outputs, determinism, resume, bad input; the
network commands' refusals (ferret-server, ferret-client, ferret-certs)."""

import json

import pytest
import torch

from paperkit.core.io import read_json
from paperkit.core.tables import read_table

FAST = ["--clients", "6", "--fraction", "0.5", "--rounds", "3", "--local-steps", "3", "--k", "30", "-q"]


def test_train_writes_the_run_dir(pk, tmp_path):
    d = tmp_path / "run"
    r = pk("ferret-train", *FAST, "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1
    out = json.loads(r.stdout)
    assert out["algo"] == "ferret" and out["params"] == 2410 and out["uplink_floats_per_client_round"] == 30
    for name in ("history.csv", "timing.csv", "summary.json", "curves.png", "model.pt", "manifest.json",
                 "config.yaml", "checkpoints/round-0003.pt"):
        assert (d / name).exists(), name
    # one stage per round, only the newest kept (each holds the whole model)
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == ["round-0003.pt"]
    hist = read_table(d / "history.csv")
    assert list(hist.column("round")) == [1, 2, 3]
    assert set(hist.columns) >= {"train_loss", "test_loss", "test_acc", "uplink_floats", "uplink_bytes",
                                 "downlink_floats", "downlink_bytes", "cum_uplink_bytes"}
    assert set(read_table(d / "timing.csv").columns) == {"round", "local_s", "proj_s", "aggr_s", "wall_s"}
    assert read_json(d / "summary.json")["totals"]["uplink_fraction_of_d"] == pytest.approx(30 / 2410)


def test_same_seed_same_bytes_and_resume_after_interruption(pk, tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    assert pk("ferret-train", *FAST, "--seed", "4", "--run-dir", a).exit_code == 0
    # interrupt b after its second round (the checkpoint of round 2 is written), then resume it
    from paperkit.methods.ferret import federated

    real = federated.Federation.run_round
    calls = {"n": 0}

    def flaky(self, state, previous):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, state, previous)

    monkeypatch.setattr(federated.Federation, "run_round", flaky)
    r = pk("ferret-train", *FAST, "--seed", "4", "--run-dir", b)
    assert r.exit_code == 130 and not (b / "history.csv").exists()
    assert sorted(p.name for p in (b / "checkpoints").iterdir()) == ["round-0002.pt"]
    assert pk("ferret-train", *FAST, "--seed", "4", "--run-dir", b).exit_code == 1  # unfinished: needs --resume
    monkeypatch.setattr(federated.Federation, "run_round", real)
    r = pk("ferret-train", *FAST, "--seed", "4", "--run-dir", b, "--resume")
    assert r.exit_code == 0, r.stderr
    assert (a / "history.csv").read_bytes() == (b / "history.csv").read_bytes()
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    wa = torch.load(a / "model.pt", weights_only=True)["weights"]
    wb = torch.load(b / "model.pt", weights_only=True)["weights"]
    assert torch.equal(wa, wb)


@pytest.mark.parametrize("algo", ["fedavg", "fedzo", "fedkseed"])
def test_baselines_run_and_account(pk, tmp_path, algo):
    r = pk("ferret-train", *FAST, "--algo", algo, "--lr", "0.05", "--run-dir", tmp_path / algo)
    assert r.exit_code == 0, r.stderr
    up = json.loads(r.stdout)["uplink_floats_per_client_round"]
    assert up == {"fedavg": 2410, "fedzo": 2410, "fedkseed": 3}[algo]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_task_with_rouge(pk, tmp_path):
    rows = [{"instruction": "Reverse", "input": w, "output": w[::-1], "category": "rev" if i % 2 else "copy"}
            for i, w in enumerate(["abc", "hello", "cat", "dog", "tree", "sun", "moon", "star", "sky", "sea"] * 3)]
    data = _write_jsonl(tmp_path / "d.jsonl", rows)
    r = pk("ferret-train", "--task", f"jsonl:{data}", "--clients", "3", "--fraction", "1", "--rounds", "1",
           "--local-steps", "2", "--k", "50", "--batch-size", "4", "--lr", "0.01", "--d-model", "16", "--layers", "1",
           "-q", "--run-dir", tmp_path / "j")
    assert r.exit_code == 0, r.stderr
    final = read_json(tmp_path / "j" / "summary.json")["final"]
    assert 0.0 <= final["rouge_l"] <= 1.0 and final["rouge_l_n"] == 3


def _one_line_error(r, code, *needles):
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("paperkit ferret-")
    for n in needles:
        assert n in r.stderr, r.stderr


@pytest.mark.parametrize("args, code, needle", [
    (["--k", "0"], 2, "--k 0 is out of range"),
    (["--k", "-5"], 2, "--k -5 is out of range"),
    (["--fraction", "0"], 2, "(0, 1]"),
    (["--fraction", "1.5"], 2, "(0, 1]"),
    (["--clients", "5000"], 3, "5000 clients"),
    (["--task", "jsonl:nope.jsonl"], 3, "no such file"),
    (["--blocks", "0"], 2, "--blocks"),
    (["--dirichlet", "nan"], 2, "--dirichlet"),
    (["--lr", "nan"], 2, "--lr"),
    (["--lr", "1e300"], 2, "--lr 1e+300 is out of range"),
    (["--server-lr", "inf"], 2, "--server-lr"),
    (["--k", "100000"], 2, "exceeds the number of trainable parameters (2410)"),
    # range errors name the options, not the library's fields ("client fraction", "K", "lr", "clip", "zo eps")
    (["--fraction", "0"], 2, "--fraction 0.0 is out of range"),
    (["--clip", "-1"], 2, "--clip -1.0 is out of range"),
    (["--zo-eps", "0"], 2, "--zo-eps 0.0 is out of range"),
    (["--server-lr", "0"], 2, "--server-lr 0.0 is out of range"),
    (["--rounds", "1000000000000"], 2, "--rounds 1000000000000 is out of range; expected 1 to 100000"),
])
def test_bad_input_one_line(pk, tmp_path, args, code, needle):
    r = pk("ferret-train", *FAST, *args, "--run-dir", tmp_path / "bad")
    _one_line_error(r, code, needle)
    assert not (tmp_path / "bad").exists()  # refused before the run dir is made


def test_bad_jsonl_and_model_dir(pk, tmp_path):
    data = _write_jsonl(tmp_path / "d.jsonl", [{"instruction": "a", "output": "b"}, {"instruction": "c"}])
    _one_line_error(pk("ferret-train", "--task", f"jsonl:{data}", "--run-dir", tmp_path / "x"), 3,
                    "line 2", "'output'")
    notlm = tmp_path / "vit"  # an image classifier's folder
    notlm.mkdir()
    (notlm / "config.json").write_text(json.dumps({"model_type": "vit", "hidden_size": 8, "num_hidden_layers": 1,
                                                   "num_attention_heads": 2, "intermediate_size": 8}))
    _one_line_error(pk("ferret-train", "--task", "instruct", "--model", notlm, "--run-dir", tmp_path / "y"), 3,
                    "not a causal language model")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_error(pk("ferret-train", "--task", "instruct", "--model", empty, "--run-dir", tmp_path / "z"), 3,
                    "no config.json")


def test_recon_command(pk, tmp_path):
    r = pk("ferret-recon", "--d", "3000", "--k", "30,120", "--trials", "3", "--blocks", "3", "-q",
           "--run-dir", tmp_path / "r")
    assert r.exit_code == 0, r.stderr
    rows = read_table(tmp_path / "r" / "recon.csv").records()
    ferret = {x["k"]: x["cosine_mean"] for x in rows if x["method"] == "ferret"}
    assert 1.4 < ferret[120] / ferret[30] < 2.8  # ≈ sqrt(4)
    assert {x["method"] for x in rows} == {"ferret", "zeroth-order"}
    assert (tmp_path / "r" / "recon.png").exists()
    _one_line_error(pk("ferret-recon", "--k", "5,x", "--run-dir", tmp_path / "r2"), 2, "--k")




def test_recon_prop2_and_bias_variance_columns(pk, tmp_path):
    r = pk("ferret-recon", "--d", "40", "--k", "8,32", "--trials", "4", "--blocks", "2", "--alloc", "prop2",
           "--cubic", "1", "--zo-eps", "0.5", "-q", "--run-dir", tmp_path / "b")
    assert r.exit_code == 0, r.stderr
    rows = read_table(tmp_path / "b" / "recon.csv").records()
    assert all(x["variance"] >= 0 and 0 <= x["bias_debiased"] <= x["bias_norm"] for x in rows)
    assert (tmp_path / "b" / "recon_bias.png").exists()
    assert "bias_debiased" in json.loads(r.stdout)["rows"][0]
    _one_line_error(pk("ferret-recon", "--cubic", "inf", "--run-dir", tmp_path / "c"), 2, "--cubic")


def test_train_per_block_seed_pool_and_prop2(pk, tmp_path):
    fast = [*FAST[:5], "2", *FAST[6:]]  # 2 rounds
    for extra, name in ((["--seed-pool", "per-block"], "p"), (["--alloc", "prop2"], "q")):
        r = pk("ferret-train", *fast, *extra, "--run-dir", tmp_path / name)
        assert r.exit_code == 0, r.stderr
        assert read_json(tmp_path / name / "summary.json")
    _one_line_error(pk("ferret-train", *fast, "--seed-pool", "x", "--run-dir", tmp_path / "x"), 2, "--seed-pool")


def test_non_utf8_jsonl_names_file_and_line(pk, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_bytes(b'{"instruction": "a", "output": "b"}\n{"instruction": "\xff\xfe", "output": "b"}\n')
    _one_line_error(pk("ferret-train", "--task", f"jsonl:{data}", "--run-dir", tmp_path / "x"), 3,
                    "d.jsonl: line 2", "UTF-8")


def test_overflowing_model_is_a_known_error(pk, tmp_path):
    r = pk("ferret-train", *FAST, "--algo", "fedavg", "--lr", "1e30", "--run-dir", tmp_path / "o")
    _one_line_error(r, 1, "non-finite weights", "--lr")


def test_diverging_loss_stops_the_run_like_overflowing_weights(pk, tmp_path):
    """--server-lr 1e30 leaves finite float32 weights whose loss is NaN: the run exited 0 with "test_loss": NaN
    (not JSON) on stdout. It stops with the same known error as overflowing weights."""
    r = pk("ferret-train", "--rounds", "1", "--local-steps", "1", "--clients", "2", "--fraction", "1",
           "--batch-size", "8", "--k", "30", "--server-lr", "1e30", "-q", "--run-dir", tmp_path / "d")
    _one_line_error(r, 1, "round 1: the test loss is nan", "--server-lr (1e+30)")
    assert r.stdout == "" and not (tmp_path / "d" / "summary.json").exists()


def test_divergence_after_a_round_keeps_the_finished_rounds(pk, tmp_path, monkeypatch):
    from paperkit.methods.ferret import federated

    real = federated.Federation.evaluate
    calls = {"n": 0}

    def nan_in_round_2(self, weights):
        calls["n"] += 1
        out = real(self, weights)
        return {**out, "test_loss": float("nan")} if calls["n"] == 2 else out

    monkeypatch.setattr(federated.Federation, "evaluate", nan_in_round_2)
    d = tmp_path / "d"
    _one_line_error(pk("ferret-train", *FAST, "--run-dir", d), 1, "round 2: the test loss is nan")
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == ["round-0001.pt"]
    assert list(read_table(d / "timing.csv").column("round")) == [1]


def test_resume_lists_the_saved_stages_instead_of_probing_every_round(pk, tmp_path, monkeypatch):
    """Finding the newest stage called stat once per round, from --rounds down: 10^12 rounds hung before round 1."""
    from paperkit.core import runs
    from paperkit.methods.ferret import federated, run

    d = tmp_path / "r"
    assert pk("ferret-train", *FAST, "--run-dir", d).exit_code == 0
    assert run.newest_round(d / "checkpoints", 3) == 3 and run.newest_round(d / "checkpoints", 2) == 0
    probes = []
    real = runs.RunDir.has_checkpoint
    monkeypatch.setattr(runs.RunDir, "has_checkpoint", lambda self, name: probes.append(name) or real(self, name))

    def stop(self, state, previous):
        raise KeyboardInterrupt

    monkeypatch.setattr(federated.Federation, "run_round", stop)
    r = pk("ferret-train", *FAST[:5], "100000", *FAST[6:], "--run-dir", tmp_path / "n")
    assert r.exit_code == 130 and len(probes) <= 1, (r.exit_code, len(probes))


@pytest.mark.parametrize("args, words", [
    (["--trials", "1000000000000"], "--trials"),   # ran until killed, leaving config.yaml
    (["--steps", "1000000000000"], "--steps"),
    # the overflow named a learning rate ferret-recon has no option for, after making the run dir
    (["--d", "200", "--k", "5,10", "--trials", "2", "--cubic", "1e300"],
     "--cubic 1e+300 with --steps 1 makes the update overflow"),
])
def test_recon_refuses_endless_or_overflowing_studies_before_the_run_dir(pk, tmp_path, args, words):
    r = pk("ferret-recon", "--d", "10", "--k", "5", *args, "--run-dir", tmp_path / "x")
    _one_line_error(r, 2, words)
    assert "learning rate" not in r.stderr and not (tmp_path / "x").exists()


def test_recon_overflowing_estimate_names_the_options(pk, tmp_path):
    r = pk("ferret-recon", "--d", "200", "--k", "5", "--trials", "1", "--zo-eps", "1e300", "-q",
           "--run-dir", tmp_path / "x")
    _one_line_error(r, 2, "zeroth-order estimate", "--zo-eps 1e+300", "--no-zo")


def test_recon_cli_bounds_match_the_library():
    from paperkit.methods.ferret import recon
    from paperkit_cli.commands import ferret_recon

    assert (ferret_recon.MAX_TRIALS, ferret_recon.MAX_STEPS) == (recon.MAX_TRIALS, recon.MAX_STEPS)


def test_recon_refuses_what_cannot_fit_and_nan_options(pk, tmp_path):
    r = pk("ferret-recon", "--d", str(10**11), "--run-dir", tmp_path / "big")
    _one_line_error(r, 2, "--d 100000000000 needs about 5.8 TiB", "--max-memory-gb")
    assert not (tmp_path / "big").exists()
    # the limit is the user's to set: a study of 3000 floats is refused under a 1 KiB limit
    r = pk("ferret-recon", "--d", "3000", "--k", "30", "--max-memory-gb", "0.000001", "--run-dir", tmp_path / "lim")
    _one_line_error(r, 2, "--d 3000 needs about", "--max-memory-gb")
    _one_line_error(pk("ferret-recon", "--k", "30,0", "--run-dir", tmp_path / "k0"), 2, "--k", "item '0'")
    r = pk("ferret-recon", "--d", "100", "--k", "10", "--zo-eps", "nan", "--run-dir", tmp_path / "nan")
    _one_line_error(r, 2, "--zo-eps")
    assert r.stdout == ""


def test_checkpoint_holds_no_seconds_and_same_seed_same_bytes(pk, tmp_path):
    for name in ("a", "b"):
        assert pk("ferret-train", *FAST, "--run-dir", tmp_path / name).exit_code == 0
    ckpt = torch.load(tmp_path / "a" / "checkpoints" / "round-0003.pt", weights_only=True)
    rows = json.loads(ckpt["rows"])
    assert len(rows) == 3 and not any(k.endswith("_s") for r in rows for k in r)
    assert (tmp_path / "a" / "checkpoints" / "round-0003.pt").read_bytes() == \
        (tmp_path / "b" / "checkpoints" / "round-0003.pt").read_bytes()
    assert list(read_table(tmp_path / "a" / "timing.csv").column("round")) == [1, 2, 3]


def test_sigint_while_writing_a_checkpoint_exits_130_with_a_whole_checkpoint(pk, tmp_path, monkeypatch):
    """SIGINT delivered inside torch.save's write callback (torch turns a KeyboardInterrupt raised there into
    RuntimeError 'unexpected pos', which exited 70): it must stop the run with 130, after the write."""
    import os
    import signal

    real_save = torch.save
    calls = {"n": 0}

    class Interrupting:
        def __init__(self, f):
            self.f, self.writes = f, 0

        def write(self, b):
            self.writes += 1
            if self.writes == 2:
                os.kill(os.getpid(), signal.SIGINT)
                sum(range(10))  # give the handler a bytecode boundary inside the callback
            return self.f.write(b)

        def flush(self):
            return self.f.flush()

    def save(obj, f, *a, **kw):
        calls["n"] += 1
        return real_save(obj, Interrupting(f) if calls["n"] == 2 else f, *a, **kw)

    monkeypatch.setattr(torch, "save", save)
    d = tmp_path / "run"
    r = pk("ferret-train", *FAST, "--run-dir", d)
    assert r.exit_code == 130, r.stderr
    assert "interrupted" in r.stderr and "unexpected" not in r.stderr
    ckpt = torch.load(d / "checkpoints" / "round-0002.pt", weights_only=True)  # whole, from round 2
    assert ckpt["state"]["round"] == 2
    monkeypatch.setattr(torch, "save", real_save)
    assert pk("ferret-train", *FAST, "--run-dir", d, "--resume").exit_code == 0


# ----------------------------------------------------------------- ferret-server / -client / -certs
SERVER_ALGO = ["--clients", "2", "--fraction", "1", "--rounds", "1"]


@pytest.mark.parametrize("listen", ["nohostport", "127.0.0.1:99999", "127.0.0.1:abc", ":9092"])
def test_server_bad_listen_is_one_usage_line(pk, tmp_path, listen):
    r = pk("ferret-server", "--insecure", "--listen", listen, *SERVER_ALGO, "--run-dir", tmp_path / "s")
    _one_line_error(r, 2, "--listen", "HOST:PORT")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("args, needle", [
    (["--insecure", "--min-clients", "5"], "--min-clients 5 is more than --clients 2"),
    (["--insecure", "--listen", "0.0.0.0:9092"], "binds 127.0.0.1 only"),
    ([], "TLS is on by default"),
    (["--insecure", "--auth-keys", "KEYS"], "--auth-keys needs TLS"),
])
def test_server_refuses_before_starting_flower(pk, tmp_path, args, needle):
    keys = tmp_path / "keys.csv"
    keys.write_text("x\n")
    import time

    t0 = time.monotonic()
    r = pk("ferret-server", *[str(keys) if a == "KEYS" else a for a in args], *SERVER_ALGO,
           "--run-dir", tmp_path / "s")
    _one_line_error(r, 2, needle)
    assert time.monotonic() - t0 < 5 and not (tmp_path / "s").exists()


def test_client_unknown_host_or_no_server_is_a_known_error(pk, two_cas):
    _one_line_error(pk("ferret-client", "--tls-ca", two_cas / "a" / "ca.crt", "--server", "nohost:9092",
                       "--partition-id", "0"), 1, "cannot resolve server host 'nohost'")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _one_line_error(pk("ferret-client", "--insecure", "--server", f"127.0.0.1:{port}", "--partition-id", "0",
                       "--max-wait", "1"), 1, "no ferret-server (Flower SuperLink) reachable")
    _one_line_error(pk("ferret-client", "--server", "10.1.2.3:9092", "--insecure", "--partition-id", "0"), 2,
                    "127.0.0.1 only")


@pytest.fixture(scope="module")
def two_cas(tmp_path_factory):
    from paperkit.methods.ferret.certs import write_certificates

    root = tmp_path_factory.mktemp("cas")
    write_certificates(root / "a", hosts=["fl.example.org", "10.0.0.5"], nodes=2)
    write_certificates(root / "b")
    return root


@pytest.fixture
def tls_server(two_cas):
    """A bare TLS listener on 127.0.0.1 with CA a's server certificate (handshakes only)."""
    import socket
    import ssl
    import threading

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(two_cas / "a" / "server.crt", two_cas / "a" / "server.key")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            try:
                with ctx.wrap_socket(conn, server_side=True):
                    pass
            except (ssl.SSLError, OSError):
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield sock.getsockname()[1]
    stop.set()
    t.join(2)
    sock.close()


def test_client_without_the_servers_ca_is_refused(pk, two_cas, tls_server):
    from paperkit.methods.ferret.deploy import check_tls

    check_tls("127.0.0.1", tls_server, str(two_cas / "a" / "ca.crt"))  # the right CA: handshake verifies
    r = pk("ferret-client", "--server", f"127.0.0.1:{tls_server}", "--tls-ca", two_cas / "b" / "ca.crt",
           "--partition-id", "0", "--max-wait", "5")
    _one_line_error(r, 1, "is not trusted by ca.crt", "unable to get local issuer certificate")
    _one_line_error(pk("ferret-client", "--server", f"127.0.0.1:{tls_server}", "--partition-id", "0"), 2,
                    "TLS is on by default")


def test_certs_command_writes_a_usable_set(pk, tmp_path):
    import ssl
    import stat

    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_ssh_private_key

    from paperkit.methods.ferret.certs import read_public_keys

    d = tmp_path / "c"
    r = pk("ferret-certs", "--host", "fl.example.org", "--host", "10.0.0.5", "--nodes", "2", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["san"] == ["127.0.0.1", "localhost", "fl.example.org", "10.0.0.5"]
    cert = x509.load_pem_x509_certificate((d / "server.crt").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(san.get_values_for_type(x509.DNSName)) == {"localhost", "fl.example.org"}
    ca = x509.load_pem_x509_certificate((d / "ca.crt").read_bytes())
    cert.verify_directly_issued_by(ca)
    ssl.create_default_context(cafile=str(d / "ca.crt"))  # loads as a trust anchor
    for key in ("ca.key", "server.key", "node-0.key", "node-1.key"):
        assert stat.S_IMODE((d / key).stat().st_mode) == 0o600, key
    load_ssh_private_key((d / "node-1.key").read_bytes(), None)  # what flower-supernode reads
    assert len(read_public_keys(d / "node_public_keys.csv")) == 2
    _one_line_error(pk("ferret-certs", "--host", "a b", "--run-dir", tmp_path / "bad"), 2, "--host 'a b'")


def test_server_on_a_taken_port_is_one_line(pk, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = pk("ferret-server", "--insecure", "--listen", f"127.0.0.1:{port}", *SERVER_ALGO,
               "--run-dir", tmp_path / "s")
    _one_line_error(r, 1, f"cannot listen on 127.0.0.1:{port}")
    assert not (tmp_path / "s").exists()


def test_results_do_not_depend_on_jobs(pk, tmp_path):
    """-j 1 and -j 2 give the same bytes: ferret's numeric steps run in one torch thread, since
    multi-threaded CPU kernels round differently (this broke bit-equality with Flower's processes)."""
    import torch

    before = torch.get_num_threads()
    try:
        for j in ("1", "2"):
            assert pk("ferret-train", *FAST, "-j", j, "--run-dir", tmp_path / j).exit_code == 0
    finally:
        torch.set_num_threads(before)
    for name in ("history.csv", "model.pt", "summary.json"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name
