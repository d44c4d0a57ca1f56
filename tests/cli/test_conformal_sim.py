"""conformal-sim: run dir contents, resume, determinism."""

import json

from paperkit.core.tables import read_table


def test_sim_writes_results_plot_and_resumes(pk, tmp_path):
    d = tmp_path / "sim"
    args = ["conformal-sim", "--n", "40", "--p", "3,8", "--reps", "6", "--methods", "mod,e-mod,eu-mod,cvplus,split",
            "--run-dir", d]
    r = pk(*args)
    assert r.exit_code == 0, r.stderr
    line = json.loads(r.stdout)
    assert line["dimensions"] == [3, 8]
    for f in ("results.csv", "reps.csv", "coverage_length.png", "manifest.json", "config.yaml"):
        assert (d / f).exists(), f
    t = read_table(d / "results.csv")
    assert len(t) == 10 and set(t.column("method")) == {"mod", "e-mod", "eu-mod", "cvplus", "split"}
    first = (d / "results.csv").read_bytes()
    # a finished run is protected; --resume reuses the checkpoints and gives the same bytes
    assert pk(*args).exit_code == 1
    (d / "manifest.json").unlink()
    (d / "results.csv").unlink()
    r2 = pk(*args, "--resume")
    assert r2.exit_code == 0, r2.stderr
    assert (d / "results.csv").read_bytes() == first
    # changed parameters cannot resume
    assert pk(*args[:-2], "--reps", "7", "--run-dir", d, "--resume").exit_code == 1


def test_sim_bad_options(pk, tmp_path):
    r = pk("conformal-sim", "--p", "5,x", "--run-dir", tmp_path / "a")
    assert r.exit_code == 2 and "--p" in r.stderr
    r = pk("conformal-sim", "--methods", "mod,bonferroni", "--run-dir", tmp_path / "b")
    assert r.exit_code == 2 and "unknown method 'bonferroni'" in r.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
