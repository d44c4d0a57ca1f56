"""disempower-* commands: outputs, same seed same bytes, exit codes for bad input."""

import json

import pytest


def test_sim_writes_outputs_and_is_reproducible(pk, tmp_path):
    out = []
    for name in ("a", "b"):
        r = pk("disempower-sim", "--scenario", "late_mitigation", "--horizon", "30", "--irreversibility-years", "5",
               "--run-dir", tmp_path / name, "-q")
        assert r.exit_code == 0, r.stderr
        line = json.loads(r.stdout)
        assert line["scenario"] == "late_mitigation"
        out.append(tmp_path / name)
    for f in ("trajectories.csv", "summary.json"):
        assert (out[0] / f).read_bytes() == (out[1] / f).read_bytes()
    for f in ("systems.png", "hii_vs_welfare.png", "manifest.json"):
        assert (out[0] / f).is_file()
    header = (out[0] / "trajectories.csv").read_text().splitlines()[0].split(",")
    for col in ("t", "c", "a_econ", "I_state", "X_culture", "A_econ", "LS", "Y", "C_H", "HII", "K", "active"):
        assert col in header


def test_sim_abm_mode_same_seed_same_bytes(pk, tmp_path):
    runs = []
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        r = pk("disempower-sim", "--mode", "abm", "--households", "2000", "--firms", "500", "--parties", "3",
               "--horizon", "20", "--irreversibility-years", "2", "--seed", seed, "--run-dir", tmp_path / name, "-q")
        assert r.exit_code == 0, r.stderr
        runs.append((tmp_path / name / "trajectories.csv").read_bytes())
    assert runs[0] == runs[1] != runs[2]
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["mode"] == "abm" and summary["households"] == 2000


def test_sim_rk45_and_explain_sources(pk, tmp_path):
    r = pk("disempower-sim", "--integrator", "rk45", "--horizon", "10", "--irreversibility-years", "0",
           "--run-dir", tmp_path / "rk", "-q")
    assert r.exit_code == 0, r.stderr
    r = pk("disempower-explain", "--scenario", "ubi_redistribution", "--set", "W.econ.state=0.3", "--format", "json")
    assert r.exit_code == 0, r.stderr
    rows = {p["path"]: p for p in json.loads(r.stdout)["parameters"]}
    assert rows["W.econ.state"]["source"] == "override" and rows["W.econ.state"]["value"] == 0.3
    assert rows["tau_redist"]["source"] == "scenario" and rows["rho"]["source"] == "default"
    text = pk("disempower-explain").stdout
    assert "claim 5" in text and "W.econ.state" in text


def test_compare_and_sweeps(pk, tmp_path):
    r = pk("disempower-compare", "baseline_incremental", "no_ai_progress", "--horizon", "20",
           "--irreversibility-years", "0", "--run-dir", tmp_path / "c", "-q")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "c" / "compare.csv").read_text().count("\n") == 3 and (tmp_path / "c" / "compare.png").is_file()
    r = pk("disempower-sweep", "--param", "W.econ.state", "--values", "0,0.2,0.4", "--horizon", "20",
           "--run-dir", tmp_path / "s", "-q")
    assert r.exit_code == 0, r.stderr
    r = pk("disempower-sweep", "--mc", "64", "--horizon", "50", "--irreversibility-years", "10",
           "--run-dir", tmp_path / "mc", "-q")
    assert r.exit_code == 0, r.stderr
    sm = json.loads(r.stdout)
    lo, hi = sm["p_irreversible_ci95"]
    assert sm["simulations"] == 64 and lo <= sm["p_irreversible"] <= hi
    r = pk("disempower-sweep", "--sobol", "16", "--params", "rho,c_growth", "--horizon", "20",
           "--run-dir", tmp_path / "sob", "-q")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "sob" / "sweep.png").is_file()


@pytest.mark.parametrize("args, code, words", [
    (["disempower-sim", "--scenario", "nope.yaml"], 3, "nope.yaml"),
    (["disempower-sim", "--set", "W.econ.mars=0.1"], 2, "mars"),
    (["disempower-sim", "--set", "rho=1"], 2, "rho"),
    (["disempower-sim", "--dt", "0"], 2, "--dt"),
    (["disempower-sim", "--dt", "0.3"], 2, "whole number"),
    (["disempower-sim", "--integrator", "rk45", "--scenario", "late_mitigation"], 2, "triggered"),
    (["disempower-sim", "--mode", "abm", "--integrator", "rk45"], 2, "--integrator euler"),
    (["disempower-sim", "--mode", "abm", "--households", "3", "--parties", "5"], 2, "--parties"),
    (["disempower-sweep", "--param", "nope.x", "--values", "1"], 2, "nope"),
    (["disempower-sweep", "--mc", "5", "--sobol", "8"], 2, "exactly one"),
    (["disempower-sweep", "--sobol", "10"], 2, "power of 2"),
    (["disempower-sweep", "--param", "rho", "--values", "0,2"], 2, "rho"),
])
def test_bad_input_is_one_line_with_exit_code(pk, tmp_path, args, code, words):
    r = pk(*args, "--run-dir", tmp_path / "x") if args[0] != "disempower-explain" else pk(*args)
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert r.stderr.count("\n") == 1 and words in r.stderr and r.stdout == ""
    assert not (tmp_path / "x" / "manifest.json").exists()


def test_bad_scenario_file_names_file_and_key(pk, tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nparameters:\n  W: {econ: {state: -1}}\n")
    r = pk("disempower-sim", "--scenario", f, "--run-dir", tmp_path / "x")
    assert r.exit_code == 3 and str(f) in r.stderr and "W.econ.state" in r.stderr
    f.write_text("name: s\nparameters: {rho: 0.5\n")
    r = pk("disempower-compare", f, "--run-dir", tmp_path / "y")
    assert r.exit_code == 3 and "line" in r.stderr


@pytest.mark.parametrize("args, words", [
    # a tiny --dt meant 7·10^9 steps: MemoryError (exit 70) after the run dir was made
    (["disempower-sim", "--horizon", "5", "--dt", "1e-9", "--irreversibility-years", "2"],
     "--dt 1e-09 means 7000000000 steps over --horizon 5"),
    (["disempower-compare", "--horizon", "5", "--dt", "1e-300"], "--horizon 5"),
    (["disempower-sweep", "--mc", "4", "--horizon", "5", "--dt", "1e-9"], "over the limit of 1000000"),
    # the design was built before --max-draws was checked: 10^12 draws ran out of memory (exit 70)
    (["disempower-sweep", "--horizon", "5", "--dt", "0.5", "--mc", "1000000000000"],
     "--mc 1000000000000 means 1000000000000 simulations, over --max-draws 2000000"),
    (["disempower-sweep", "--horizon", "5", "--dt", "0.5", "--morris", "1000000000000", "--params", "rho,c_growth"],
     "--morris 1000000000000 with 2 parameters means 3000000000000 simulations, over --max-draws"),
    (["disempower-sweep", "--horizon", "5", "--dt", "0.5", "--tornado", "--max-draws", "3"], "over --max-draws 3"),
])
def test_absurd_step_and_draw_counts_are_refused_before_the_run_dir(pk, tmp_path, args, words):
    r = pk(*args, "--run-dir", tmp_path / "x")
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert r.stderr.count("\n") == 1 and words in r.stderr and r.stdout == ""
    assert not (tmp_path / "x").exists()
