"""The bad-input matrix: every command that reads files, fed each class of bad file, and every command
with a size option, fed an absurd size. Each must answer with one line on stderr naming the problem and
exit 2 (a bad option value) or 3 (bad input) — never a traceback, never exit 70 — and must not leave a
run dir behind (inputs are validated before one exists)."""

from __future__ import annotations

import numpy as np
import pytest

GOOD_CSV = "x1,x2,y\n1,2,3\n2,3,5\n3,4,7\n4,5,9\n5,6,11\n6,7,13\n7,8,15\n8,9,17\n"


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    """One file per class of bad input (name → path)."""
    d = tmp_path_factory.mktemp("bad")
    files = {}

    def put(name, data):
        p = d / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        files[name] = p

    put("empty.csv", b"")
    put("latin1.csv", "x1,x2,y\n1,2,\xe9\n".encode("latin-1"))
    put("nan.csv", "x1,x2,y\n1,nan,3\n2,3,5\n")
    put("huge.csv", "x1,x2,y\n1,1e308,3\n2,3,5\n")
    put("text.csv", "x1,x2,y\n1,abc,3\n2,3,5\n")
    put("latin1.jsonl", '{"a": "\xe9"}\n'.encode("latin-1"))
    put("broken.jsonl", '{"a": 1\n')
    put("latin1.yaml", "a: \xe9\n".encode("latin-1"))
    put("list.yaml", "- 1\n- 2\n")
    put("syntax.yaml", "a: [1, 2\n")
    np.save(d / "strings.npy", np.array([["a", "b"], ["c", "d"]]))
    files["strings.npy"] = d / "strings.npy"
    np.save(d / "nan.npy", np.array([[1.0, np.nan], [2.0, 3.0]]))
    files["nan.npy"] = d / "nan.npy"
    np.save(d / "vector.npy", np.arange(4.0))
    files["vector.npy"] = d / "vector.npy"
    np.savez(d / "ok.npz", a=np.ones((40, 40)), b=np.ones((40, 40)))
    put("truncated.npz", (d / "ok.npz").read_bytes()[:200])
    np.save(d / "ok.npy", np.ones((40, 40)))
    put("truncated.npy", (d / "ok.npy").read_bytes()[:100])
    put("truncated.pt", b"PK\x03\x04" + b"\x00" * 60)
    files["missing.csv"] = d / "no-such-file.csv"
    files["missing.npy"] = d / "no-such-file.npy"
    files["missing.yaml"] = d / "no-such-file.yaml"
    files["missing.jsonl"] = d / "no-such-file.jsonl"
    files["missing-dir"] = d / "no-such-folder"
    put("good.csv", GOOD_CSV)
    return files


# (command, argument template, bad files). {F} is the bad file; {R} a run dir that must not appear.
FILE_CASES = [
    ("conformal-combine", ["--pvalues", "{F}"],
     ["empty.csv", "latin1.csv", "text.csv", "strings.npy", "truncated.npz", "truncated.npy", "missing.npy"]),
    ("conformal-cv", ["--train", "{F}", "--test", "{G}", "--target", "y"],
     ["empty.csv", "latin1.csv", "nan.csv", "text.csv", "missing.csv"]),
    ("kd-rank-diag", ["--logits-t", "{F}", "--logits-s", "{F}"],
     ["strings.npy", "nan.npy", "truncated.npy", "truncated.npz", "missing.npy", "latin1.csv"]),
    ("mvml-predict", ["--model", "{F}", "--views", "{F}"], ["truncated.npz", "missing.npy"]),
    ("mvml-fit", ["--views", "{F}", "--labels", "{F}", "--run-dir", "{R}"],
     ["strings.npy", "nan.npy", "truncated.npy", "truncated.npz", "missing.npy", "latin1.csv", "huge.csv"]),
    ("mm-prefill", ["--qkv", "{F}", "--run-dir", "{R}"],
     ["truncated.npz", "truncated.pt", "strings.npy", "missing.npy"]),
    ("mm-prefill-search", ["--qkv", "{F}"], ["truncated.npz", "truncated.pt", "missing.npy"]),
    ("sr-apo-search", ["--data", "{F}", "--run-dir", "{R}"],
     ["empty.csv", "latin1.csv", "nan.csv", "text.csv", "missing.csv"]),
    ("sr-apo-front", ["--summaries", "{F}"], ["empty.csv", "latin1.csv", "missing.csv"]),
    ("bandit-bound", ["--instance", "{F}"], ["latin1.yaml", "list.yaml", "syntax.yaml", "missing.yaml"]),
    ("bandit-sim", ["--instance", "{F}", "--run-dir", "{R}"], ["latin1.yaml", "list.yaml", "missing.yaml"]),
    ("disempower-sim", ["--scenario", "{F}", "--run-dir", "{R}"],
     ["latin1.yaml", "list.yaml", "syntax.yaml", "missing.yaml"]),
    ("cogmath-eval", ["--inquiries", "{F}", "--backend", "replay", "--run-dir", "{R}"],
     ["latin1.jsonl", "broken.jsonl", "missing.jsonl"]),
    ("ferret-train", ["--task", "jsonl:{F}", "--rounds", "1", "--run-dir", "{R}"],
     ["latin1.jsonl", "broken.jsonl", "missing.jsonl"]),
    ("ldsmc-restore", ["--model", "{F}", "--run-dir", "{R}"], ["missing-dir"]),
    ("kd-rank", ["--data", "synth100", "--teacher", "{F}", "--run-dir", "{R}"], ["truncated.pt", "missing.npy"]),
    ("dcgnn-fit", ["--data", "{F}", "--run-dir", "{R}"], ["truncated.npz", "missing.npy", "missing-dir", "strings.npy"]),
    ("dcgnn-faith", ["--model", "{F}", "--synthetic", "motif", "--run-dir", "{R}"],
     ["truncated.pt", "missing.npy", "truncated.npz"]),
]


def _check(r, run_dir, expected):
    assert r.exit_code in expected, f"exit {r.exit_code}: {r.stderr}"
    assert r.stderr.count("\n") == 1 and ": error: " in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "unexpected" not in r.stderr and "bug in paperkit" not in r.stderr
    assert "weights_only" not in r.stderr and "allow_pickle" not in r.stderr, r.stderr
    assert run_dir is None or not run_dir.exists(), "a run dir was created before the inputs were validated"


@pytest.mark.parametrize("command, template, kinds", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_bad_files_are_one_line_input_errors(command, template, kinds, bad, pk, tmp_path):
    for kind in kinds:
        run_dir = tmp_path / f"run-{kind}"
        args = [a.replace("{F}", str(bad[kind])).replace("{G}", str(bad["good.csv"])).replace("{R}", str(run_dir))
                for a in template]
        r = pk(command, *args)
        try:
            _check(r, run_dir if "{R}" in template else None, {3})
        except AssertionError as e:
            raise AssertionError(f"{command} with {kind}: {e}") from None


# Sizes that cannot fit: refused up front (exit 2) with the estimate and the flag that raises the limit.
SIZE_CASES = [
    ("bandit-sim", ["--runs", "100000000", "--horizon", "1000000000"]),
    ("mvml-make", ["--dataset", "synthetic", "--n", "100000000000"]),
    ("conformal-sim", ["--n", "100000000000"]),
    ("kd-rank", ["--train-per-class", "100000000"]),
    ("ldsmc-train", ["--vae-width", "100000000"]),
    ("ferret-recon", ["--d", "100000000000"]),
    ("mm-prefill-bench", ["--n", "100000000000"]),
    ("dcgnn-fit", ["--synthetic", "redblue", "--hidden", "4096", "--batch-size", "100000"]),
]


@pytest.mark.parametrize("command, args", SIZE_CASES, ids=[c[0] for c in SIZE_CASES])
def test_absurd_sizes_are_refused_before_anything_runs(command, args, pk, tmp_path):
    run_dir = tmp_path / "run"
    r = pk(command, *args, "--run-dir", str(run_dir))
    _check(r, run_dir, {2})


def test_code_execution_payloads_are_refused(pk, tmp_path, bad):
    """An estimator named by the user is checked before it is called: subprocess.run never runs."""
    sentinel = tmp_path / "pwned"
    r = pk("conformal-cv", "--train", str(bad["good.csv"]), "--test", str(bad["good.csv"]), "--target", "y",
           "--model", "subprocess:run", "--model-param", f"args=touch {sentinel}", "--model-param", "shell=true")
    assert r.exit_code == 2 and not sentinel.exists(), r.stderr


# (command, arguments): {F} is an existing input file that an output option names too; {G} another input.
OVERWRITE_CASES = [
    ("conformal-combine", ["--pvalues", "{F}", "-o", "{F}"]),
    ("conformal-cv", ["--train", "{G}", "--test", "{F}", "--target", "y", "--summary", "{F}"]),
    ("conformal-predict", ["--model", "{G}", "--test", "{F}", "--manifest", "{F}"]),
    ("kd-rank-diag", ["--logits-t", "{F}", "--logits-s", "{G}", "-o", "{F}"]),
    ("mvml-predict", ["--model", "{G}", "--views", "{F}", "-o", "{F}"]),
    ("mm-prefill-search", ["--qkv", "{F}", "-o", "{F}"]),
    ("sr-apo-front", ["--summaries", "{F}", "-o", "{F}"]),
    ("sr-apo-compare", ["--front", "{G}", "--models", "{G}", "--data", "{F}", "--summary", "{F}"]),
    ("conformal-combine", ["--pvalues", "{F}", "--manifest", "{F}"]),
    ("bandit-bound", ["--instance", "{F}", "-o", "{F}"]),
    ("var-approx-pyramid", ["--input", "{F}", "-o", "{F}"]),
    ("sve-predict", ["--images", "{F}", "--model", "{G}", "--metrics", "{F}"]),
    ("dcgnn-explain", ["--model", "{G}", "--data", "{F}", "-o", "{F}"]),
    ("hygma-eval", ["--model", "{F}", "-o", "{F}"]),
    ("cogmath-generate", ["--source", "official:{F}", "-o", "{F}"]),  # a KIND:FILE source
]


@pytest.mark.parametrize("command, template", OVERWRITE_CASES, ids=[c[0] for c in OVERWRITE_CASES])
def test_an_output_naming_an_input_file_is_refused(command, template, pk, tmp_path):
    """Every command, one shared check before any work: an output option that names a file the command
    reads is a usage error and the file is untouched (conformal-cv -o train.csv had replaced the data)."""
    f, g = tmp_path / "in.dat", tmp_path / "other.dat"
    f.write_bytes(b"input bytes\n")
    g.write_bytes(b"other\n")
    r = pk(command, *[a.replace("{F}", str(f)).replace("{G}", str(g)) for a in template])
    assert r.exit_code == 2 and "is the input file" in r.stderr and str(f) in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and f.read_bytes() == b"input bytes\n"


def _finished_run(tmp_path, files):
    """A run dir as a finished command leaves it, moved since: its manifest lists the old paths."""
    import json

    run = tmp_path / "run"
    run.mkdir()
    for name in files:
        (run / name).write_bytes(b"artefact\n")
    listed = [{"path": f"/elsewhere/old-run/{name}", "bytes": 9} for name in files]
    (run / "manifest.json").write_text(json.dumps({"command": "x", "status": "complete", "outputs": listed}))
    return run


@pytest.mark.parametrize("command, name", [("pigdreamer-eval", "model.pt"), ("pigdreamer-compare", "summary.json"),
                                           ("cogmath-report", "summary.json"), ("hygma-plot", "curves.csv")])
def test_an_output_never_replaces_a_file_of_an_input_run_dir(command, name, pk, tmp_path):
    """pigdreamer-eval RUN -o RUN/model.pt replaced the model with its JSON result (exit 0)."""
    run = _finished_run(tmp_path, ["model.pt", "summary.json", "eval.jsonl", "curves.csv"])
    option = "--plot" if command == "cogmath-report" else "-o"
    r = pk(command, str(run), option, str(run / name))
    assert r.exit_code == 2 and "would replace a file of the run" in r.stderr, r.stderr
    assert (run / name).read_bytes() == b"artefact\n"


@pytest.mark.parametrize("command, args", [
    ("bandit-bound", ["-o", "{X}", "--summary", "{X}"]),
    ("pigdreamer-bound", ["-o", "{X}.png", "--plot", "{X}.png"]),
    ("cogmath-generate", ["--source", "synthetic:2", "-o", "{X}", "--manifest", "{X}"]),
])
def test_two_outputs_of_one_call_never_share_a_file(command, args, pk, tmp_path):
    """-o x --summary x kept only the summary (exit 0); now refused before anything is written."""
    x = tmp_path / "out.csv"
    r = pk(command, *[a.replace("{X}", str(x)) for a in args])
    assert r.exit_code == 2 and "give each output its own file" in r.stderr, r.stderr
    assert not list(tmp_path.iterdir())


def test_an_output_under_a_file_is_refused_before_any_work(pk, tmp_path):
    (tmp_path / "g.npz").write_bytes(b"x")
    r = pk("dcgnn-gen", "--n-graphs", "10", "-o", str(tmp_path / "g.npz" / "sub.npz"))
    assert r.exit_code == 2 and "is a file, not a folder" in r.stderr and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("command, args, option", [
    ("dcgnn-gen", ["--n-graphs", "10", "-o", "{D}/x.csv"], "--output"),          # wrote NPZ bytes into x.csv
    ("symeq-basis", ["--k", "2", "--l", "1", "--n", "3", "-o", "{D}/b.tsv"], "--output"),   # JSON in a .tsv
    ("symeq-basis", ["--k", "2", "--l", "1", "--n", "3", "--dense", "{D}/b.csv"], "--dense"),
    ("hygma-plot", ["{D}", "-o", "{D}/c.jpg"], "--output"),
    ("cogmath-report", ["{D}", "--plot", "{D}/p.txt"], "--plot"),
    ("pigdreamer-compare", ["{D}", "-o", "{D}/t.png", "--plot", "{D}/p.png"], "t.png"),  # the plot came first
])
def test_an_output_suffix_the_command_cannot_write_is_refused_first(command, args, option, pk, tmp_path):
    r = pk(command, *[a.replace("{D}", str(tmp_path)) for a in args])
    assert r.exit_code == 2 and option in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not list(tmp_path.iterdir())
