"""cogmath-generate through the real entry point."""

import json
from pathlib import Path

import pytest

from .cogmath_helpers import one_line_error


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
    r = pk("cogmath-eval", "--inquiries", out, "--run-dir", run)
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
