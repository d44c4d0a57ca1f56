"""cogmath-eval through the real entry point (report is exercised on its runs too)."""

import json
import stat

import pytest

from .cogmath_helpers import one_line_error, summary_line


@pytest.fixture(scope="module")
def inquiries(tmp_path_factory):
    from paperkit.methods.cogmath.sources import write_inquiries
    from paperkit.methods.cogmath.synthetic import generate

    path = tmp_path_factory.mktemp("inq") / "inq.jsonl"
    write_inquiries(path, generate(8, seed=3)[1])
    return path


@pytest.fixture
def one_problem(inquiries, tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text("".join(x + "\n" for x in inquiries.read_text().splitlines()[:10]))
    return one


def test_eval_rule_replay_and_report(pk, inquiries, tmp_path):
    live, again = tmp_path / "live", tmp_path / "again"
    r = pk("cogmath-eval", "--inquiries", inquiries, "--failures", "memorise", "--run-dir", live)
    assert r.exit_code == 0, r.stderr
    line = summary_line(r)
    assert line["accuracy"] == 1.0 and line["pass_rate"] == 0.0 and line["called"] == 80
    assert {p.name for p in live.iterdir()} == {"cache.sqlite", "config.yaml", "manifest.json", "responses.jsonl",
                                                "scores.csv", "summary.json"}
    assert (live / "scores.csv").read_text().splitlines()[0] == "problem,dimension,pass,status,extracted"
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "replay", "--cache", live / "cache.sqlite",
           "--run-dir", again)
    assert r.exit_code == 0, r.stderr
    assert summary_line(r)["called"] == 0 and summary_line(r)["cached"] == 80
    for name in ("summary.json", "responses.jsonl", "scores.csv"):
        assert (live / name).read_bytes() == (again / name).read_bytes(), name
    # a finished run is not overwritten
    line = one_line_error(pk("cogmath-eval", "--inquiries", inquiries, "--run-dir", live), 1)
    assert "finished run" in line
    perfect = tmp_path / "perfect"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--run-dir", perfect).exit_code == 0
    png = tmp_path / "dims.png"
    r = pk("cogmath-report", perfect, live, "--names", "perfect,memoriser", "--plot", png)
    assert r.exit_code == 0, r.stderr
    assert "RPR D9 Backward Reasoning" in r.stdout and "memoriser" in r.stdout.splitlines()[0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = pk("cogmath-report", perfect, live, "--format", "csv")
    assert r.stdout.splitlines()[0] == "metric,perfect,live" and "pass rate (mastery),1.0,0.0" in r.stdout
    assert "| metric |" in pk("cogmath-report", perfect, "--format", "markdown").stdout


def test_eval_openai_over_loopback_with_key_and_resume(pk, inquiries, tmp_path):
    pytest.importorskip("openai")
    from paperkit.methods.cogmath.testing import ChatServer

    secret = "sk-cli-91b7c0ffee"
    run = tmp_path / "run"
    args = ["cogmath-eval", "--inquiries", inquiries, "--backend", "openai", "--model", "stub", "--api-key-env",
            "COGMATH_KEY", "--jobs", "4", "--retries", "0", "--run-dir", run]
    # the server stops authorising after 30 requests: the run stops, keeping what it obtained
    with ChatServer(api_key=secret, status=lambda n, body: 401 if n >= 30 else None) as server:
        r = pk(*args, "--base-url", server.base_url, env={"COGMATH_KEY": secret})
    line = one_line_error(r, 1)
    assert "401" in line and secret not in line
    assert not (run / "manifest.json").exists()
    from paperkit.methods.cogmath.cache import ResponseCache

    kept = len(ResponseCache(run / "cache.sqlite"))
    assert kept == 30  # every answer obtained before the failure, including those in flight
    with ChatServer(api_key=secret) as server:
        r = pk(*args, "--base-url", server.base_url, "--resume", env={"COGMATH_KEY": secret})
        assert r.exit_code == 0, r.stderr
        assert len(server.requests) == 80 - kept
    line = summary_line(r)
    assert line["cached"] == kept and line["pass_rate"] == 1.0
    for f in run.iterdir():
        assert secret.encode() not in f.read_bytes(), f.name
    assert secret not in r.stderr


def test_eval_shell_backend_and_failed_items(pk, pk_bin, inquiries, tmp_path):
    ok = tmp_path / "ok.sh"
    ok.write_text("#!/bin/sh\ncat > /dev/null\necho 'The problem cannot be solved.'\n")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/sh\ncat > /dev/null\necho 'model crashed' >&2\nexit 2\n")
    for p in (ok, bad):
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "shell", "--cmd", str(ok), "--run-dir",
           tmp_path / "ok")
    assert r.exit_code == 0, r.stderr
    s = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert s["accuracy"] == 0.0 and s["dimensions"]["2"]["pass_rate"] == 1.0 and s["dimensions"]["3"]["pass_rate"] == 1.0
    # every call fails: exit 1 with one line, the outputs still written, the run left unfinished
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "shell", "--cmd", str(bad), "--run-dir",
           tmp_path / "bad")
    line = one_line_error(r, 1)
    assert "all 80 calls failed" in line and "model crashed" in line and "--resume" in line
    scores = (tmp_path / "bad" / "scores.csv").read_text().splitlines()[1:]
    assert len(scores) == 80 and all(",0,error," in x for x in scores)
    assert json.loads((tmp_path / "bad" / "summary.json").read_text())["n_errors"] == 80
    assert not (tmp_path / "bad" / "manifest.json").exists()
    assert not (tmp_path / "bad" / "cache.sqlite").exists()  # nothing obtained, nothing cached
    # some calls fail: a warning, exit 0
    flaky = tmp_path / "flaky.sh"
    flaky.write_text("#!/bin/sh\nn=$(cksum | cut -d' ' -f1)\n"
                     "if [ $((n % 2)) -eq 0 ]; then echo 'It cannot be solved.'; else echo 'down' >&2; exit 1; fi\n")
    flaky.chmod(flaky.stat().st_mode | stat.S_IXUSR)
    r = pk_bin("cogmath-eval", "--inquiries", str(inquiries), "--backend", "shell", "--cmd", str(flaky),
               "--run-dir", str(tmp_path / "flaky"))
    assert r.exit_code == 0, r.stderr
    n_errors = summary_line(r)["n_errors"]
    assert 20 < n_errors < 60 and f"{n_errors} of 80 calls failed" in r.stderr


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("make, extra, code, match", [
    (lambda t: t / "missing.jsonl", [], 3, "no such file"),
    (lambda t: write(t, "bad.jsonl", '{"problem": "a", "dimension": 0}\n'), [], 3, "lacks field"),
    (lambda t: write(t, "bad.jsonl", "not json\n"), [], 3, "not valid JSON"),
    (lambda t: write(t, "bad.jsonl", '{"problem": "a", "dimension": 12, "inquiry": "q", "expected": "answer", '
                     '"reference": "1"}\n'), [], 3, "dimension"),
    (lambda t: write(t, "bad.jsonl", '{"problem": "a", "dimension": 1, "inquiry": "q", "expected": "answer", '
                     '"reference": "1"}\n'), [], 3, "no dimension-0"),
    (None, ["--backend", "openai", "--api-key-env", "COGMATH_UNSET_VAR"], 2, "COGMATH_UNSET_VAR"),
    (None, ["--backend", "replay", "--cache", "/no/such/cache.sqlite"], 3, "no such cache file"),
    (None, ["--failures", "sleepy"], 2, "unknown mode"),
    (None, ["--failures", "literal:2"], 2, "outside"),
    (None, ["--backend", "shell"], 2, "--cmd"),
    (None, ["--backend", "hf", "--model", "/no/such/model"], 3, "no such model directory"),
    (None, ["--backend", "hf"], 2, "--model PATH"),
    (None, ["--timeout", "nan"], 2, "finite"),
    (None, ["--timeout", "inf"], 2, "finite"),
    (None, ["--timeout", "0"], 2, "not in (0, 86400]"),
    (None, ["--dtype", "float8"], 2, "float8"),
    (None, ["--prompts", "PROMPTS"], 2, "unknown key"),
])
def test_eval_bad_input_writes_nothing(pk, inquiries, tmp_path, make, extra, code, match):
    src = make(tmp_path) if make else inquiries
    extra = [str(write(tmp_path, "p.yaml", "colour: red\n")) if x == "PROMPTS" else x for x in extra]
    run = tmp_path / "run"
    line = one_line_error(pk("cogmath-eval", "--inquiries", src, *extra, "--run-dir", run), code)
    assert match in line
    assert not run.exists()


def test_eval_unreachable_server(pk, inquiries, tmp_path):
    pytest.importorskip("openai")
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "openai", "--model", "m", "--retries", "0",
           "--base-url", f"http://127.0.0.1:{port}/v1", "--run-dir", tmp_path / "run")
    assert "cannot reach" in one_line_error(r, 1)




def test_model_output_is_never_executed(pk, tmp_path):
    """The reported exploit, end to end: a 'model' (``cat payload.txt``) answers with a boxed expression
    that, read by sympy's parse_expr, ran ``touch``. The answer is read, scored as a failure, and nothing runs."""
    from paperkit.methods.cogmath.sources import write_inquiries
    from paperkit.methods.cogmath.synthetic import generate

    inq = tmp_path / "inq.jsonl"
    write_inquiries(inq, generate(1, seed=3)[1])
    sentinel = tmp_path / "PWNED"
    chars = "+".join(f"chr({ord(c)})" for c in f"touch {sentinel}")
    payload = tmp_path / "payload.txt"
    payload.write_text(f"The answer is \\boxed{{__import__(__os__.name.strip(_.name)).system({chars})}}\n")
    r = pk("cogmath-eval", "--inquiries", inq, "--backend", "shell", "--cmd", f"cat {payload}",
           "--run-dir", tmp_path / "run")
    assert not sentinel.exists()
    assert r.exit_code == 0, r.stderr
    assert summary_line(r)["accuracy"] == 0.0


@pytest.mark.parametrize("content", [b"\xff\xfe\x00\x81 not utf-8\n", b"SQLite format 3\x00" + b"\x07" * 300])
@pytest.mark.parametrize("backend", ["rule", "replay"])
def test_eval_corrupt_cache_is_bad_input(pk, inquiries, tmp_path, content, backend):
    cache = tmp_path / "cache.bin"
    cache.write_bytes(content)
    line = one_line_error(pk("cogmath-eval", "--inquiries", inquiries, "--backend", backend, "--cache", cache,
                             "--run-dir", tmp_path / "run"), 3)
    assert "cache.bin" in line and "response cache" in line
    assert cache.read_bytes() == content


def test_eval_old_jsonl_cache_is_converted_and_replayed(pk, pk_bin, inquiries, tmp_path):
    from paperkit.methods.cogmath.cache import ResponseCache

    live = tmp_path / "live"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--run-dir", live).exit_code == 0
    old = tmp_path / "old.jsonl"  # the cache as older versions wrote it
    old.write_text("".join(json.dumps(r) + "\n" for r in ResponseCache(live / "cache.sqlite").rows()))
    r = pk_bin("cogmath-eval", "--inquiries", str(inquiries), "--backend", "replay", "--cache", str(old), "--run-dir",
               str(tmp_path / "again"))
    assert r.exit_code == 0, r.stderr
    assert summary_line(r)["cached"] == 80 and "converted an old JSONL response cache" in r.stderr
    assert (live / "scores.csv").read_bytes() == (tmp_path / "again" / "scores.csv").read_bytes()


def test_eval_openai_sends_seed_and_warns_about_a_key_over_plain_http(pk_bin, one_problem, tmp_path):
    pytest.importorskip("openai")
    from paperkit.methods.cogmath.testing import ChatServer

    with ChatServer(api_key="sk-plain") as server:
        port = server.base_url.split(":")[2].split("/")[0]
        # 0.0.0.0 reaches this machine's server but is not a loopback address: the key is warned about
        r = pk_bin("cogmath-eval", "--inquiries", str(one_problem), "--backend", "openai", "--model", "stub",
                   "--api-key-env", "COGMATH_KEY", "--base-url", f"http://0.0.0.0:{port}/v1", "--seed", "11",
                   "--jobs", "4", "--run-dir", str(tmp_path / "run"), env={"COGMATH_KEY": "sk-plain"})
        assert r.exit_code == 0, r.stderr
        assert {x["body"]["seed"] for x in server.requests} == {11}
    warned = [x for x in r.stderr.splitlines() if "unencrypted" in x]
    assert len(warned) == 1 and warned[0].startswith("paperkit cogmath-eval: warning:") and "sk-plain" not in r.stderr


@pytest.mark.slow
def test_eval_hf_backend_by_model_folder(pk, one_problem, tmp_path):
    pytest.importorskip("transformers")
    from ..methods.cogmath.test_cogmath_backends import _tiny_bos_model

    model = _tiny_bos_model(tmp_path / "tiny")
    args = ["cogmath-eval", "--inquiries", one_problem, "--backend", "hf", "--model", model, "--max-tokens", "2"]
    r = pk(*args, "--run-dir", tmp_path / "a")
    assert r.exit_code == 0, r.stderr
    extra = json.loads((tmp_path / "a" / "manifest.json").read_text())["extra"]
    assert extra["model"] == "hf:tiny" and "dtype=float32" in extra["settings"]
    # another dtype is another cache key: nothing is replayed from the float32 answers
    r = pk(*args, "--dtype", "bfloat16", "--cache", tmp_path / "a" / "cache.sqlite", "--run-dir", tmp_path / "b")
    assert r.exit_code == 0, r.stderr
    assert summary_line(r)["cached"] == 0
