"""cogmath-generate, cogmath-eval and cogmath-report through the real entry point: stdout holds only
data, bad input is one line on stderr with the right exit code and writes nothing, runs resume and
replay from the response cache, and the report reads the runs' summaries."""

import json
import stat
from pathlib import Path

import pytest


def summary_line(r):
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    return json.loads(lines[0])


def one_line_error(r, code):
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], r.stderr
    return lines[0]


# ------------------------------------------------------------------------------ cogmath-generate
def test_generate_stdout_is_data_and_seeded(pk, tmp_path):
    r = pk("cogmath-generate", "--source", "synthetic:3", "--seed", "4")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(rows) == 30 and {x["dimension"] for x in rows} == set(range(10))
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert pk("cogmath-generate", "--source", "synthetic:3", "--seed", "4", "-o", a).exit_code == 0
    assert pk("cogmath-generate", "--source", "synthetic:3", "--seed", "4", "-o", b).exit_code == 0
    assert a.read_bytes() == b.read_bytes() == r.stdout.encode()
    assert json.loads((tmp_path / "a.jsonl.manifest.json").read_text())["command"] == "cogmath-generate"


def test_generate_official_import(pk, tmp_path):
    fixture = Path(__file__).parents[1] / "methods" / "cogmath" / "data" / "official_3.json"
    out = tmp_path / "off.jsonl"
    r = pk("cogmath-generate", "--source", f"official:{fixture}", "-o", out)
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 29 and all(x["judge"] == "imported" for x in rows)
    run = tmp_path / "run"
    r = pk("cogmath-eval", "--inquiries", out, "--backend", "rule", "--run-dir", run)
    assert r.exit_code == 0, r.stderr  # the rule solver cannot read these texts: it refuses them
    s = json.loads((run / "summary.json").read_text())
    assert s["n_problems"] == 3 and s["n_missing_dimensions"] == 1 and s["accuracy"] == 0.0


@pytest.mark.parametrize("args, code, match", [
    (["--source", "nonsense"], 2, "expected synthetic:N"),
    (["--source", "synthetic:abc"], 2, "whole number"),
    (["--source", "synthetic:0"], 2, "between 1"),
    (["--source", "problems:x.jsonl"], 2, "--agents llm"),
    (["--source", "synthetic:1", "--agents", "llm"], 2, "--agents llm needs a language model"),
    (["--source", "problems:x.jsonl", "--agents", "llm", "--backend", "rule"], 2, "not rule"),
    (["--source", "official:/no/such.json"], 3, "no such file"),
    (["--source", "synthetic:2", "--min-steps", "5", "--max-steps", "3"], 2, "min-steps"),
    (["--source", "synthetic:2", "--max-retries", "3"], 2, "No such option"),  # one spelling: --retries
    (["--source", "synthetic:2", "--timeout", "nan"], 2, "finite"),
])
def test_generate_bad_input(pk, args, code, match):
    line = one_line_error(pk("cogmath-generate", *args), code)
    assert match in line


def test_generate_retries_are_proposals_after_the_first(pk):
    def judged(*extra):
        r = pk("cogmath-generate", "--source", "synthetic:40", "--seed", "1", *extra)
        assert r.exit_code == 0, r.stderr
        return [(x["attempts"], x["judge"]) for x in map(json.loads, r.stdout.splitlines())]

    none, default = judged("--retries", "0"), judged()
    assert ("rejected" in {j for _, j in none}) and max(a for a, _ in none) == 1
    assert "rejected" not in {j for _, j in default} and max(a for a, _ in default) == 2
    assert default == judged("--retries", "2")


def test_generate_real_executable_and_closed_pipe(pk_bin):
    r = pk_bin("cogmath-generate", "--source", "synthetic:2")
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 20 and r.stderr == ""
    r = pk_bin(None, "cogmath-generate", "--source", "synthetic:x")
    assert r.exit_code == 2 and r.stderr.startswith("paperkit cogmath-generate: error:")


def test_generate_with_llm_agents_over_http(pk, tmp_path):
    pytest.importorskip("openai")
    from paperkit.methods.cogmath.testing import ChatServer

    def agent(prompt, request):  # a scripted test double of an LLM agent, not a model
        if "Action: Yes" in prompt:
            return "Thought: fine.\nAction: Yes"
        if prompt.startswith("Solve the following math problem step by step and finish"):
            return "Working... #### 5"
        if "Answer this question about the solution" in prompt:
            return "Because that step gives 5."
        return "Thought: rewrite.\nAction: A new problem about 5 apples."

    src = tmp_path / "problems.jsonl"
    src.write_text('{"id": "a", "question": "Tom has 2 apples and buys 3. How many?", "answer": "#### 5"}\n'
                   '{"id": "b", "question": "What is 4 + 4?", "answer": "8"}\n')
    out, cache = tmp_path / "inq.jsonl", tmp_path / "agents.sqlite"
    with ChatServer(agent) as server:
        r = pk("cogmath-generate", "--source", f"problems:{src}", "--agents", "llm", "--backend", "openai",
               "--base-url", server.base_url, "--model", "agent", "--cache", cache, "-o", out)
        assert r.exit_code == 0, r.stderr
        n_calls = len(server.requests)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 20 and all(x["judge"] == "accepted" for x in rows)
    assert {x["reference"] for x in rows if x["dimension"] in (5, 6, 7, 8, 9)} == {"5"}
    assert [x["reference"] for x in rows if x["dimension"] in (0, 1, 4)] == ["5", "5", "5", "8", "8", "8"]
    # the agents' answers are cached: a rerun with replay makes the same file without a server
    again = tmp_path / "again.jsonl"
    r = pk("cogmath-generate", "--source", f"problems:{src}", "--agents", "llm", "--backend", "replay",
           "--cache", cache, "-o", again)
    assert r.exit_code == 0, r.stderr
    assert again.read_bytes() == out.read_bytes() and n_calls == 2 * 8 * 2 + 2 * 5


# ------------------------------------------------------------------------------ cogmath-eval
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
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--failures", "memorise", "--run-dir", live)
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
    line = one_line_error(pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--run-dir", live), 1)
    assert "finished run" in line
    perfect = tmp_path / "perfect"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--run-dir", perfect).exit_code == 0
    png = tmp_path / "dims.png"
    r = pk("cogmath-report", perfect, live, "--names", "perfect,memoriser", "--plot", png)
    assert r.exit_code == 0, r.stderr
    assert "RPR D9 Backward Reasoning" in r.stdout and "memoriser" in r.stdout.splitlines()[0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = pk("cogmath-report", perfect, live, "--format", "csv")
    assert r.stdout.splitlines()[0] == "metric,unit,perfect,live" and "pass rate (mastery),%,100.0,0.0" in r.stdout
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
    (None, ["--backend", "shell", "--cmd", "/no/such/model.sh --flag"], 2, "'/no/such/model.sh' not found"),
    (None, ["--backend", "shell", "--cmd", "NOEXEC"], 2, "is not executable"),
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
    extra = [str(write(tmp_path, "m.sh", "#!/bin/sh\necho 1\n")) if x == "NOEXEC" else x for x in extra]
    if "--backend" not in extra:
        extra = ["--backend", "rule", *extra]
    run = tmp_path / "run"
    line = one_line_error(pk("cogmath-eval", "--inquiries", src, "--backend", "rule", *extra, "--run-dir", run), code)
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
    assert not (tmp_path / "run").exists()  # the cache is checked before the run dir is made


def test_eval_replay_with_force_keeps_the_run_dirs_cache(pk, inquiries, tmp_path):
    """--force would clear the run dir holding the cache that replay is asked to read: refused first."""
    run = tmp_path / "run"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--run-dir", run).exit_code == 0
    before = (run / "cache.sqlite").read_bytes()
    line = one_line_error(pk("cogmath-eval", "--inquiries", inquiries, "--backend", "replay", "--force",
                             "--run-dir", run), 2)
    assert "--cache FILE" in line
    assert (run / "cache.sqlite").read_bytes() == before and (run / "manifest.json").exists()


def test_eval_dimension_table_on_stderr_and_quiet(pk, inquiries, tmp_path):
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--failures", "memorise", "--run-dir", tmp_path / "a")
    assert r.exit_code == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith("8 problems, 72 inquiries") and lines[1].split() == ["dim", "inquiry", "stage", "n", "acc", "%", "RPR", "%"]
    d4 = next(x for x in lines if x.startswith("D4 "))
    assert d4.split()[-1] == "100.0" and next(x for x in lines if x.startswith("D9 ")).split()[-1] == "0.0"
    assert lines[-1] == "accuracy 100.0%  pass rate 0.0%  overestimation 100.0 points"
    q = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--failures", "memorise", "--run-dir", tmp_path / "b", "-q")
    assert q.exit_code == 0 and q.stderr == "" and summary_line(q) == {**summary_line(r), "run_dir": str(tmp_path / "b")}


def test_eval_old_jsonl_cache_is_converted_and_replayed(pk, pk_bin, inquiries, tmp_path):
    from paperkit.methods.cogmath.cache import ResponseCache

    live = tmp_path / "live"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--run-dir", live).exit_code == 0
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


def test_eval_hf_cuda_without_a_gpu_is_one_line(pk, one_problem, tmp_path):
    pytest.importorskip("transformers")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    from ..methods.cogmath.test_cogmath_backends import _tiny_bos_model

    run = tmp_path / "run"
    line = one_line_error(pk("cogmath-eval", "--inquiries", one_problem, "--backend", "hf", "--model",
                             _tiny_bos_model(tmp_path / "tiny"), "--device", "cuda", "--run-dir", run), 1)
    assert "--device cuda" in line and "no CUDA device" in line
    assert not run.exists()


# ------------------------------------------------------------------------------ cogmath-report
def test_report_bad_input(pk, tmp_path):
    assert "summary.json" in one_line_error(pk("cogmath-report", tmp_path), 3)
    (tmp_path / "summary.json").write_text('{"x": 1}')
    assert "not a cogmath-eval summary" in one_line_error(pk("cogmath-report", tmp_path), 3)


@pytest.fixture
def summary(pk, one_problem, tmp_path):
    """A real cogmath-eval summary.json (one problem), for the report's input checks."""
    run = tmp_path / "run"
    assert pk("cogmath-eval", "--inquiries", one_problem, "--backend", "rule", "--run-dir", run, "-q").exit_code == 0
    return json.loads((run / "summary.json").read_text())


@pytest.mark.parametrize("edit, match", [
    (lambda s: s.update(dimensions=[1, 2]), "dimensions = [1, 2]; expected an object with keys 1, 2,"),
    (lambda s: s["dimensions"]["1"].update(rpr="abc"), "dimensions.1.rpr = 'abc'; expected a fraction in [0, 1]"),
    (lambda s: s["dimensions"].pop("9"), "dimensions.9 is missing"),
    (lambda s: s["stages"]["2"].pop("rpr"), "stages.2 has no key rpr"),
    (lambda s: s.update(accuracy=float("nan")), "accuracy = nan; expected a fraction in [0, 1]"),
    (lambda s: s.update(accuracy=7.5), "accuracy = 7.5; expected a fraction in [0, 1]"),
    (lambda s: s.update(pass_rate=-2), "pass_rate = -2; expected a fraction in [0, 1]"),
    (lambda s: s.update(overestimation=True), "overestimation = True; expected a fraction in [-1, 1]"),
    (lambda s: s.update(n_problems=2.5), "n_problems = 2.5; expected a whole number"),
    (lambda s: s.update(n_errors="3"), "n_errors = '3'; expected a whole number"),
    (lambda s: s.update(n_problems=10 ** 400), "n_problems = 1000"),  # beyond float range: OverflowError before
])
def test_report_summary_values_are_checked(pk, summary, tmp_path, edit, match):
    """Wrong types (exit 70 before) and NaN or out-of-range rates (printed with exit 0 before) are bad input."""
    edit(summary)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text(json.dumps(summary))  # json writes NaN for nan, as the audit's file had
    line = one_line_error(pk("cogmath-report", bad), 3)
    assert f"{bad / 'summary.json'}: {match}" in line


def test_report_plot_must_be_a_png(pk, summary, tmp_path):
    run = tmp_path / "ok"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(summary))
    line = one_line_error(pk("cogmath-report", run, "--plot", tmp_path / "plot.txt"), 2)
    assert "--plot" in line and "expected a .png file" in line   # the shared check of FILE.png outputs
    assert not (tmp_path / "plot.txt").exists()
    r = pk("cogmath-report", run, "--plot", tmp_path / "plot.PNG")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "plot.PNG").read_bytes()[:4] == b"\x89PNG"


def test_eval_shell_output_that_is_not_utf8(pk, one_problem, tmp_path):
    """Bytes that are not UTF-8 are replaced (U+FFFD) and the answer scored: never exit 70."""
    prog = write(tmp_path, "bin.sh", '#!/bin/sh\ncat >/dev/null\nprintf "\\377\\376 #### 4\\n"\n')
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    run = tmp_path / "run"
    r = pk("cogmath-eval", "--inquiries", one_problem, "--backend", "shell", "--cmd", prog, "--run-dir", run)
    assert r.exit_code == 0, r.stderr
    assert summary_line(r)["n_errors"] == 0
    responses = [json.loads(x) for x in (run / "responses.jsonl").read_text().splitlines()]
    assert responses and all(x["response"] == "\ufffd\ufffd #### 4" for x in responses)


def test_report_names_is_a_list(pk, inquiries, tmp_path):
    run = tmp_path / "run"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--run-dir", run, "-q").exit_code == 0
    r = pk("cogmath-report", run, run, "--names", " first , second", "--format", "csv")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0] == "metric,unit,first,second"
    assert "'a,,b' has an empty item" in one_line_error(pk("cogmath-report", run, "--names", "a,,b"), 2)
    assert "2 names for 1 runs" in one_line_error(pk("cogmath-report", run, "--names", "a,b"), 2)


def test_report_missing_run_is_bad_input(pk, tmp_path):
    line = one_line_error(pk("cogmath-report", tmp_path / "no-such-run"), 3)
    assert "no-such-run" in line and "no such run directory" in line


# ------------------------------------------------------------------------------ issue 29: usability
def test_eval_requires_a_backend(pk, inquiries, tmp_path):
    """No silent default model: without --backend the rule solver must not answer (exit 2, one line
    naming the choices, nothing written)."""
    run = tmp_path / "run"
    line = one_line_error(pk("cogmath-eval", "--inquiries", inquiries, "--run-dir", run), 2)
    assert "--backend" in line and "openai, shell, hf, rule, replay" in line
    assert not run.exists()
    # a config file may give it
    cfg = write(tmp_path, "c.yaml", "backend: rule\n")
    assert pk("cogmath-eval", "--config", cfg, "--inquiries", inquiries, "--run-dir", run, "-q").exit_code == 0
    assert summary_line(pk("cogmath-eval", "--config", cfg, "--inquiries", inquiries, "--run-dir", run, "--force",
                           "-q"))["backend"] == "rule"


def test_generate_llm_agents_without_a_backend(pk):
    line = one_line_error(pk("cogmath-generate", "--source", "synthetic:1", "--agents", "llm"), 2)
    assert "--backend openai, shell, hf or replay" in line and "(not" not in line


def test_eval_table_shows_absolute_accuracy_beside_rpr(pk, inquiries, tmp_path):
    """A model that solves nothing: RPR has no base ('-') but each dimension's absolute accuracy is shown."""
    ok = tmp_path / "refuse.sh"
    ok.write_text("#!/bin/sh\ncat > /dev/null\necho 'The problem cannot be solved.'\n")
    ok.chmod(ok.stat().st_mode | stat.S_IXUSR)
    r = pk("cogmath-eval", "--inquiries", inquiries, "--backend", "shell", "--cmd", str(ok), "--run-dir", tmp_path / "r")
    assert r.exit_code == 0, r.stderr
    d2 = next(x for x in r.stderr.splitlines() if x.startswith("D2 ")).split()
    assert d2[-2:] == ["100.0", "-"]  # acc % then RPR %
    d4 = next(x for x in r.stderr.splitlines() if x.startswith("D4 ")).split()
    assert d4[-2:] == ["0.0", "-"]


def test_report_one_scale_named_in_every_format(pk, inquiries, tmp_path):
    run = tmp_path / "mem"
    assert pk("cogmath-eval", "--inquiries", inquiries, "--backend", "rule", "--failures", "memorise",
              "--run-dir", run, "-q").exit_code == 0
    table = pk("cogmath-report", run).stdout.splitlines()
    csv_rows = [x.split(",") for x in pk("cogmath-report", run, "--format", "csv").stdout.splitlines()]
    jsonl = [json.loads(x) for x in pk("cogmath-report", run, "--format", "jsonl").stdout.splitlines()]
    assert table[0].split() == ["metric", "unit", "mem"] and csv_rows[0] == ["metric", "unit", "mem"]
    by_metric = {r[0]: r for r in csv_rows}
    assert by_metric["accuracy (original)"][1:] == ["%", "100.0"]  # percent, as in the table
    assert by_metric["pass rate (mastery)"][1:] == ["%", "0.0"]
    assert by_metric["accuracy D4 Redundant Condition"][1:] == ["%", "100.0"]
    assert by_metric["overestimation (acc - PR)"][1:] == ["points", "100.0"]
    assert by_metric["problems"][1:] == ["count", "8"]
    acc_line = next(x for x in table if x.startswith("accuracy (original)"))
    assert acc_line.split()[-2:] == ["%", "100.0"]
    assert {"metric": "pass rate (mastery)", "unit": "%", "mem": 0.0} in jsonl
    assert "column of the report" in one_line_error(pk("cogmath-report", run, "--names", "unit"), 2)


def test_eval_help_states_the_answer_format(pk):
    text = " ".join(pk("cogmath-eval", "--help").stdout.split())
    assert "'#### <answer>'" in text and "\\boxed" in text and "cannot be solved" in text


def test_shell_syntax_in_cmd_is_warned_about_once(pk, pk_bin, one_problem, tmp_path):
    from paperkit.methods.cogmath.backends import shell_syntax

    assert shell_syntax("cat p.txt | head -1") == ["|"] and shell_syntax("m.py > out 2>&1") == [">", ">&"]
    assert shell_syntax("python3 m.py --flag 'a|b'") == [] and shell_syntax("echo $HOME") == ["$"]
    r = pk_bin("cogmath-eval", "--inquiries", str(one_problem), "--backend", "shell", "--cmd", "cat /dev/null | head",
               "--run-dir", str(tmp_path / "run"))
    warned = [x for x in r.stderr.splitlines() if "shell syntax" in x]
    assert len(warned) == 1 and warned[0].startswith("paperkit cogmath-eval: warning: --cmd") and "(|)" in warned[0]
    # bad input stays one line: the warning comes after the inputs are checked and the run dir is made
    line = one_line_error(pk("cogmath-eval", "--inquiries", tmp_path / "missing.jsonl", "--backend", "shell",
                             "--cmd", "cat | head", "--run-dir", tmp_path / "run2"), 3)
    assert "no such file" in line
    ok = pk("cogmath-eval", "--inquiries", one_problem, "--backend", "shell", "--cmd", "cat", "--run-dir",
            tmp_path / "run3")
    assert "shell syntax" not in ok.stderr
