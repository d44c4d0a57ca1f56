"""rgtg-* commands: a small toy task end to end, exact call counts in the outputs, same seed same bytes, and
the issue's bad-input cases (one line, exit 2 or 3, no run dir)."""

import json

import pytest
import torch

TOY = ["--vocab", "12", "--length", "8", "--pairs", "300", "--heldout", "60", "--prompts", "12", "--val-prompts", "10"]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    from click.testing import CliRunner

    from paperkit_cli.main import cli

    d = tmp_path_factory.mktemp("rgtg")
    runner = CliRunner()
    r = runner.invoke(cli, ["rgtg-toy", *TOY, "--run-dir", str(d / "task"), "-q"])
    assert r.exit_code == 0, r.output
    for loss, extra in (("farma", []), ("seq", []), ("cd-regress", ["--rollouts", str(d / "task" / "rollouts.jsonl")])):
        r = runner.invoke(cli, ["rgtg-train-rm", "--lm", str(d / "task" / "lm.pt"), "--pairs", str(d / "task" / "pairs.jsonl"),
                                "--heldout", str(d / "task" / "heldout.jsonl"), "--iters", "1", "--d-model", "16", "-j", "1", "--loss", loss, *extra,
                                "--run-dir", str(d / loss), "-q"])
        assert r.exit_code == 0, r.output
    return d


def test_toy_writes_task_files(task):
    t = task / "task"
    for f in ("lm.pt", "reward.json", "pairs.jsonl", "heldout.jsonl", "prefixes.jsonl", "rollouts.jsonl",
              "prompts.jsonl", "val_prompts.jsonl", "manifest.json"):
        assert (t / f).is_file(), f
    row = json.loads((t / "pairs.jsonl").read_text().splitlines()[0])
    assert set(row) == {"prompt", "chosen", "rejected"} and row["chosen"] != row["rejected"]
    assert len((t / "prompts.jsonl").read_text().splitlines()) == 12
    assert len((t / "val_prompts.jsonl").read_text().splitlines()) == 10


def test_train_rm_outputs(task):
    m = json.loads((task / "farma" / "metrics.json").read_text())
    assert m["head"] == "token" and 0 <= m["pair_accuracy"] <= 1 and m["constraint_gap"] >= 0
    assert json.loads((task / "seq" / "metrics.json").read_text())["head"] == "scalar"
    for f in ("rm.pt", "loss.csv", "loss.png"):
        assert (task / "farma" / f).is_file()
    assert set((task / "farma" / "loss.csv").read_text().splitlines()[0].split(",")) == {"step", "iter", "phase", "loss"}


def _generate(pk, task, run_dir, *extra):
    t = task / "task"
    return pk("rgtg-generate", "--lm", t / "lm.pt", "--rm", task / "farma" / "rm.pt", "--prompts", t / "prompts.jsonl",
              "--scorer", t / "reward.json", "--max-new", "5", "--k", "5", "-j", "1", "--run-dir", run_dir, "-q", *extra)


def test_generate_counts_calls_and_is_reproducible(pk, task, tmp_path):
    methods = ["--method", "ref", "--method", "farma", "--method", f"cd={task / 'cd-regress' / 'rm.pt'}",
               "--method", f"args={task / 'seq' / 'rm.pt'}", "--method", "pargs", "--method", "best-of-n", "--n", "3"]
    for name in ("a", "b"):
        r = _generate(pk, task, tmp_path / name, *methods)
        assert r.exit_code == 0, r.stderr
    assert (tmp_path / "a" / "generations.jsonl").read_bytes().count(b"\n") == 6 * 12 * 2
    rows = {m["method"]: m for m in json.loads((tmp_path / "a" / "summary.json").read_text())["methods"]}
    assert [rows[m]["rm_calls_per_generation"] for m in ("ref", "farma", "cd", "args", "pargs", "best-of-n")] == \
        [0, 5, 5, 25, 25, 3]
    assert all(m["lm_calls_per_generation"] == 5 for n, m in rows.items() if n != "best-of-n")
    assert rows["best-of-n"]["lm_calls_per_generation"] == 15
    assert rows["ref"]["gap_closed"] == 0 and rows["farma"]["optimum_mean"] >= rows["farma"]["score_mean"]
    gen = [json.loads(x) for x in (tmp_path / "a" / "generations.jsonl").read_text().splitlines()]
    key = lambda g: (g["method"], g["prompt_index"], g["sample"], g["tokens"], g["score"])  # noqa: E731
    assert [key(g) for g in gen] == [key(json.loads(x)) for x in (tmp_path / "b" / "generations.jsonl").read_text().splitlines()]
    assert (tmp_path / "a" / "reward_vs_rm_calls.png").is_file()
    assert len(r.stdout.splitlines()) == 6 and json.loads(r.stdout.splitlines()[1])["method"] == "farma"


def test_farma_with_w0_equals_ref(pk, task, tmp_path):
    r = _generate(pk, task, tmp_path / "g", "--method", "ref", "--method", "farma", "--w", "0", "--samples", "1")
    assert r.exit_code == 0, r.stderr
    gen = [json.loads(x) for x in (tmp_path / "g" / "generations.jsonl").read_text().splitlines()]
    assert [g["tokens"] for g in gen if g["method"] == "ref"] == [g["tokens"] for g in gen if g["method"] == "farma"]


def test_generate_picks_w_on_validation(pk, task, tmp_path):
    """Each guided method keeps the grid's w with the best validation mean; that mean is the score of a plain run
    over the validation prompts at that w (validation seeds = --seed + 10000019), and the test generations are
    those of a run with --w fixed at the picked value."""
    t = task / "task"
    grid = ("0", "3", "8")
    r = _generate(pk, task, tmp_path / "tuned", "--method", "ref", "--method", "farma", "--method", "args",
                  "--samples", "1", "--val-prompts", t / "val_prompts.jsonl", "--w-grid", ",".join(grid))
    assert r.exit_code == 0, r.stderr
    out = json.loads((tmp_path / "tuned" / "summary.json").read_text())
    rows = {m["method"]: m for m in out["methods"]}
    assert out["w_selection"] == "validation" and "w" not in rows["ref"]
    for name in ("farma", "args"):
        means = rows[name]["w_validation_means"]
        assert set(means) == {"0.0", "3.0", "8.0"}
        best = max(means.values())
        assert rows[name]["w"] == min(float(w) for w, v in means.items() if v == best)
    w = rows["farma"]["w"]
    for name, prompts, seed in (("val", "val_prompts.jsonl", "10000019"), ("fixed", "prompts.jsonl", "0")):
        r = pk("rgtg-generate", "--lm", t / "lm.pt", "--rm", task / "farma" / "rm.pt", "--prompts", t / prompts,
               "--scorer", t / "reward.json", "--max-new", "5", "--k", "5", "--method", "farma", "--w", str(w),
               "--samples", "1", "--seed", seed, "-j", "1", "--run-dir", tmp_path / name, "-q")
        assert r.exit_code == 0, r.stderr
    val = json.loads((tmp_path / "val" / "summary.json").read_text())["methods"][0]
    assert val["score_mean"] == pytest.approx(rows["farma"]["w_validation_means"][repr(float(w))])
    tokens = lambda d: [g["tokens"] for g in map(json.loads, (d / "generations.jsonl").read_text().splitlines())  # noqa: E731
                        if g["method"] == "farma"]
    assert tokens(tmp_path / "tuned") == tokens(tmp_path / "fixed")


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def bad(task, tmp_path_factory):
    from paperkit.methods.rgtg import model, store

    d = tmp_path_factory.mktemp("bad")
    files = {
        "no-prompt": _write(d / "noprompt.jsonl", [{"text": "t1 t2"}]),
        "missing-rejected": _write(d / "norej.jsonl", [{"prompt": "t1", "chosen": "t2 t3"}]),
        "identical": _write(d / "same.jsonl", [{"prompt": "t1", "chosen": "t2 t3", "rejected": "t2 t3"}]),
        "unknown-token": _write(d / "unk.jsonl", [{"prompt": "t1 zzz"}]),
        "empty": _write(d / "empty.jsonl", []),
    }
    (d / "foreign-pt").write_bytes(b"")
    torch.save({"weights": torch.zeros(3)}, d / "foreign-pt")
    files["foreign-pt"] = d / "foreign-pt"
    (d / "notlm").mkdir()
    (d / "notlm" / "config.json").write_text("{}")
    files["not-a-causal-lm"] = d / "notlm"
    reward = json.loads((task / "task" / "reward.json").read_text())
    for name, edit in {"rew-nan": lambda r: r["lexicon"].__setitem__(0, float("nan")),
                       "rew-short": lambda r: r.update(lexicon=[1, 2]),
                       "rew-bigram": lambda r: r.update(bigrams=[["t0", "t9", 1.0]]),
                       "rew-negative": lambda r: r.update(bigrams=[[0, 1], [-1, 2]]),
                       "rew-huge": lambda r: r["lexicon"].__setitem__(1, "HUGE")}.items():
        r = json.loads(json.dumps(reward))
        edit(r)
        (d / f"{name}.json").write_text(json.dumps(r).replace('"HUGE"', "1" + "0" * 400))
        files[name] = d / f"{name}.json"
    other = model.TinyLM(13, d=8, layers=1, heads=2, max_len=64)
    store.save_rm(d / "vocab13.pt", other, head="token", loss="farma", vocab=store.WordVocab([f"t{i}" for i in range(13)]),
                  metrics={})
    files["vocab-mismatch"] = d / "vocab13.pt"
    return files


def _check(r, run_dir, codes):
    assert r.exit_code in codes, (r.exit_code, r.stderr)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert not run_dir.exists()


@pytest.mark.parametrize("case, args, code", [
    ("no-prompt", ["--prompts", "{no-prompt}"], 3),
    ("unknown token", ["--prompts", "{unknown-token}"], 3),
    ("empty prompts", ["--prompts", "{empty}"], 3),
    ("vocab mismatch", ["--rm", "{vocab-mismatch}"], 3),
    ("foreign pt as RM", ["--rm", "{foreign-pt}"], 3),
    ("foreign pt as LM", ["--lm", "{foreign-pt}"], 3),
    ("dir not a causal LM", ["--lm", "{not-a-causal-lm}"], 3),
    ("k < 1", ["--k", "0"], 2),
    ("k > vocab", ["--k", "13"], 2),
    ("w nan", ["--w", "nan"], 2),
    ("w inf", ["--w", "inf"], 2),
    ("w huge", ["--w", "1e300"], 2),
    ("w over the bound", ["--w", "-1000.5"], 2),
    ("w-grid huge", ["--w-grid", "1,1e300", "--val-prompts", "{prompts}", "--scorer", "{reward}"], 2),
    ("scorer NaN lexicon", ["--scorer", "{rew-nan}"], 3),
    ("scorer short lexicon", ["--scorer", "{rew-short}"], 3),
    ("scorer bigram not a pair", ["--scorer", "{rew-bigram}"], 3),
    ("scorer negative bigram index", ["--scorer", "{rew-negative}"], 3),
    ("max-new 0", ["--max-new", "0"], 2),
    ("max-new over positions", ["--max-new", "100"], 2),
    ("farma with a scalar RM", ["--rm", "{seq}", "--method", "farma"], 2),
    ("unknown method", ["--method", "beam"], 2),
    ("val prompts without a scorer", ["--val-prompts", "{prompts}"], 2),
    ("w-grid without val prompts", ["--w-grid", "1,2"], 2),
    ("w-grid nan", ["--w-grid", "1,nan"], 2),
    ("val prompts without prompt", ["--val-prompts", "{no-prompt}", "--scorer", "{reward}"], 3),
])
def test_generate_bad_input(pk, task, bad, tmp_path, case, args, code):
    t = task / "task"
    base = {"--lm": str(t / "lm.pt"), "--prompts": str(t / "prompts.jsonl"), "--rm": str(task / "farma" / "rm.pt")}
    files = {**{k: str(v) for k, v in bad.items()}, "seq": str(task / "seq" / "rm.pt"),
             "prompts": str(t / "prompts.jsonl"), "reward": str(t / "reward.json")}
    given = [a.format(**files) if a.startswith("{") else a for a in args]
    for opt in list(base):
        if opt in given:
            base.pop(opt)
    argv = [x for kv in base.items() for x in kv] + given
    _check(pk("rgtg-generate", *argv, "--run-dir", tmp_path / "run"), tmp_path / "run", {code})


@pytest.mark.parametrize("case, pairs, extra, code", [
    ("pair without rejected", "missing-rejected", [], 3),
    ("identical chosen and rejected", "identical", [], 3),
    ("cd-regress without rollouts", None, ["--loss", "cd-regress"], 2),
    ("absurd RM size", None, ["--d-model", "4096", "--layers", "48"], 2),
])
def test_train_rm_bad_input(pk, task, bad, tmp_path, case, pairs, extra, code):
    t = task / "task"
    p = bad[pairs] if pairs else t / "pairs.jsonl"
    _check(pk("rgtg-train-rm", "--lm", t / "lm.pt", "--pairs", p, *extra, "--run-dir", tmp_path / "run"),
           tmp_path / "run", {code})


@pytest.mark.parametrize("name, match", [
    ("rew-nan", "lexicon[0] = nan; expected a finite number"),
    ("rew-short", "lexicon has 2 weights; expected a list of 12 numbers"),
    ("rew-bigram", "bigrams[0] = ['t0', 't9', 1.0]; expected a pair [a, b] of token indices in [0, 12)"),
    ("rew-negative", "bigrams[1] = [-1, 2]; expected a pair"),
    ("rew-huge", "lexicon[1] = 1000"),
])
def test_generate_scorer_reward_json_is_checked(pk, task, bad, tmp_path, name, match):
    t = task / "task"
    r = pk("rgtg-generate", "--lm", t / "lm.pt", "--prompts", t / "prompts.jsonl", "--method", "ref",
           "--scorer", bad[name], "--run-dir", tmp_path / "run")
    _check(r, tmp_path / "run", {3})
    assert f"{bad[name]}: {match}" in r.stderr


def test_generate_w_range(pk, task, tmp_path):
    t = task / "task"
    r = pk("rgtg-generate", "--lm", t / "lm.pt", "--prompts", t / "prompts.jsonl", "--rm", task / "farma" / "rm.pt",
           "--w", "1e300", "--run-dir", tmp_path / "run")
    _check(r, tmp_path / "run", {2})
    assert "--w 1e+300: expected a number in [-1000, 1000]" in r.stderr
    # the bound itself decodes
    r = _generate(pk, task, tmp_path / "ok", "--method", "farma", "--w", "1000", "--samples", "1")
    assert r.exit_code == 0, r.stderr


def test_train_rm_min_prefix_longer_than_every_sequence(pk, task, tmp_path):
    """Refused (exit 2) instead of training no max constraint and reporting a constraint gap of 0.0."""
    t = task / "task"
    for loss, extra in (("farma", []), ("bt-prefix", []), ("bt-full", ["--heldout", t / "heldout.jsonl"]),
                        ("cd-regress", ["--rollouts", t / "rollouts.jsonl"])):
        r = pk("rgtg-train-rm", "--lm", t / "lm.pt", "--pairs", t / "pairs.jsonl", "--loss", loss, *extra,
               "--min-prefix", "9", "--run-dir", tmp_path / "run")
        _check(r, tmp_path / "run", {2})
        assert "--min-prefix 9 is longer than every sequence of" in r.stderr and "(longest 8 tokens" in r.stderr
    # a scalar RM uses no prefixes: --min-prefix does not matter
    r = pk("rgtg-train-rm", "--lm", t / "lm.pt", "--pairs", t / "heldout.jsonl", "--loss", "seq", "--iters", "1",
           "--d-model", "8", "--heads", "1", "--min-prefix", "9", "--run-dir", tmp_path / "seq", "-q")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("command, option, text, match", [
    ("rgtg-generate", "--prompts", '{"prompt": "t1"}\n\n{"text": "t1"}\n', "line 3 has no 'prompt' string"),
    ("rgtg-generate", "--prompts", '{"prompt": "t1"}\n{"prompt": "zzz"}\n', "line 2: token 'zzz'"),
    ("rgtg-generate", "--prompts", '{"prompt": ""}\n', "line 1 has an empty prompt"),
    ("rgtg-generate", "--prompts", '[1]\n', "line 1 is not a JSON object"),
    ("rgtg-train-rm", "--pairs", '\n{"prompt": "t1", "chosen": "t2", "rejected": "t2"}\n', "line 2: chosen and rejected"),
])
def test_jsonl_errors_name_the_file_line(pk, task, tmp_path, command, option, text, match):
    """1-based file lines, blank lines counted, as paperkit's other JSONL errors (the rgtg ones said 'row 0')."""
    t = task / "task"
    f = tmp_path / "in.jsonl"
    f.write_text(text)
    args = {"rgtg-generate": ["--lm", t / "lm.pt", "--prompts", t / "prompts.jsonl", "--method", "ref"],
            "rgtg-train-rm": ["--lm", t / "lm.pt", "--pairs", t / "pairs.jsonl"]}[command]
    args[args.index(option) + 1] = f
    r = pk(command, *args, "--run-dir", tmp_path / "run")
    _check(r, tmp_path / "run", {3})
    assert f"{f}: {match}" in r.stderr


def test_toy_bad_lengths(pk, tmp_path):
    _check(pk("rgtg-toy", "--length", "6", "--min-len", "8", "--run-dir", tmp_path / "run"), tmp_path / "run", {2})


@pytest.fixture(scope="module")
def char_task(tmp_path_factory):
    """The char-level pipeline at toy size: a char LM on a short text, a task sampled from it, a FaRMA RM."""
    from click.testing import CliRunner

    from paperkit_cli.main import cli

    d = tmp_path_factory.mktemp("rgtg-char")
    (d / "text.txt").write_text("To be, or not to be, that is the question.\n" * 40, encoding="utf-8")
    runner = CliRunner()
    for argv in (["rgtg-train-lm", "--text", d / "text.txt", "--epochs", "1", "--d-model", "16", "--layers", "1",
                  "--block", "32", "--run-dir", d / "lm"],
                 ["rgtg-toy", "--lm", d / "lm" / "lm.pt", "--length", "14", "--prompt-len", "4", "--min-len", "10",
                  "--pairs", "60", "--heldout", "20", "--prompts", "6", "--run-dir", d / "task"],
                 ["rgtg-train-rm", "--lm", d / "task" / "lm.pt", "--pairs", d / "task" / "pairs.jsonl", "--iters", "1",
                  "--d-model", "16", "--heldout", d / "task" / "heldout.jsonl", "--run-dir", d / "rm"]):
        r = runner.invoke(cli, [str(a) for a in argv] + ["-q"])
        assert r.exit_code == 0, r.output
    return d


def test_char_pipeline(pk, char_task, tmp_path):
    d = char_task
    m = json.loads((d / "lm" / "metrics.json").read_text())
    assert m["vocab_kind"] == "char" and m["vocab"] == len(set("To be, or not to be, that is the question.\n"))
    assert {"lm.pt", "loss.csv", "loss.png"} <= {p.name for p in (d / "lm").iterdir()}
    row = json.loads((d / "task" / "pairs.jsonl").read_text().splitlines()[0])
    assert len(row["prompt"]) == 4 and 6 <= len(row["chosen"]) <= 10 and row["chosen"] != row["rejected"]
    r = pk("rgtg-generate", "--lm", d / "task" / "lm.pt", "--rm", d / "rm" / "rm.pt", "--prompts",
           d / "task" / "prompts.jsonl", "--scorer", d / "task" / "reward.json", "--max-new", "6", "--k", "5",
           "--run-dir", tmp_path / "gen", "-q")
    assert r.exit_code == 0, r.stderr
    gen = [json.loads(x) for x in (tmp_path / "gen" / "generations.jsonl").read_text().splitlines()]
    assert all(len(g["text"]) == 6 and len(g["prompt"]) == 4 for g in gen)  # characters, no separators
    rows = {m["method"]: m for m in json.loads((tmp_path / "gen" / "summary.json").read_text())["methods"]}
    assert rows["farma"]["rm_calls_per_generation"] == 6 and "optimum_mean" not in rows["farma"]


def test_train_lm_on_toy_samples(pk, task, tmp_path):
    t = task / "task"
    r = pk("rgtg-train-lm", "--samples", t / "rollouts.jsonl", "--vocab-from", t / "lm.pt", "--epochs", "1",
           "--d-model", "16", "--layers", "1", "--run-dir", tmp_path / "lm", "-q")
    assert r.exit_code == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["vocab_kind"] == "word" and m["vocab"] == 12 and m["val_loss_nats"] > 0
    r = pk("rgtg-generate", "--lm", tmp_path / "lm" / "lm.pt", "--rm", task / "farma" / "rm.pt", "--prompts",
           t / "prompts.jsonl", "--max-new", "4", "--k", "3", "--run-dir", tmp_path / "gen", "-q")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("case, args, code", [
    ("no source", [], 2),
    ("two sources", ["--corpus", "shakespeare", "--text", "{text}"], 2),
    ("samples without vocab", ["--samples", "{rollouts}"], 2),
    ("non-UTF-8 text", ["--text", "{latin1}"], 3),
    ("empty text", ["--text", "{empty-text}"], 3),
    ("text shorter than a block", ["--text", "{text}", "--block", "4000"], 3),
    ("d-model not a multiple of heads", ["--corpus", "shakespeare", "--d-model", "30", "--heads", "4"], 2),
    ("foreign pt as vocab", ["--samples", "{rollouts}", "--vocab-from", "{foreign-pt}"], 3),
])
def test_train_lm_bad_input(pk, task, bad, tmp_path, case, args, code):
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1") * 5)
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "text.txt").write_text("a short text\n")
    files = {"text": tmp_path / "text.txt", "latin1": tmp_path / "latin1.txt", "empty-text": tmp_path / "empty.txt",
             "rollouts": task / "task" / "rollouts.jsonl", "foreign-pt": bad["foreign-pt"]}
    given = [str(files[a[1:-1]]) if a.startswith("{") else a for a in args]
    _check(pk("rgtg-train-lm", *given, "--run-dir", tmp_path / "run"), tmp_path / "run", {code})


@pytest.mark.parametrize("lm, code", [("markov", 2), ("foreign-pt", 3)])
def test_toy_bad_lm(pk, task, bad, tmp_path, lm, code):
    path = task / "task" / "lm.pt" if lm == "markov" else bad["foreign-pt"]
    _check(pk("rgtg-toy", "--lm", path, "--run-dir", tmp_path / "run"), tmp_path / "run", {code})
