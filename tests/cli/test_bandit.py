"""bandit-sim / bandit-sweep / bandit-bound through the real entry point: outputs, determinism, bad input."""

import json

import pytest

from paperkit.core.io import read_json
from paperkit.core.tables import read_table

FAST = ["--horizon", "3000", "--runs", "3", "-q"]


def test_sim_writes_the_run_dir_and_ranks(pk, tmp_path):
    d = tmp_path / "run"
    r = pk("bandit-sim", *FAST, "--algos", "decofusion,elimfusion,ucb,rucb", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)  # stdout: exactly one JSON line
    assert len(r.stdout.strip().splitlines()) == 1
    assert [x["algo"] for x in summary["ranking"]][0] == "decofusion"
    for name in ("regret.csv", "final.json", "instance.yaml", "regret.png", "manifest.json", "config.yaml"):
        assert (d / name).exists(), name
    table = read_table(d / "regret.csv")
    assert set(table.columns) >= {"algo", "t", "regret_mean", "regret_std", "reward_regret_mean",
                                  "duel_regret_mean"}
    final = read_json(d / "final.json")
    assert final["lower_bound_constant"] > 0 and len(final["ranking"]) == 4
    means = [x["regret_mean"] for x in final["ranking"]]
    assert means == sorted(means)


def test_same_seed_same_bytes_and_resume(pk, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    args = [*FAST, "--algos", "decofusion,med-nofusion", "--seed", "5"]
    assert pk("bandit-sim", *args, "--run-dir", a).exit_code == 0
    assert pk("bandit-sim", *args, "--jobs", "1", "--run-dir", b).exit_code == 0
    for name in ("regret.csv", "final.json", "instance.yaml"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    # a finished run is not overwritten; --resume reuses the checkpoints and gives the same bytes
    assert pk("bandit-sim", *args, "--run-dir", a).exit_code == 1
    before = (a / "regret.csv").read_bytes()
    (a / "manifest.json").unlink()
    assert pk("bandit-sim", *args, "--run-dir", a, "--resume").exit_code == 0
    assert (a / "regret.csv").read_bytes() == before


def test_instance_file_and_bound(pk, tmp_path):
    inst = tmp_path / "inst.yaml"
    inst.write_text("means: [0.9, 0.6, 0.5]\npreference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]\n")
    r = pk("bandit-bound", "--instance", inst, "--alpha", "0.3", "--horizon", "1000")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["arm"] for x in rows] == [1, 2]  # 0-based: arm 0 is the best
    d = tmp_path / "sim"
    assert pk("bandit-sim", "--instance", inst, *FAST, "--run-dir", d).exit_code == 0


def test_bound_writes_inf_and_fills_every_column(pk, tmp_path):
    """An arm whose mean ties the best one has an infinite reward cost: 'inf', never null/empty cells."""
    inst = tmp_path / "tie.yaml"
    inst.write_text("means: [0.9, 0.9, 0.5]\npreference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]\n")
    r = pk("bandit-bound", "--instance", inst, "--horizon", "1000")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert "null" not in r.stdout
    assert rows[0]["reward_cost"] == "inf"
    arms = rows
    # the tied arm costs a reward-only learner nothing: its no-fusion term is its dueling cost
    assert arms[0]["no_fusion_cost"] == arms[0]["duel_cost"]
    assert pk("bandit-bound", "--instance", inst, "--horizon", "1000", "-o", tmp_path / "b.csv").exit_code == 0
    total = json.loads((tmp_path / "b.csv.summary.json").read_text())
    assert total["reward_cost_sum"] == "inf"
    for col, key in (("cost", "lower_bound_constant"), ("no_fusion_cost", "no_fusion_constant"),
                     ("bound_at_T", "lower_bound_at_T")):
        assert total[key] == pytest.approx(sum(x[col] for x in arms)), col
    table = read_table(tmp_path / "b.csv")
    assert ",," not in (tmp_path / "b.csv").read_text().splitlines()[1]  # per-arm rows have no empty cells
    assert table.column("reward_cost")[0] == float("inf")


def test_resume_refuses_an_edited_instance_and_manifest_lists_its_csv(pk, tmp_path):
    csv = tmp_path / "nu.csv"
    csv.write_text("0.5,0.7,0.8\n0.3,0.5,0.6\n0.2,0.4,0.5\n")
    inst = tmp_path / "inst.yaml"
    inst.write_text("means: [0.9, 0.6, 0.5]\npreference: nu.csv\n")
    d = tmp_path / "sim"
    args = ["--instance", inst, *FAST, "--algos", "decofusion", "--run-dir", d]
    assert pk("bandit-sim", *args).exit_code == 0
    listed = {x["path"] for x in read_json(d / "manifest.json")["inputs"]}
    assert listed == {str(inst), str(csv)}
    (d / "manifest.json").unlink()
    assert pk("bandit-sim", *args, "--resume").exit_code == 0  # unchanged files: resumes
    (d / "manifest.json").unlink()
    csv.write_text("0.5,0.8,0.8\n0.2,0.5,0.6\n0.2,0.4,0.5\n")  # still valid, different numbers
    r = pk("bandit-sim", *args, "--resume")
    assert r.exit_code == 1 and "instance_sha256" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = pk("bandit-bound", "--instance", inst, "-o", tmp_path / "b.csv")
    assert r.exit_code == 0
    assert {x["path"] for x in read_json(tmp_path / "b.csv.manifest.json")["inputs"]} == {str(inst), str(csv)}


def test_sweep_writes_csv_and_png(pk, tmp_path):
    d = tmp_path / "sw"
    r = pk("bandit-sweep", "--sweep", "pref-gap", "--values", "0.05,0.1", "--algos", "decofusion,elimfusion",
           *FAST, "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    rows = read_table(d / "sweep.csv")
    assert len(rows.column("value")) == 4 and (d / "sweep.png").exists()


BAD_NU = "[[0.5, 0.7, 0.8], [0.4, 0.5, 0.6], [0.2, 0.4, 0.5]]"


@pytest.mark.parametrize("args, code, words", [
    (["--alpha", "1.5"], 2, "alpha"),
    (["--algos", "decofusion,thompson"], 2, "thompson"),
    (["--horizon", "0"], 2, "horizon"),
    (["--runs", "0"], 2, "runs"),
    (["--preset", "nope"], 2, "unknown preset"),
    (["--preset", "official16", "--instance", "x.yaml"], 2, "mutually exclusive"),
    (["--instance", "missing.yaml"], 3, "missing.yaml"),
    # NaN and inf are refused by the option types; the checks run before the run dir is made
    (["--f-coef", "nan"], 2, "--f-coef"),
    (["--f-coef", "inf"], 2, "--f-coef"),
    (["--delta", "nan"], 2, "delta"),
    (["--alpha", "nan"], 2, "alpha"),
])
def test_bad_options(pk, tmp_path, args, code, words):
    d = tmp_path / "out"
    r = pk("bandit-sim", *FAST, *args, "--run-dir", d)
    assert r.exit_code == code, r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    assert not d.exists()


@pytest.mark.parametrize("body, words", [
    ("means: [0.9, 0.6, 0.5]\npreference: [[0.5, 0.7], [0.3, 0.5]]\n", "there are 3 means"),
    ("means: [0.9, 0.6, 0.5]\npreference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6]]\n", "square"),
    ("means: [0.9, 0.6, 0.5]\npreference: " + BAD_NU + "\n", "preference[0,1] + preference[1,0]"),
    ("means: [0.9, 0.6, 0.5]\npreference: [[0.5, 0.7, 0.3], [0.3, 0.5, 0.6], [0.7, 0.4, 0.5]]\n", "Condorcet"),
    ("means: [0.9, 1.6, 0.5]\npreference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]\n", "means[1] = 1.6"),
    ("means: [0.9, 0.6, 0.5]\n", "exactly one"),
    # values that are not numbers: exit 3 naming the file and key, not a traceback
    ("means: [0.9, 0.6, 0.5]\nwins: [[0, 3, 4], [1, 0, 2], [1, 1, 0]]\nprior: abc\n", "prior = 'abc'"),
    ("means: [0.9, 0.6, 0.5]\nwins: [[0, 3, 4], [1, 0, 2], [1, 1, 0]]\nprior: -1\n", "prior = -1.0"),
    ("means: [0.9, 0.6, 0.5]\npreference: bradley-terry\nscale: foo\n", "scale = 'foo'"),
    ("means: [0.9, 0.6, 0.5]\npreference: bradley-terry\nscale: .nan\n", "scale = nan"),
    ("means: [0.9, 0.6, 0.5]\npreference: bradley-terry\nutilities: [a, b, c]\n", "utilities = ['a'"),
    ("means: [0.9, 0.6, 0.5]\nwins: [[0, 3, x], [1, 0, 2], [1, 1, 0]]\n", "wins = [[0, 3, 'x']"),
    ("means: [0.9, 0.6, 0.5]\nwins: [[0, 3], [1, 0, 2], [1, 1, 0]]\n", "rows of equal length"),
    ("means: [0.9, abc, 0.5]\npreference: bradley-terry\n", "means = [0.9, 'abc'"),
    ("means: [0.9, 0.6, 0.5]\npreference: empty.csv\n", "empty.csv: empty file"),
    ("means: [0.9, 0.6, 0.5]\npreference: bad.csv\n", "column '3' has 1 non-numeric value(s) (data rows 1, 0-based"),
])
def test_bad_instances(pk, tmp_path, body, words):
    inst = tmp_path / "inst.yaml"
    inst.write_text(body)
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "bad.csv").write_text("0.5,0.6,0.7\n0.4,0.5,zz\n0.3,0.4,0.5\n")
    for cmd, extra in (("bandit-bound", []), ("bandit-sim", [*FAST, "--run-dir", tmp_path / "o"])):
        r = pk(cmd, "--instance", inst, *extra)
        assert r.exit_code == 3, r.stderr
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
        assert "inst.yaml" in r.stderr or ".csv" in r.stderr  # names the file
    assert not (tmp_path / "o").exists()


def test_one_round_runs_with_the_default_delta(pk, tmp_path):
    """T = 1 makes the default delta 1/T = 1: accepted (log(K·t/δ) > 0), no half-made run dir."""
    d = tmp_path / "t1"
    r = pk("bandit-sim", "--horizon", "1", "--runs", "2", "-q", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["T"] == 1 and (d / "manifest.json").exists()
    r = pk("bandit-sweep", "--sweep", "alpha", "--values", "0.5", "--horizon", "1", "--runs", "1", "-q",
           "--run-dir", tmp_path / "s1")
    assert r.exit_code == 0, r.stderr


def test_sweep_bad_values(pk, tmp_path):
    r = pk("bandit-sweep", "--sweep", "alpha", "--values", "0.2,1.4", "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and "1.4" in r.stderr
    r = pk("bandit-sweep", "--sweep", "reward-gap", "--values", "a,b", "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and "--values" in r.stderr
    r = pk("bandit-sweep", "--sweep", "reward-gap", "--values", "inf", "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and "'inf' is not a finite number" in r.stderr
    r = pk("bandit-sweep", "--sweep", "reward-gap", "--values", "-0.1", "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and "gap = -0.1" in r.stderr
    r = pk("bandit-sweep", "--sweep", "alpha", "--f-coef", "nan", "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and "--f-coef" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("kind, words", [("reward-gap", "arm 1 is"), ("pref-gap", "arm 1 has")])
def test_gap_sweep_needs_the_best_arm_first(pk, tmp_path, kind, words):
    inst = tmp_path / "w2.yaml"
    inst.write_text("means: [0.6, 0.9, 0.5]\npreference: [[0.5, 0.3, 0.6], [0.7, 0.5, 0.8], [0.4, 0.2, 0.5]]\n")
    r = pk("bandit-sweep", "--sweep", kind, "--values", "0.1", "--instance", inst, *FAST, "--run-dir", tmp_path / "s")
    assert r.exit_code == 3 and words in r.stderr and "w2.yaml" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "s").exists()


@pytest.mark.parametrize("cmd", ["bandit-sim", "bandit-sweep"])
@pytest.mark.parametrize("args, words", [
    (["--horizon", "100000000000000000000"], "--horizon"),
    (["--horizon", "1e20"], "--horizon"),
    (["--horizon", "1000000001"], "--horizon"),
    (["--runs", "100000000000"], "--max-memory-gb"),
    (["--runs", "1000", "--max-memory-gb", "0.00001"], "--max-memory-gb"),
])
def test_absurd_sizes_are_refused_up_front(pk, tmp_path, cmd, args, words):
    """A horizon past the bound or a run count whose results cannot fit in memory: exit 2 before anything
    is allocated or any run dir is made, one line naming the option (no OverflowError or MemoryError)."""
    d = tmp_path / "big"
    extra = ["--sweep", "alpha", "--values", "0.5"] if cmd == "bandit-sweep" else []
    r = pk(cmd, *extra, *FAST, *args, "--run-dir", d)
    assert r.exit_code == 2, r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    assert not d.exists()
    if "--max-memory-gb" in r.stderr and "100000000000" in args:
        assert "TiB" in r.stderr or "PiB" in r.stderr  # names the estimate


@pytest.mark.parametrize("spec, words", [
    ("nope", "unknown preset"),
    ("pref-gap:1e308", "out of range"),
    ("reward-gap:1e308", "out of range"),
    ("bradley-terry:1e308", "out of range"),
    ("pref-gap:0", "out of range"),
    ("pref-gap:nan", "out of range"),
    ("reward-gap:abc", "not a number"),
])
def test_bad_preset_is_a_usage_error_without_warnings(pk, spec, words):
    """A bad --preset is a bad option value: exit 2, and stderr is exactly one error line (a huge gap
    used to leak numpy overflow RuntimeWarnings; warnings are turned into errors here to catch any)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = pk("bandit-bound", "--preset", spec)
    assert r.exit_code == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("paperkit bandit-bound: error:") and words in lines[0]
    assert r.stdout == ""


@pytest.mark.parametrize("spec", ["reward-gap:0.9", "pref-gap:0.5", "bradley-terry:1000"])
def test_presets_at_the_end_of_their_range(pk, spec):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = pk("bandit-bound", "--preset", spec, "--horizon", "1000")
    assert r.exit_code == 0 and r.stderr.startswith("C(alpha) = ") and len(r.stderr.splitlines()) == 1, r.stderr
    assert len(r.stdout.splitlines()) == 15  # 15 suboptimal arms; the totals are on stderr and in a summary


def test_instance_from_stdin(pk, tmp_path):
    body = "means: [0.9, 0.6, 0.5]\npreference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]\n"
    (tmp_path / "inst.yaml").write_text(body)
    from_file = pk("bandit-bound", "--instance", tmp_path / "inst.yaml")
    r = pk("bandit-bound", "--instance", "-", input=body)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == from_file.stdout and len(r.stdout.splitlines()) == 2
    r = pk("bandit-bound", "--instance", "-", input="means: [0.9, 1.6]\npreference: [[0.5, 0.7], [0.3, 0.5]]\n")
    assert r.exit_code == 3 and "<stdin>" in r.stderr and "means[1]" in r.stderr
    d = tmp_path / "sim"
    r = pk("bandit-sim", "--instance", "-", *FAST, "--algos", "decofusion", "--run-dir", d, input=body)
    assert r.exit_code == 0, r.stderr
    assert "instance_sha256" in (d / "config.yaml").read_text()


def test_quiet_on_the_group_silences_the_table(pk, tmp_path):
    args = ["bandit-sim", "--horizon", "300", "--runs", "2", "--algos", "decofusion"]
    loud = pk(*args, "--run-dir", tmp_path / "a")
    assert loud.exit_code == 0 and "lower bound C(alpha)" in loud.stderr
    quiet = pk("-q", *args, "--run-dir", tmp_path / "b")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert json.loads(quiet.stdout)["ranking"] == json.loads(loud.stdout)["ranking"]


def test_resume_recomputes_only_missing_stages(pk, tmp_path):
    """Each algorithm is one stage of the run dir: a resumed run loads the finished ones."""
    d = tmp_path / "r"
    args = [*FAST, "--algos", "decofusion,ucb", "--run-dir", d]
    assert pk("bandit-sim", *args).exit_code == 0
    before = (d / "regret.csv").read_bytes()
    ckpts = sorted(p.name for p in (d / "checkpoints").iterdir())
    assert ckpts == ["decofusion.npz", "ucb.npz"]
    (d / "manifest.json").unlink()
    (d / "checkpoints" / "ucb.npz").unlink()
    stamp = (d / "checkpoints" / "decofusion.npz").stat().st_mtime_ns
    assert pk("bandit-sim", *args, "--resume").exit_code == 0
    assert (d / "checkpoints" / "decofusion.npz").stat().st_mtime_ns == stamp  # loaded, not rewritten
    assert (d / "regret.csv").read_bytes() == before


def test_cli_algorithm_names_match_the_kernels():
    from paperkit.methods.bandit import kernels
    from paperkit_cli.commands import _bandit_common

    assert set(_bandit_common.ALGORITHMS) == set(kernels.ALGORITHMS)
    from paperkit.methods.bandit.run import MAX_HORIZON

    assert _bandit_common.MAX_HORIZON == MAX_HORIZON


@pytest.mark.slow
def test_console_script_subprocess(pk_bin, tmp_path):
    r = pk_bin("bandit-bound", "--preset", "pref-gap:0.05", "-o", "-")
    assert r.exit_code == 0 and r.stdout.count("\n") == 15  # one row per suboptimal arm; totals on stderr
    r = pk_bin("bandit-sim", "--horizon", "2000", "--runs", "2", "--algos", "decofusion", "--run-dir", tmp_path / "r")
    assert r.exit_code == 0 and json.loads(r.stdout)["ranking"][0]["algo"] == "decofusion"


# ------------------------------------------------------------------------------ issue 29: usability
NAMED = ("names: [gpt, llama, qwen]\nmeans: [0.9, 0.6, 0.5]\n"
         "preference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]\n")


@pytest.mark.parametrize("cmd", ["bandit-sim", "bandit-sweep", "bandit-bound"])
def test_help_shows_the_instance_schema_and_the_index_convention(pk, cmd):
    text = pk(cmd, "--help").stdout
    assert "names: [a, b, c]" in text and "preference:" in text and "wins:" in text
    assert "numbered from 0" in " ".join(text.split())


def test_the_schema_in_help_loads_and_names_every_key_the_reader_accepts():
    import yaml

    from paperkit.methods.bandit.instances import INSTANCE_KEYS, instance_from_mapping
    from paperkit_cli.commands._bandit_common import INSTANCE_SCHEMA

    assert all(f"{key}:" in INSTANCE_SCHEMA for key in INSTANCE_KEYS)
    inst = instance_from_mapping(yaml.safe_load(INSTANCE_SCHEMA))
    assert inst.names == ("a", "b", "c") and inst.best == 0


def test_arm_names_are_used_in_tables_and_outputs(pk, tmp_path):
    inst = tmp_path / "named.yaml"
    inst.write_text(NAMED)
    r = pk("bandit-bound", "--instance", inst, "--format", "csv")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("arm,name,reward_cost,duel_cost,duel_partner,duel_partner_name,")
    assert lines[1].startswith("1,llama,") and ",0,gpt," in lines[1] and lines[2].startswith("2,qwen,")
    assert "best arm 0 'gpt'" in r.stderr
    d = tmp_path / "sim"
    r = pk("bandit-sim", "--instance", inst, *FAST, "--algos", "decofusion", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    assert read_json(d / "final.json")["best_arm_name"] == "gpt"
    assert "names" in (d / "instance.yaml").read_text()


@pytest.mark.parametrize("names, words", [
    ("[a, b]", "names has 2 entries but there are 3 means"),
    ("[a, b, a]", "'a' is given twice"),
    ("[a, '', c]", "names[1] = ''"),
    ("gpt", "expected a list of 3 arm names"),
])
def test_bad_arm_names_are_one_line(pk, tmp_path, names, words):
    inst = tmp_path / "bad.yaml"
    inst.write_text(NAMED.replace("[gpt, llama, qwen]", names))
    r = pk("bandit-bound", "--instance", inst)
    assert r.exit_code == 3 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_messages_name_arms_from_0(pk, tmp_path):
    inst = tmp_path / "w.yaml"
    inst.write_text("names: [x, y, z]\nmeans: [0.6, 0.9, 0.5]\n"
                    "preference: [[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]]\n")
    r = pk("bandit-bound", "--instance", inst)
    assert r.exit_code == 3 and "the Condorcet winner, arm 0 ('x'), has mean 0.6" in r.stderr
    assert "(arm 1 ('y'))" in r.stderr


def test_bound_rows_are_all_arms_and_totals_go_to_a_summary(pk, tmp_path):
    out = tmp_path / "bound.csv"
    r = pk("bandit-bound", "--preset", "official16", "--horizon", "1000", "-o", out, "-q")
    assert r.exit_code == 0 and r.stderr == "", r.stderr
    table = read_table(out)
    assert list(table.column("arm")) == list(range(1, 16))  # one integer type: no 'total' row
    summary = json.loads((tmp_path / "bound.csv.summary.json").read_text())
    assert summary["lower_bound_constant"] == pytest.approx(sum(table.column("cost")))
    assert summary["best_arm"] == 0 and summary["horizon"] == 1000
    assert str(tmp_path / "bound.csv.summary.json") in {x["path"] for x in read_json(out.with_name("bound.csv.manifest.json"))["outputs"]}
    custom = tmp_path / "totals.json"
    assert pk("bandit-bound", "--preset", "official16", "--summary", custom).exit_code == 0
    assert json.loads(custom.read_text())["lower_bound_at_T"] is None


def test_sweep_yscale(pk, tmp_path):
    from paperkit.methods.bandit.plots import sweep_figure

    rows = [{"algo": "decofusion", "value": v, "regret_mean": 10.0 * v, "regret_sem": 1.0, "lower_bound": 1.0}
            for v in (0.1, 0.2)]
    assert sweep_figure(rows, "reward-gap").axes[0].get_yscale() == "log"
    assert sweep_figure(rows, "reward-gap", yscale="linear").axes[0].get_yscale() == "linear"
    assert sweep_figure(rows, "alpha").axes[0].get_yscale() == "linear"
    assert sweep_figure(rows, "alpha", yscale="log").axes[0].get_yscale() == "log"
    d = tmp_path / "sw"
    r = pk("bandit-sweep", "--sweep", "alpha", "--values", "0.5", "--yscale", "log", *FAST, "--run-dir", d)
    assert r.exit_code == 0 and (d / "sweep.png").exists(), r.stderr
    r = pk("bandit-sweep", "--sweep", "alpha", "--values", "0.5", "--yscale", "cubic", *FAST, "--run-dir", tmp_path / "x")
    assert r.exit_code == 2 and "--yscale" in r.stderr


@pytest.mark.parametrize("cmd", ["bandit-sim", "bandit-sweep"])
def test_absurd_total_work_is_refused_up_front(pk, tmp_path, cmd):
    """runs × horizon × algorithms of 10^16 rounds fitted the memory check (it counts regret points, not
    rounds) and ran until killed, leaving a run dir."""
    extra = ["--sweep", "alpha", "--values", "0.5"] if cmd == "bandit-sweep" else ["--points", "2"]
    r = pk(cmd, *extra, "--horizon", "1000000000", "--runs", "10000000", "--algos", "ucb", "-q",
           "--run-dir", tmp_path / "big")
    assert r.exit_code == 2, r.stderr
    assert "--runs 10000000 × --horizon 1000000000" in r.stderr and "1e+16" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == "" and not (tmp_path / "big").exists()


@pytest.mark.parametrize("sweep, values, words", [
    ("reward-gap", "0.1,5", "reward-gap = 5.0 is out of range; expected values in (0, 0.9]"),
    ("pref-gap", "7", "pref-gap = 7.0 is out of range; expected values in (0, 0.5]"),
    ("pref-gap", "0.51", "(0, 0.5]"),
    ("alpha", "0.5,0.5", "0.5 is given twice"),
    ("reward-gap", "0.1,0.2,0.1", "0.1 is given twice"),
])
def test_sweep_values_out_of_the_preset_ranges_or_repeated_are_refused(pk, tmp_path, sweep, values, words):
    r = pk("bandit-sweep", "--sweep", sweep, "--values", values, *FAST, "--run-dir", tmp_path / "s")
    assert r.exit_code == 2 and words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "s").exists()


def test_sweep_values_at_the_end_of_the_preset_ranges_run(pk, tmp_path):
    r = pk("bandit-sweep", "--sweep", "pref-gap", "--values", "0.5", "--algos", "ucb", "--horizon", "50",
           "--runs", "2", "-q", "--run-dir", tmp_path / "s")
    assert r.exit_code == 0, r.stderr
