"""Backends: openai against a loopback chat-completions server, shell against a tiny script, hf with a
tiny random model, the cache and replay, and failure handling.

The loopback server (paperkit.methods.cogmath.testing.ChatServer) is a test double of the HTTP path,
not a model: its replies come from the rule solver. The real openai client talks to it over TCP.
"""

import json
import os
import socket
import stat
import time

import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.cogmath import backends
from paperkit.methods.cogmath.cache import ResponseCache, cache_key
from paperkit.methods.cogmath.prompts import load_prompts
from paperkit.methods.cogmath.run import evaluate
from paperkit.methods.cogmath.synthetic import generate
from paperkit.methods.cogmath.testing import ChatServer

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def rows():
    return generate(6, seed=5)[1]


def openai_backend(url, cache=None, **kw):
    kw.setdefault("retries", 0)
    inner = backends.OpenAIBackend("loopback-model", base_url=url, **kw)
    return backends.CachedBackend(inner, ResponseCache(cache))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_openai_backend_end_to_end_and_replay(rows, tmp_path):
    prompts = load_prompts()
    cache = tmp_path / "cache.sqlite"
    with ChatServer() as server:
        live = evaluate(rows, openai_backend(server.base_url, cache, jobs=4), prompts)
        assert len(server.requests) == 60
        body = server.requests[0]["body"]
        assert body["model"] == "loopback-model" and body["temperature"] == 0.0
        assert body["messages"][-1]["role"] == "user" and "Problem:" in body["messages"][-1]["content"]
    assert live.summary["pass_rate"] == 1.0 and live.summary["n_errors"] == 0
    replay = evaluate(rows, backends.CachedBackend(None, ResponseCache(cache, must_exist=True)), prompts)
    assert json.dumps(replay.summary) == json.dumps(live.summary)
    assert replay.responses == live.responses


@pytest.mark.timing
def test_openai_concurrency(tmp_path):
    prompts = [f"Problem: {i}" for i in range(16)]
    with ChatServer(lambda p, r: "#### 1", latency=0.25) as server:
        t0 = time.perf_counter()
        out = openai_backend(server.base_url, jobs=8).complete(prompts)
        wall = time.perf_counter() - t0
    assert all(c.text == "#### 1" for c in out)
    assert wall < 16 * 0.25 / 2.5, wall  # serial would take 4 s


def test_unreachable_server_is_fatal():
    b = openai_backend(f"http://127.0.0.1:{free_port()}/v1", timeout=2)
    with pytest.raises(backends.BackendFatal, match="cannot reach"):
        b.complete(["Problem: 1"])


def test_http_errors_are_per_item_and_not_cached(tmp_path):
    cache = tmp_path / "c.sqlite"
    with ChatServer(lambda p, r: "#### 3", status=lambda n, body: 500 if n % 3 == 0 else None) as server:
        b = openai_backend(server.base_url, cache)
        out = b.complete([f"Problem: {i}" for i in range(6)])
    errors = [c for c in out if c.error]
    assert len(errors) == 2 and all("HTTP 500" in c.error for c in errors)
    b.cache.compact()
    assert len(ResponseCache(cache)) == 4  # every answer obtained is kept; failures are retried next time


def test_http_400_is_per_item_but_404_and_401_are_fatal():
    with ChatServer(status=lambda n, body: 400) as server:
        assert "HTTP 400" in openai_backend(server.base_url).complete(["x"])[0].error
    with ChatServer(status=lambda n, body: 404) as server:
        with pytest.raises(backends.BackendFatal, match="404"):
            openai_backend(server.base_url).complete(["x"])
    with ChatServer(api_key="sk-right") as server:
        with pytest.raises(backends.BackendFatal, match="401"):
            openai_backend(server.base_url, api_key="sk-wrong").complete(["x"])


def test_timeout_and_malformed_output_are_per_item():
    with ChatServer(lambda p, r: "#### 1", latency=1.5) as server:
        c = openai_backend(server.base_url, timeout=0.3).complete(["x"])[0]
    assert c.text is None and "timed out" in c.error
    with ChatServer(malformed=True) as server:
        c = openai_backend(server.base_url).complete(["x"])[0]
    assert c.text is None and "malformed" in c.error


def test_api_key_from_env_is_sent_and_never_stored(tmp_path, monkeypatch):
    secret = "sk-test-6f1d2c9a7b"
    monkeypatch.setenv("COGMATH_TEST_KEY", secret)
    cache = tmp_path / "c.sqlite"
    with ChatServer(lambda p, r: "#### 2", api_key=secret) as server:
        inner = backends.make_backend("openai", model="m", base_url=server.base_url, api_key_env="COGMATH_TEST_KEY")
        b = backends.with_cache(inner, cache)
        assert b.complete(["Problem: 1"])[0].text == "#### 2"
        assert server.requests[0]["authorization"] == f"Bearer {secret}"
    b.cache.compact()
    assert secret.encode() not in cache.read_bytes() and secret not in b.settings and secret not in b.model
    monkeypatch.delenv("COGMATH_TEST_KEY")
    with pytest.raises(UsageError, match="COGMATH_TEST_KEY"):
        backends.make_backend("openai", model="m", base_url="http://127.0.0.1:1/v1", api_key_env="COGMATH_TEST_KEY")


# ------------------------------------------------------------------------------------------------ shell
@pytest.fixture
def script(tmp_path):
    path = tmp_path / "answer.sh"
    path.write_text('#!/bin/sh\nprompt=$(cat)\ncase "$prompt" in\n  *fail*) echo oops >&2; exit 3;;\n'
                    '  *sleep*) sleep 5;;\nesac\necho "#### ${#1}"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_shell_backend_answers_errors_and_timeouts(script, tmp_path):
    marker = tmp_path / "pwned"
    # the argument reaches the program verbatim: no shell expands or runs it
    b = backends.ShellBackend([str(script), f"$(touch {marker})"], timeout=2, jobs=2)
    out = b.complete(["Problem: one", "please fail", "sleep now"])
    assert out[0].text == f"#### {len(f'$(touch {marker})')}"
    assert out[1].text is None and "exit status 3" in out[1].error and "oops" in out[1].error
    assert out[2].text is None and "timed out" in out[2].error
    assert not marker.exists()
    # a program that cannot run is refused when the backend is built (before a run dir exists)
    with pytest.raises(UsageError, match="'no-such-program-xyz' not found on PATH"):
        backends.ShellBackend("no-such-program-xyz")
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\necho 1\n")
    with pytest.raises(UsageError, match="is not executable"):
        backends.ShellBackend([str(plain)])
    with pytest.raises(UsageError, match="not found"):
        backends.ShellBackend([str(tmp_path)])  # a directory is not a program


def test_shell_backend_undecodable_output_is_replaced(tmp_path):
    """A program printing bytes that are not UTF-8 gives an answer with U+FFFD, not a crash (exit 70)."""
    prog = tmp_path / "bin.sh"
    prog.write_text('#!/bin/sh\ncat >/dev/null\nprintf "\\377\\376 #### 4\\n"\n')
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    out = backends.ShellBackend([str(prog)]).complete(["x"])
    assert out[0].error is None and out[0].text == "\ufffd\ufffd #### 4"


def test_shell_backend_through_evaluate_and_replay(script, rows, tmp_path):
    prompts = load_prompts()
    cache = tmp_path / "c.sqlite"
    cmd = f"{script} abc"  # always answers 3
    live = evaluate(rows, backends.with_cache(backends.make_backend("shell", cmd=cmd), cache), prompts)
    expected_pass = sum(1 for r in rows if r["inquiry"] and r["expected"] == "answer" and r["reference"] == "3")
    assert sum(s["pass"] for s in live.scores) == expected_pass
    backend = backends.with_cache(None, cache)
    assert backend.model == f"shell:{script} abc"
    again = evaluate(rows, backend, prompts)
    assert again.summary == live.summary and backend.misses == 0


# ---------------------------------------------------------------------------------------- cache, replay
def test_cache_keys_separate_models_and_settings(tmp_path):
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path)
    c.put(cache_key("m", "", "p"), "m", "", "p", "r1")
    c.close()
    c2 = ResponseCache(path)
    assert len(c2) == 1 and c2.get(cache_key("m", "", "p")) == "r1"
    assert c2.get(cache_key("m2", "", "p")) is None and c2.get(cache_key("m", "t=1", "p")) is None
    c2.put(cache_key("m", "", "q"), "m", "", "q", "r2")
    c2.put(cache_key("m", "", "q"), "m", "", "q", "other")  # the first answer is kept
    c2.close()
    c3 = ResponseCache(path)
    assert len(c3) == 2 and c3.get(cache_key("m", "", "q")) == "r2"
    rows = c3.rows()
    assert [r["key"] for r in rows] == sorted([cache_key("m", "", "p"), cache_key("m", "", "q")])
    assert {r["response"] for r in rows} == {"r1", "r2"}


def test_old_jsonl_cache_is_migrated_torn_line_and_all(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [{"key": cache_key("m", "", p), "model": "m", "settings": "", "prompt": p, "response": f"#### {i}"}
            for i, p in enumerate(("p", "q"))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"key": "abc", "mod')  # a crash mid-write
    c = ResponseCache(path)
    assert len(c) == 2 and c.get(cache_key("m", "", "q")) == "#### 1"
    c.put(cache_key("m", "", "z"), "m", "", "z", "#### 9")
    c.close()
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"  # converted in place
    assert len(ResponseCache(path)) == 3 and backends.with_cache(None, path).model == "m"
    last = tmp_path / "d.jsonl"
    last.write_text(json.dumps(rows[0]))  # complete, but no final newline (an edited file)
    assert len(ResponseCache(last)) == 1


def test_two_processes_share_one_cache(tmp_path):
    """Two runs writing one --cache at once keep every answer (the old JSONL compaction dropped some)."""
    import multiprocessing as mp

    path = tmp_path / "shared.sqlite"
    n = 150
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_write_answers, args=(str(path), w, n)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    c = ResponseCache(path)
    assert len(c) == 2 * n
    assert all(c.get(cache_key("m", "", f"w{w}-{i}")) == f"#### {w}-{i}" for w in range(2) for i in range(n))


def _write_answers(path, worker, n):
    c = ResponseCache(path)
    for i in range(n):
        c.put(cache_key("m", "", f"w{worker}-{i}"), "m", "", f"w{worker}-{i}", f"#### {worker}-{i}")
        if i % 50 == 49:  # what a run does at its end, while the other is still writing
            c.compact()
    c.compact()


@pytest.mark.parametrize("content, match", [
    (b"\xff\xfe\x00garbage\n", "not UTF-8"),
    (b'not json\n{"x": 2}\n', "not valid JSON"),
    (b'{"key": 1}\n', "lacks key"),
    (b"SQLite format 3\x00" + b"\x00" * 200, "corrupt"),
])
def test_bad_cache_files_are_input_errors(tmp_path, content, match):
    from paperkit.core.errors import InputError

    path = tmp_path / "c.bin"
    path.write_bytes(content)
    with pytest.raises(InputError, match=match):
        ResponseCache(path)
    assert path.read_bytes() == content  # refused, never replaced


def test_other_sqlite_database_is_refused(tmp_path):
    import sqlite3

    from paperkit.core.errors import InputError

    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="not a paperkit response cache"):
        ResponseCache(path)


def test_replay_misses_are_failed_items_and_model_choice(tmp_path):
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path)
    for m in ("a", "b"):
        c.put(cache_key(m, "", "p"), m, "", "p", f"#### {m}")
    c.compact()
    with pytest.raises(UsageError, match="several"):
        backends.with_cache(None, path)
    b = backends.with_cache(None, path, model="b")
    out = b.complete(["p", "q"])
    assert out[0].text == "#### b" and out[1].text is None and "no cached response" in out[1].error
    with pytest.raises(UsageError, match="no responses for model"):
        backends.with_cache(None, path, model="c")


# -------------------------------------------------------------------------------------------------- hf
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("transformers")
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = ["<pad>", "<unk>", "<eos>"] + [str(i) for i in range(20)] + ["####", "the", "cannot", "be", "solved",
                                                                        "Problem", ":", "apples", "has", "."]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(words), n_positions=512, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=2, eos_token_id=2, pad_token_id=0))
    d = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.mark.slow
def test_hf_backend_generates_deterministically_in_batches(tiny_model, rows):
    b = backends.HFBackend(str(tiny_model), max_new_tokens=4, batch_size=4, device="cpu")
    prompts = ["Problem : apples has 3 .", "Problem : 7", "the", "Problem : 1 2 3", "5"]
    a = b.complete(prompts)
    again = b.complete(prompts)
    assert [c.text for c in a] == [c.text for c in again]
    assert all((c.text is None) != (c.error is None) for c in a)
    assert b.model == f"hf:{os.path.basename(str(tiny_model))}" and "max_new_tokens=4" in b.settings
    # the whole pipeline runs on it (a random model masters nothing)
    one = [r for r in rows if r["problem"] == rows[0]["problem"]]
    res = evaluate(one, backends.CachedBackend(b, ResponseCache(None)), load_prompts())
    assert res.summary["pass_rate"] == 0.0 and len(res.responses) == 10


@pytest.mark.slow
def test_hf_backend_bad_directory(tmp_path):
    from paperkit.core.errors import InputError

    with pytest.raises(InputError, match="no such model directory"):
        backends.HFBackend(str(tmp_path / "missing"))
    with pytest.raises(InputError, match="cannot load"):
        backends.HFBackend(str(tmp_path))


# ------------------------------------------------------------------------------- openai: parameters, hygiene
REFUSES_MAX_TOKENS = (400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                           "Use 'max_completion_tokens' instead.")


def test_openai_sends_the_seed():
    with ChatServer(lambda p, r: "#### 1") as server:
        inner = backends.make_backend("openai", model="m", base_url=server.base_url, seed=7, retries=0)
        assert inner.complete(["Problem: 1"])[0].text == "#### 1"
        assert server.requests[0]["body"]["seed"] == 7 and "seed=7" in inner.settings


@pytest.mark.parametrize("jobs", [1, 3])
def test_openai_falls_back_to_max_completion_tokens_once(jobs):
    refuse = lambda n, body: REFUSES_MAX_TOKENS if "max_tokens" in body else None  # noqa: E731
    with ChatServer(lambda p, r: "#### 2", status=refuse) as server:
        b = openai_backend(server.base_url, jobs=jobs, max_tokens=77)
        out = b.complete([f"Problem: {i}" for i in range(6)])
        bodies = [r["body"] for r in server.requests]
    assert all(c.text == "#### 2" for c in out), [c.error for c in out]
    assert b.inner.token_param == "max_completion_tokens"
    refused = [x for x in bodies if "max_tokens" in x]
    assert 1 <= len(refused) <= jobs  # only requests sent before the first refusal came back
    assert len(bodies) == 6 + len(refused)
    assert all(x["max_completion_tokens"] == 77 for x in bodies if "max_tokens" not in x)
    assert "max_tokens=77" in b.settings  # the same limit: the cache key does not change


def test_openai_other_400s_do_not_switch_parameters():
    with ChatServer(status=lambda n, body: (400, "max_tokens must be at most 4096")) as server:
        b = openai_backend(server.base_url, fail_fast=0)
        assert "HTTP 400" in b.complete(["x"])[0].error
        assert len(server.requests) == 1 and b.inner.token_param == "max_tokens"


def test_openai_run_stops_when_the_first_calls_all_fail_alike():
    with ChatServer(status=lambda n, body: (400, "this model does not support chat")) as server:
        b = openai_backend(server.base_url, fail_fast=4)
        with pytest.raises(backends.BackendFatal, match="first 4 calls .* same error .*does not support chat"):
            b.complete([f"Problem: {i}" for i in range(20)])
        assert len(server.requests) == 4
    # once a call has succeeded, failures are per item again
    with ChatServer(lambda p, r: "#### 1", status=lambda n, body: 500 if n >= 1 else None) as server:
        out = openai_backend(server.base_url, fail_fast=2).complete([f"Problem: {i}" for i in range(5)])
        assert out[0].text == "#### 1" and all("HTTP 500" in c.error for c in out[1:])


def test_key_over_plain_http_to_another_host_is_warned_once(monkeypatch):
    monkeypatch.setenv("COGMATH_TEST_KEY", "sk-x")
    seen = []
    for url, warned in [("http://10.0.0.7:8000/v1", True), ("http://gpu-box.lan/v1", True),
                        ("https://api.example.org/v1", False), ("http://127.0.0.1:8000/v1", False),
                        ("http://localhost:8000/v1", False), ("http://[::1]:8000/v1", False)]:
        seen.clear()
        b = backends.make_backend("openai", model="m", base_url=url, api_key_env="COGMATH_TEST_KEY", on_warning=seen.append)
        b.close()
        assert len(seen) == int(warned), url
        assert not warned or ("unencrypted" in seen[0] and "sk-x" not in seen[0])
    seen.clear()
    backends.make_backend("openai", model="m", base_url="http://10.0.0.7/v1", on_warning=seen.append).close()  # no key
    assert seen == []
    with pytest.warns(UserWarning, match="unencrypted"):
        backends.make_backend("openai", model="m", base_url="http://10.0.0.7/v1", api_key_env="COGMATH_TEST_KEY").close()


# -------------------------------------------------------------------------- hf: tokenise once, dtype, key
BOS_TEMPLATE = ("{{ bos_token }}{% for m in messages %}{{ m['content'] }} {% endfor %}"
                "{% if add_generation_prompt %}Answer :{% endif %}")


def _tiny_bos_model(d, template=BOS_TEMPLATE):
    """A random GPT-2 whose tokenizer adds BOS itself *and* whose chat template starts with BOS (as
    Llama-style templates do): rendering the template to text and tokenising it again doubles BOS."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = ["<pad>", "<unk>", "<eos>", "<bos>"] + [str(i) for i in range(20)] + [
        "####", "the", "Problem", ":", "Answer", "apples", "has", "."]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 3)])
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>",
                                  bos_token="<bos>")
    tok.chat_template = template
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(words), n_positions=256, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=3, eos_token_id=2, pad_token_id=0))
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def bos_model(tmp_path_factory):
    pytest.importorskip("transformers")
    return _tiny_bos_model(tmp_path_factory.mktemp("tiny-bos"))


def test_hf_prompt_is_tokenised_once_with_one_bos(bos_model):
    b = backends.HFBackend(str(bos_model), max_new_tokens=2, batch_size=4, device="cpu")
    seen = []
    generate = b.lm.generate

    def spy(**kw):
        seen.append((kw["input_ids"].clone(), kw["attention_mask"].clone()))
        return generate(**kw)

    b.lm.generate = spy
    prompts = ["Problem : apples has 3 .", "Problem : 7", "the"]
    out = b.complete(prompts)
    assert all((c.text is None) != (c.error is None) for c in out)
    ids, mask = seen[0]
    bos, words = b.tok.bos_token_id, [b.tok.convert_ids_to_tokens(int(i)) for i in ids[1][mask[1].bool()]]
    for row, m in zip(ids, mask, strict=True):
        real = row[m.bool()].tolist()
        assert real.count(bos) == 1 and real[0] == bos, b.tok.convert_ids_to_tokens(real)
    assert words == ["<bos>", "Problem", ":", "7", "Answer", ":"]  # the template, tokenised once
    assert bool((mask[:, -1] == 1).all())  # left padding: generation continues every prompt


def test_hf_dtype_and_chat_template_are_in_the_cache_key(bos_model, tmp_path):
    import torch

    default = backends.HFBackend(str(bos_model), device="cpu")
    assert default.lm.dtype == torch.float32 and "dtype=float32" in default.settings
    half = backends.make_backend("hf", model=str(bos_model), device="cpu", dtype="bfloat16")
    assert half.lm.dtype == torch.bfloat16 and "dtype=bfloat16" in half.settings
    assert "chat_template=" in default.settings and "chat_template=none" not in default.settings
    other = backends.HFBackend(str(_tiny_bos_model(tmp_path / "m2", template=BOS_TEMPLATE + " ")), device="cpu")
    keys = {backends.CachedBackend(b, ResponseCache(None)).key("p") for b in (default, half, other)}
    assert len(keys) == 3  # another precision or template never replays these answers
    with pytest.raises(UsageError, match="--dtype"):
        backends.HFBackend(str(bos_model), dtype="float8")
    with pytest.raises(UsageError, match="--model PATH"):
        backends.make_backend("hf")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_shell_backend_timeout_ends_the_programs_children_too(tmp_path):
    """A wrapper's child (here `sleep`, started by sh) ends with the timed-out prompt; it used to keep running."""
    pid_file = tmp_path / "child.pid"
    b = backends.ShellBackend(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; wait"], timeout=1)
    t0 = time.monotonic()
    out = b.complete(["x"])
    assert out[0].text is None and "timed out" in out[0].error and time.monotonic() - t0 < 10
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # exited, waiting for init to reap it
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        assert not os.path.exists(f"/proc/{child}"), "the timed-out program's child is still running"


def test_shell_backend_interrupt_ends_programs_in_flight(tmp_path):
    """Ctrl-C while other prompts' programs run (-j 3): complete() raises at once and ends them, instead of the
    pool waiting out their timeout (the programs run in their own process groups, out of the terminal's reach)."""
    slow = tmp_path / "slow.sh"
    slow.write_text('#!/bin/sh\nprompt=$(cat)\ncase "$prompt" in\n  *slow*) sleep 30;;\nesac\necho "#### 1"\n')
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    b = backends.ShellBackend([str(slow)], timeout=60, jobs=3)

    def on_done(i, completion):
        time.sleep(1.0)  # the slow prompts' programs have started
        raise KeyboardInterrupt

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        b.complete(["slow one", "quick", "slow two"], on_done=on_done)
    assert time.monotonic() - t0 < 10
    assert not b._live


def test_parallel_answers_are_cached_as_they_finish_and_survive_an_interrupt(tmp_path):
    """-j 3: each answer reaches the cache (and the progress callback) when it finishes, not when the slowest
    prompt does. Before, wait(FIRST_EXCEPTION) held every answer until all were in, so Ctrl-C during a long
    parallel run kept none of the finished ones."""
    slow = tmp_path / "slow.sh"
    slow.write_text('#!/bin/sh\nprompt=$(cat)\ncase "$prompt" in\n  *slow*) sleep 30;;\nesac\necho "#### $prompt"\n')
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    path = tmp_path / "c.sqlite"
    cached = backends.CachedBackend(backends.ShellBackend([str(slow)], timeout=60, jobs=3), ResponseCache(path))
    seen = []

    def on_done(i, completion):
        seen.append(i)
        if len(seen) == 2:
            raise KeyboardInterrupt

    prompts = ["quick a", "slow", "quick b"]
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        cached.complete(prompts, on_done=on_done)
    assert time.monotonic() - t0 < 10 and sorted(seen) == [0, 2]
    cached.cache.close()
    reopened = ResponseCache(path)
    assert [reopened.get(cached.key(p)) for p in prompts] == ["#### quick a", None, "#### quick b"]
