"""sr-apo-search / sr-apo-front / sr-apo-compare through the real entry point."""

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2)) * [1.0, 2.0]
    y = 1.5 * X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=40)
    path = tmp_path_factory.mktemp("data") / "toy.csv"
    lines = ["a,b,target"] + [f"{u!r},{v!r},{w!r}" for u, v, w in zip(X[:, 0].tolist(), X[:, 1].tolist(), y.tolist(), strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _search(pk, data_csv, run_dir, *extra):
    return pk("sr-apo-search", "--data", data_csv, "--head", "2", "--run-dir", run_dir, "-q", *extra)


def test_search_writes_summaries_front_plot_and_one_json_line(pk, data_csv, tmp_path):
    r = _search(pk, data_csv, tmp_path / "run", "--seeds", "11284,860", "--all-expressions", "--latex")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["expressions"] == 643 and out["runs"] == 2
    run = tmp_path / "run"
    for name in ("toy_LM_2_11284_summary.csv", "toy_LM_2_860_summary.csv", "front.csv", "front.png",
                 "manifest.json", "config.yaml", "all_expressions/toy_LM_2_11284.csv.gz"):
        assert (run / name).exists(), name
    head = (run / "toy_LM_2_11284_summary.csv").read_text().splitlines()[0]
    assert head == "EquationLength,EquationStructure,EquationLambda,EquationParameters,NumericalIterations,MSE,R2"
    front = (run / "front.csv").read_text()
    assert "latex" in front.splitlines()[0]
    r2 = [f["R2"] for f in out["front"]]
    assert r2 == sorted(r2) and len(set(r2)) == len(r2)  # strictly improving


def test_same_input_same_bytes(pk, data_csv, tmp_path):
    for d in ("a", "b"):
        assert _search(pk, data_csv, tmp_path / d).exit_code == 0
    for name in ("toy_LM_2_11284_summary.csv", "front.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_shards_merged_by_sr_apo_front_equal_the_unsharded_front(pk, data_csv, tmp_path):
    assert _search(pk, data_csv, tmp_path / "full").exit_code == 0
    for k in (1, 2, 3):
        assert _search(pk, data_csv, tmp_path / "shards" / f"s{k}", "--shard", f"{k}/3").exit_code == 0
    r = pk("sr-apo-front", "--summaries", tmp_path / "shards", "--feature-names", "a,b", "-o", tmp_path / "merged.csv")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "merged.csv").read_bytes() == (tmp_path / "full" / "front.csv").read_bytes()


def test_resume_continues_from_chunk_checkpoints(pk, data_csv, tmp_path):
    run = tmp_path / "run"
    assert _search(pk, data_csv, run, "--chunk-size", "100").exit_code == 0
    before = (run / "front.csv").read_bytes()
    (run / "manifest.json").unlink()  # as if interrupted after the last chunk checkpoints
    for f in sorted((run / "checkpoints").glob("*.json"))[-3:]:
        f.unlink()
    again = _search(pk, data_csv, run, "--chunk-size", "100")
    assert again.exit_code == 1 and "unfinished" in again.stderr
    r = _search(pk, data_csv, run, "--chunk-size", "100", "--resume")
    assert r.exit_code == 0, r.stderr
    assert (run / "front.csv").read_bytes() == before
    assert _search(pk, data_csv, run, "--chunk-size", "50", "--resume").exit_code == 1  # other parameters


def _write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("content,args,code,needle", [
    ("a,b,y\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", [], 3, "no target column 'target'"),
    ("a,b,target\n1,x,3\n2,1,4\n3,5,1\n4,4,2\n", [], 3, "non-numeric"),
    ("a,b,target\n1,7,3\n2,7,4\n3,7,1\n4,7,2\n", [], 3, "constant"),
    ("a,b,target\n1,2,3\n2,nan,4\n3,5,1\n4,4,2\n", [], 3, "NaN"),
    ("a,target\n1,3\n2,4\n", ["--head", "4"], 3, "at least 3 rows"),
    ("a,b,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--head", "0"], 2, "head"),
    ("a,b,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--head", "4", "--max-expressions", "1000"], 2, "raise --max-expressions"),
    ("a,b,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--shard", "4/3"], 2, "K <= N"),
    ("a,b,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--optimizers", "BFGS"], 2, "--engine scipy"),
    ("a,b,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--engine", "scipy", "--optimizers", "Adam"], 2, "unknown"),
    ("a,b,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--features", "c"], 3, "no feature column 'c'"),
    # the column named "1" is feature index 0: the name won silently over the index
    ("1,0,target\n1,2,3\n2,1,4\n3,5,1\n4,4,2\n", ["--features", "1", "--head", "1"], 3, "'1' is ambiguous"),
])
def test_bad_input_is_one_line_and_writes_nothing(pk, tmp_path, content, args, code, needle):
    data = _write(tmp_path / "d.csv", content)
    run = tmp_path / "run"
    r = pk("sr-apo-search", "--data", data, "--run-dir", run, *args)
    assert r.exit_code == code, r.stderr
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stdout == ""
    assert not run.exists()


def test_scheduler_without_distributed_is_a_usage_error(pk, data_csv, tmp_path, monkeypatch):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "distributed" else real_find_spec(name, *a))
    r = _search(pk, data_csv, tmp_path / "run", "--scheduler", "tcp://127.0.0.1:1")
    assert r.exit_code == 2 and "distributed" in r.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_search_on_a_local_dask_cluster_equals_the_local_search(pk, data_csv, tmp_path):
    """A real Dask scheduler and worker process fit the chunks; the outputs are the same bytes as a local run."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        r = _search(pk, data_csv, tmp_path / "dask", "--scheduler", cluster.scheduler_address)
        assert r.exit_code == 0, r.stderr
        # the worker really fitted the chunks (not a silent local fallback)
        assert "fit_expressions" in cluster.scheduler.task_prefixes
    assert _search(pk, data_csv, tmp_path / "local").exit_code == 0
    for name in ("toy_LM_2_11284_summary.csv", "front.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_scheduler_fails_before_the_run_dir_exists(pk, data_csv, tmp_path):
    pytest.importorskip("distributed")
    r = _search(pk, data_csv, tmp_path / "run", "--scheduler", f"tcp://127.0.0.1:{_free_port()}")
    assert r.exit_code == 1, r.stderr
    assert "cannot connect" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == "" and not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", ["../../escape", "../x", "/tmp/abs", "a/b", ".hidden", "a b"])
def test_name_cannot_leave_the_run_dir(pk, data_csv, tmp_path, name):
    run = tmp_path / "deep" / "run"
    r = _search(pk, data_csv, run, "--name", name)
    assert r.exit_code == 2, r.stderr
    assert "--name" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not run.exists()
    assert sorted(p.name for p in tmp_path.rglob("*")) == [], "something was written"


def test_data_file_stem_becomes_a_safe_name(pk, tmp_path, data_csv):
    odd = tmp_path / "my data (v2).csv"
    odd.write_bytes(data_csv.read_bytes())
    r = _search(pk, odd, tmp_path / "run")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["dataset"] == "my_data__v2_"
    assert (tmp_path / "run" / "my_data__v2__LM_2_11284_summary.csv").exists()


@pytest.mark.parametrize("seeds,needle", [("11284,x", "item 'x'"), ("-1", "item '-1'"), ("5,5", "item '5' is given twice"),
                                          ("4294967296", "item '4294967296'")])
def test_seeds_is_a_list_option(pk, data_csv, tmp_path, seeds, needle):
    r = _search(pk, data_csv, tmp_path / "run", "--seeds", seeds)
    assert r.exit_code == 2 and needle in r.stderr and "--seeds" in r.stderr
    assert not (tmp_path / "run").exists()


def test_resume_with_all_expressions_reuses_the_fit_stages(pk, data_csv, tmp_path):
    run = tmp_path / "run"
    args = ("--chunk-size", "200", "--all-expressions")
    assert _search(pk, data_csv, run, *args).exit_code == 0
    first = {p.name: p.read_bytes() for p in (run / "all_expressions").iterdir()}
    assert len(list((run / "checkpoints").glob("*_fit.npz"))) == 4  # 643 expressions in chunks of 200
    (run / "manifest.json").unlink()
    for p in sorted((run / "checkpoints").glob("*_fit.npz"))[-2:]:
        p.unlink()
    r = _search(pk, data_csv, run, *args, "--resume")
    assert r.exit_code == 0, r.stderr
    assert {p.name: p.read_bytes() for p in (run / "all_expressions").iterdir()} == first


def test_front_merge_reproduces_maxima_and_drops_non_improving_lengths(pk, tmp_path):
    cols = "EquationLength,EquationStructure,EquationLambda,EquationParameters,NumericalIterations,MSE,R2\n"
    rows = {  # (method, seed) -> {length: (R2, expr)}
        ("BFGS", 1): {1: (0.5, "xdata[0]"), 3: (0.6, "Mul(xdata[0],x[0])"), 5: (0.55, "Add(xdata[0],xdata[1])")},
        ("Powell", 2): {1: (0.4, "xdata[1]"), 3: (0.65, "Mul(xdata[1],x[0])"), 7: (0.9, "Sub(Mul(xdata[0],x[0]),x[1])")},
    }
    for (m, s), by in rows.items():
        text = cols + "".join(f'{L},"{e}","lambda x,xdata:{e}",,,{1 - r2},{r2}\n' for L, (r2, e) in by.items())
        _write(tmp_path / f"my_data_set_{m}_3_{s}_summary.csv", text)
    r = pk("sr-apo-front", "--summaries", str(tmp_path / "*_summary.csv"), "-o", "-")
    assert r.exit_code == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(g["length"], g["R2"], g["method"], g["seed"], g["dataset"]) for g in got] == [
        (1, 0.5, "BFGS", 1, "my_data_set"), (3, 0.65, "Powell", 2, "my_data_set"), (7, 0.9, "Powell", 2, "my_data_set")]
    bad = pk("sr-apo-front", "--summaries", str(tmp_path / "nothing*.csv"))
    assert bad.exit_code == 3 and "no such file" in bad.stderr


def test_compare_gaps(pk, tmp_path):
    front = _write(tmp_path / "front.csv", "length,R2\n1,0.5\n3,0.7\n7,0.9\n")
    models = _write(tmp_path / "models.csv", "algorithm,length,R2\ngplearn,5,0.6\nFFX,7,0.95\nFFX,1,0.5\n")
    r = pk("sr-apo-compare", "--front", front, "--models", models, "--plot", tmp_path / "c.png",
           "--summary", tmp_path / "s.csv", "-o", "-")
    assert r.exit_code == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(g["model"], g["front_length"], round(g["gap"], 12)) for g in got] == [
        ("gplearn", 3, 0.1), ("FFX", 7, -0.05), ("FFX", 1, 0.0)]
    assert (tmp_path / "c.png").stat().st_size > 1000
    bad = _write(tmp_path / "bad.csv", "algorithm,R2\nx,0.5\n")
    r = pk("sr-apo-compare", "--front", front, "--models", bad)
    assert r.exit_code == 3 and "no length column" in r.stderr


@pytest.mark.parametrize("front_text,needle", [
    ("length,R2\n1,0.5\n3,nan\n7,0.9\n", "rows 1, 0-based"),
    ("length,R2\n1,0.5\n3,0.7\n7,\n", "rows 2, 0-based"),
    ("length,R2\n1,0.5\n2.5,0.7\n7,0.9\n", "non-integer"),
])
def test_compare_refuses_front_rows_it_cannot_use(pk, tmp_path, front_text, needle):
    front = _write(tmp_path / "front.csv", front_text)
    models = _write(tmp_path / "models.csv", "algorithm,length,R2\ngplearn,5,0.6\n")
    r = pk("sr-apo-compare", "--front", front, "--models", models, "-o", tmp_path / "o.csv")
    assert r.exit_code == 3, r.stderr
    assert needle in r.stderr and "front.csv" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------- issue 29: the user's units, names and numbers
def _front(path):
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _data(data_csv):
    from paperkit.core.tables import read_table

    t = read_table(data_csv)
    return t.numeric(["a", "b"]), t.column("target")


def test_front_formula_is_in_the_data_units_and_names_with_exact_constants(pk, data_csv, tmp_path):
    import sympy  # the test's own trusted text; the library never parses formula text with sympy

    r = _search(pk, data_csv, tmp_path / "run")
    assert r.exit_code == 0, r.stderr
    X, y = _data(data_csv)
    rows = _front(tmp_path / "run" / "front.csv")
    summary = _front(tmp_path / "run" / "toy_LM_2_11284_summary.csv")
    by_structure = {s["EquationStructure"]: s for s in summary}
    a, b = sympy.symbols("a b", real=True)
    for row in rows:
        f = sympy.lambdify((a, b), sympy.sympify(row["formula"], locals={"a": a, "b": b}), "numpy")
        pred = np.broadcast_to(f(X[:, 0], X[:, 1]), y.shape)
        r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
        assert r2 == pytest.approx(float(row["R2"]), abs=1e-9), row  # the formula predicts y itself
        params = json.loads(row["parameters"])  # JSON, not a numpy repr
        assert isinstance(params, list) and all(isinstance(v, float) for v in params)
        s = by_structure[row["expression"]]
        assert np.array_equal(np.array(params), np.array(s["EquationParameters"].strip("[]").split(), dtype=float))
    scaling = json.loads((tmp_path / "run" / "standardisation.json").read_text())
    assert scaling["features"] == ["a", "b"] and scaling["ddof"] == 0
    assert scaling["y_std"] == pytest.approx(float(np.std(y)), rel=1e-15)
    out = json.loads(r.stdout)
    assert out["front"][-1]["formula"] == rows[-1]["formula"]


@pytest.mark.parametrize("fmt", ["python", "latex"])
def test_front_export_python_and_latex(pk, data_csv, tmp_path, fmt):
    assert _search(pk, data_csv, tmp_path / "run").exit_code == 0
    r = pk("sr-apo-front", "--summaries", tmp_path / "run", "--export", fmt, "-o", tmp_path / "f.csv")
    assert r.exit_code == 0, r.stderr
    rows = _front(tmp_path / "f.csv")
    if fmt == "latex":
        assert all(row["formula"] and "*" not in row["formula"] for row in rows)  # LaTeX: no Python operators
        return
    X, y = _data(data_csv)
    for row in rows:
        pred = eval(row["formula"], {"numpy": np, "a": X[:, 0], "b": X[:, 1]})  # our own output, in a test
        r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
        assert r2 == pytest.approx(float(row["R2"]), abs=1e-9)


def test_front_tolerance_keeps_float_noise_out_and_is_recorded(pk, tmp_path):
    from paperkit.methods.sr_apo.front import apo_front

    rows = [{"EquationLength": 3, "EquationStructure": "Add(xdata[0],x[0])", "R2": 0.9},
            {"EquationLength": 5, "EquationStructure": "Add(xdata[0],Mul(x[0],x[1]))", "R2": 0.9 + 2e-16}]
    assert list(apo_front(rows)) == [3]
    assert list(apo_front(rows, tolerance=0.0)) == [3, 5]  # the paper's bare strict rule
    d = tmp_path / "s"
    d.mkdir()
    (d / "ds_LM_3_1_summary.csv").write_text(
        "EquationLength,EquationStructure,EquationParameters,R2\n"
        "3,\"Add(xdata[0],x[0])\",[0.5],0.9\n"
        "5,\"Add(xdata[0],Mul(x[0],xdata[0]))\",[0.5],0.9000000000000002\n")
    r = pk("sr-apo-front", "--summaries", d, "-o", tmp_path / "f.csv")
    assert r.exit_code == 0, r.stderr
    assert "no standardisation.json for ds" in r.stderr  # says why the formula column is empty
    assert [row["length"] for row in _front(tmp_path / "f.csv")] == ["3"]
    manifest = json.loads((tmp_path / "f.csv.manifest.json").read_text())
    assert manifest["extra"]["front_rule"]["tolerance"] == 1e-12
    r = pk("sr-apo-front", "--summaries", d, "--tolerance", "0", "-o", tmp_path / "g.csv")
    assert [row["length"] for row in _front(tmp_path / "g.csv")] == ["3", "5"]


def test_failed_is_explained(pk, data_csv, tmp_path):
    r = _search(pk, data_csv, tmp_path / "run")
    out = json.loads(r.stdout)
    assert sum(out["failed_reasons"].values()) == out["failed"]
    assert set(out["failed_reasons"]) == {"non_finite_without_constants", "non_finite_at_every_start"}
    assert "NaN or infinite" in out["failed_note"]
    assert "never fitted" in pk("sr-apo-search", "--help").stdout


def test_count_up_front_and_dry_run_writes_nothing(pk, data_csv, tmp_path):
    r = pk("sr-apo-search", "--data", data_csv, "--head", "2", "--dry-run", "--run-dir", tmp_path / "run")
    assert r.exit_code == 0, r.stderr
    assert "643 expressions" in r.stderr and "= 643 fits" in r.stderr
    out = json.loads(r.stdout)
    assert out["dry_run"] is True and out["fits"] == 643 and out["expressions"] == 643
    assert out["estimated_seconds"] >= 0 and out["estimated_memory_mb"] > 0
    assert sum(out["by_length"].values()) == 643
    assert not (tmp_path / "run").exists()


def test_compare_reads_a_pysr_hall_of_fame_as_is_and_scores_it_safely(pk, data_csv, tmp_path):
    assert _search(pk, data_csv, tmp_path / "run").exit_code == 0
    hof = tmp_path / "hall_of_fame.csv"
    hof.write_text('Complexity,Loss,Equation\n'
                   '1,4.1,"x0"\n'
                   '5,0.9,"(x0 * 1.5) - square(x1)"\n'
                   '6,0.8,"1.5*a - b^2 + -0.01"\n'
                   '3,9.9,"x0 / (x1 - x1)"\n')
    r = pk("sr-apo-compare", "--front", tmp_path / "run" / "front.csv", "--models", hof)
    assert r.exit_code == 2 and "--data" in r.stderr  # Loss is not R²: it says how to score
    r = pk("sr-apo-compare", "--front", tmp_path / "run" / "front.csv", "--models", hof, "--data", data_csv,
           "--plot", tmp_path / "gaps.png")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    X, y = _data(data_csv)
    truth = 1.5 * X[:, 0] - X[:, 1] ** 2
    assert rows[1]["R2"] == pytest.approx(1 - np.sum((y - truth) ** 2) / np.sum((y - y.mean()) ** 2), abs=1e-12)
    assert [row["length"] for row in rows] == [1, 6, 9, 5]  # our node count, not the file's Complexity
    assert rows[1]["complexity"] == 5 and rows[1]["loss"] == 0.9 and rows[1]["scored_by"] == "paperkit"
    assert rows[3]["R2"] is None and rows[3]["gap"] is None  # NaN/inf on the data
    assert (tmp_path / "gaps.png").exists()


@pytest.mark.parametrize("equation,needle", [
    ("__import__('os').system('true')", "unexpected character"),
    ("x0.__class__", "unknown variable"),
    ("eval(x0)", "unknown function 'eval'"),
    ("(" * 300 + "x0" + ")" * 300, "nested more than"),
    ("x0 +", "unexpected end"),
])
def test_compare_refuses_equations_it_cannot_parse_without_running_them(pk, data_csv, tmp_path, equation, needle):
    import csv

    assert _search(pk, data_csv, tmp_path / "run").exit_code == 0
    with open(tmp_path / "hof.csv", "w", newline="") as f:
        csv.writer(f).writerows([["complexity", "loss", "equation"], [1, 1.0, "x0"], [3, 1.0, equation]])
    r = pk("sr-apo-compare", "--front", tmp_path / "run" / "front.csv", "--models", tmp_path / "hof.csv",
           "--data", data_csv)
    assert r.exit_code == 3 and needle in r.stderr and "row 1 (0-based)" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_equation_parser_matches_numpy_and_counts_nodes():
    from paperkit.methods.sr_apo.equation import evaluate_equation, parse_equation

    X = np.random.default_rng(0).uniform(0.5, 2.0, (50, 3))
    cases = {"-x0^2": -X[:, 0] ** 2, "2^-x1": 2.0 ** -X[:, 1], "x0 ** x1 ** 0.5": X[:, 0] ** (X[:, 1] ** 0.5),
             "exp(sin(x2)) / (x0 - -3.5e-1)": np.exp(np.sin(X[:, 2])) / (X[:, 0] + 0.35),
             "pow(x0, 2) + cube(x1) - inv(x2)": X[:, 0] ** 2 + X[:, 1] ** 3 - 1 / X[:, 2],
             "a * c": X[:, 0] * X[:, 2]}
    for text, want in cases.items():
        assert np.allclose(evaluate_equation(parse_equation(text, ["a", "b", "c"]), X), want), text
    assert parse_equation("(x0 * 1.5) - square(x1)").count() == 6
    assert parse_equation(" + ".join(["x0"] * 2000)).count() == 3999  # a long chain: no recursion limit
    assert np.allclose(evaluate_equation(parse_equation(" + ".join(["x0"] * 2000)), X), 2000 * X[:, 0])


def test_front_formula_from_data_when_there_is_no_standardisation_file(pk, data_csv, tmp_path):
    import shutil

    assert _search(pk, data_csv, tmp_path / "run").exit_code == 0
    (tmp_path / "bare").mkdir()
    shutil.copy(tmp_path / "run" / "toy_LM_2_11284_summary.csv", tmp_path / "bare")  # as the published fronts
    r = pk("sr-apo-front", "--summaries", tmp_path / "bare", "--data", data_csv, "-o", tmp_path / "f.csv")
    assert r.exit_code == 0, r.stderr
    want = [row["formula"] for row in _front(tmp_path / "run" / "front.csv")]
    assert [row["formula"] for row in _front(tmp_path / "f.csv")] == want


def test_equation_variable_that_is_also_another_columns_name_is_refused():
    """Columns named x1, x2 (x1 is feature 0) against PySR's x0, x1 (features by position): x1 would mean
    two columns, and reading it as the column scored 3*x0*x1 + 1 at R² -0.26 instead of 1. Refused, named;
    columns x0, x1, ... in order agree with positions and stay accepted."""
    from paperkit.methods.sr_apo.equation import evaluate_equation, parse_equation

    X = np.random.default_rng(0).uniform(0.5, 2.0, (20, 2))
    with pytest.raises(ValueError, match="'x1' is ambiguous"):
        parse_equation("3.0*x0*x1 + 1.0", ["x1", "x2"])
    assert np.allclose(evaluate_equation(parse_equation("3.0*x0*x1", ["x0", "x1"]), X), 3 * X[:, 0] * X[:, 1])
    assert np.allclose(evaluate_equation(parse_equation("2 * x0", ["x1", "x2"]), X), 2 * X[:, 0])  # x0: no such column


def test_front_refuses_outputs_over_the_files_it_reads_and_skips_its_own_manifests(pk, data_csv, tmp_path):
    """--plot on the standardisation.json beside the summaries turned it into a PNG (exit 0), and a folder scan
    read the <name>_summary.csv.manifest.json written beside an earlier -o as a summary (exit 3)."""
    import shutil

    assert _search(pk, data_csv, tmp_path / "apo").exit_code == 0
    run = tmp_path / "s"  # a plain folder of summaries (not a run dir: no manifest lists its files)
    run.mkdir()
    for name in ("toy_LM_2_11284_summary.csv", "standardisation.json"):
        shutil.copy(tmp_path / "apo" / name, run)
    before = (run / "standardisation.json").read_bytes()
    for opt, path in (("--plot", run / "standardisation.json"), ("-o", run / "toy_LM_2_11284_summary.csv")):
        args = ["-o", tmp_path / "f.csv"] if opt == "--plot" else []
        r = pk("sr-apo-front", "--summaries", run, opt, path, *args)
        # --plot on a .json is now refused for its suffix before anything else looks at it
        why = "expected a .png file" if opt == "--plot" else "is the input file"
        assert r.exit_code == 2 and why in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert (run / "standardisation.json").read_bytes() == before and not (tmp_path / "f.csv").exists()
    (run / "sub").mkdir()
    (run / "sub" / "old_LM_2_1_summary.csv.manifest.json").write_text("{}")
    (run / "old_LM_2_1_summary.csv.bak").write_text("junk")
    for summaries in (run, str(run / "*")):
        r = pk("sr-apo-front", "--summaries", summaries, "-o", tmp_path / "g.csv")
        assert r.exit_code == 0, r.stderr


def test_front_data_is_used_only_where_there_is_no_standardisation_file(pk, data_csv, tmp_path):
    """--help: --data is used when there is no standardisation.json; it used to override the run's own file."""
    assert _search(pk, data_csv, tmp_path / "run").exit_code == 0
    other = _write(tmp_path / "other.csv", "a,b,target\n1,2,30\n2,5,40\n5,1,60\n7,3,10\n")
    r = pk("sr-apo-front", "--summaries", tmp_path / "run", "--data", other, "-o", tmp_path / "f.csv")
    assert r.exit_code == 0, r.stderr
    want = [row["formula"] for row in _front(tmp_path / "run" / "front.csv")]
    assert [row["formula"] for row in _front(tmp_path / "f.csv")] == want


def test_compare_refuses_an_empty_models_table_and_a_falling_front(pk, tmp_path):
    """A header-only models table gave exit 0 and an empty file; a "front" whose R² falls with length gave
    wrong negative gaps (length 3 read as 0.5 although length 1 reaches 0.9)."""
    front = _write(tmp_path / "front.csv", "length,R2\n1,0.5\n3,0.7\n")
    empty = _write(tmp_path / "m_empty.csv", "model,length,R2\n")
    r = pk("sr-apo-compare", "--front", front, "--models", empty, "-o", tmp_path / "e.csv")
    assert r.exit_code == 3 and "m_empty.csv: no model rows" in r.stderr, r.stderr
    assert not (tmp_path / "e.csv").exists()
    falling = _write(tmp_path / "front_bad.csv", "length,R2\n3,0.5\n1,0.9\n")
    models = _write(tmp_path / "models.csv", "model,length,R2\nA,1,0.5\nB,3,0.8\n")
    r = pk("sr-apo-compare", "--front", falling, "--models", models, "-o", tmp_path / "g.csv")
    assert r.exit_code == 3 and "front_bad.csv" in r.stderr and "length 3" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "g.csv").exists()


def test_compare_leaves_the_gap_empty_for_an_equation_that_is_nan_on_the_data(pk, data_csv, tmp_path):
    """--help: such an equation gets an empty R2 and gap; the CSV said gap=nan (and the summary mean nan)."""
    import csv

    front = _write(tmp_path / "front.csv", "length,R2\n1,0.5\n3,0.7\n")
    hof = _write(tmp_path / "hof.csv", "Complexity,Loss,Equation\n1,0.1,log(a-50)\n3,0.05,a/0\n")
    r = pk("sr-apo-compare", "--front", front, "--models", hof, "--data", data_csv, "-o", tmp_path / "n.csv",
           "--summary", tmp_path / "s.csv")
    assert r.exit_code == 0, r.stderr
    with open(tmp_path / "n.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(row["R2"], row["gap"]) for row in rows] == [("", ""), ("", "")]
    with open(tmp_path / "s.csv", newline="") as f:
        assert all(row["mean_gap"] == "" for row in csv.DictReader(f))


def test_resume_refuses_an_input_edited_in_place(pk, data_csv, tmp_path):
    """Every run-dir command pins the files it reads by sha256: sr-apo-search --resume after the data changed
    under the same name kept the old fits and wrote formulas from the new standardisation (found by an audit).
    A run made before inputs were hashed still resumes."""
    import shutil

    import yaml

    data, run = tmp_path / "d.csv", tmp_path / "run"
    shutil.copy(data_csv, data)
    assert _search(pk, data, run).exit_code == 0
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert set(config["inputs_sha256"]) == {"data"}
    (run / "manifest.json").unlink()
    lines = data.read_text().splitlines()
    data.write_text("\n".join([lines[0], *lines[2:], lines[1]]) + "\n")   # same rows, another order
    r = _search(pk, data, run, "--resume")
    assert r.exit_code == 1 and "inputs_sha256" in r.stderr, r.stderr
    del config["inputs_sha256"]
    (run / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copy(data_csv, data)
    r = _search(pk, data, run, "--resume")
    assert r.exit_code == 0, r.stderr


def test_a_constant_column_is_named_with_its_plain_value(pk, tmp_path):
    data = tmp_path / "c.csv"
    data.write_text("x1,x2,y\n1,2,5\n4,2,5\n7,2,5\n1,2,4\n")
    r = pk("sr-apo-search", "--data", data, "--target", "y", "--head", "1", "--run-dir", tmp_path / "r")
    assert r.exit_code == 3 and "column 'x2' is constant (2);" in r.stderr, r.stderr   # was np.float64(2.0)
