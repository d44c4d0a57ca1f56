import json

import numpy as np
import pytest

from paperkit.core import config, manifest, runs
from paperkit.core.errors import ConfigError, RunDirError
from paperkit.datasets import dirichlet_partition, kfold_indices, load_bundled, train_test_indices


def test_config_keys_normalised_and_unknown_rejected(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("n-folds: 5\nalpha: 0.1\n")
    assert config.load_config(p, ["n_folds", "alpha"], command="x") == {"n_folds": 5, "alpha": 0.1}
    p.write_text("n_fold: 5\n")
    with pytest.raises(ConfigError, match="unknown key 'n_fold' for x; did you mean 'n-folds'"):
        config.load_config(p, ["n_folds", "alpha"], command="x")
    p.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        config.load_config(p, ["a"], command="x")
    p.write_text("a: [1\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        config.load_config(p, ["a"], command="x")
    assert config.env_var("conformal-cv", "n-folds") == "PAPERKIT_CONFORMAL_CV_N_FOLDS"


def test_manifest_content(tmp_path):
    inp = tmp_path / "in.csv"
    inp.write_text("a\n1\n")
    out = tmp_path / "out.csv"
    out.write_text("b\n2\n")
    m = manifest.build_manifest(command="demo", argv=["paperkit", "demo"],
                                parameters={"alpha": {"value": 0.1, "source": "flag"}}, seed=3,
                                inputs=[inp], outputs=[out, "-"], wall_time_s=1.23456)
    assert m["command"] == "demo" and m["seed"] == 3 and m["status"] == "complete"
    assert m["parameters"]["alpha"] == {"value": 0.1, "source": "flag"}
    import hashlib

    assert m["inputs"][0]["sha256"] == hashlib.sha256(b"a\n1\n").hexdigest()
    assert m["outputs"][1] == {"path": "-", "sha256": None}
    env = m["environment"]
    assert env["paperkit_version"] and env["python"] and "numpy" in env["dependencies"]
    manifest.write_manifest(tmp_path / "m.json", m)
    assert json.loads((tmp_path / "m.json").read_text())["wall_time_s"] == 1.2346
    assert manifest.manifest_path_for(tmp_path / "x.csv").name == "x.csv.manifest.json"


def test_run_dir_lifecycle(tmp_path):
    d = tmp_path / "run"
    r = runs.RunDir(d).prepare({"a": 1}, command="cmd")
    r.save_checkpoint("state.json", {"step": 2})
    assert r.load_checkpoint("state.json") == {"step": 2}
    # unfinished: needs --resume (same parameters) or --force
    with pytest.raises(RunDirError, match="unfinished run"):
        runs.RunDir(d).prepare({"a": 1}, command="cmd")
    with pytest.raises(RunDirError, match=r"different parameters \(a\)"):
        runs.RunDir(d, resume=True).prepare({"a": 2}, command="cmd")
    r2 = runs.RunDir(d, resume=True).prepare({"a": 1, "jobs": 4}, command="cmd")
    assert r2.resumed and r2.load_checkpoint("state.json") == {"step": 2}
    (d / runs.MANIFEST_NAME).write_text("{}")
    with pytest.raises(RunDirError, match="finished run"):
        runs.RunDir(d).prepare({"a": 1}, command="cmd")
    runs.RunDir(d, force=True).prepare({"a": 3}, command="cmd")
    assert not (d / runs.MANIFEST_NAME).exists() and not r.has_checkpoint("state.json")


def test_additive_parameter_may_switch_on_resume(tmp_path):
    """A stage-adding flag (sve-encode's --router-baselines) may be switched on (not off) by a finished run's
    --resume; it is recorded in config.yaml; every other parameter must still match, and without --resume
    nothing changes."""
    d = tmp_path / "run"
    runs.RunDir(d).prepare({"a": 1, "extra": False}, command="cmd").save_checkpoint("s.json", {"x": 1})
    (d / runs.MANIFEST_NAME).write_text("{}")
    with pytest.raises(RunDirError, match=r"different parameters \(extra\)"):
        runs.RunDir(d, resume=True).prepare({"a": 1, "extra": True}, command="cmd")
    with pytest.raises(RunDirError, match="finished run"):
        runs.RunDir(d).prepare({"a": 1, "extra": True}, command="cmd", additive=frozenset({"extra"}))
    with pytest.raises(RunDirError, match=r"different parameters \(a\)"):
        runs.RunDir(d, resume=True).prepare({"a": 2, "extra": True}, command="cmd", additive=frozenset({"extra"}))
    r = runs.RunDir(d, resume=True).prepare({"a": 1, "extra": True}, command="cmd", additive=frozenset({"extra"}))
    assert r.resumed and r.load_checkpoint("s.json") == {"x": 1}
    assert r.read_config()["extra"] is True and not r.finished   # finished again when its manifest is written
    # switched off again, it would drop finished results: refused like any other change
    with pytest.raises(RunDirError, match=r"different parameters \(extra\)"):
        runs.RunDir(d, resume=True).prepare({"a": 1, "extra": False}, command="cmd", additive=frozenset({"extra"}))


def test_cached_times_the_stages_it_computes_not_those_it_loads(tmp_path):
    import time

    r = runs.RunDir(tmp_path / "run").prepare({}, command="cmd")
    r.cached("slow", lambda: time.sleep(0.05) or {"x": 1})
    assert set(r.stage_seconds) == {"slow"} and r.stage_seconds["slow"] >= 0.05
    again = runs.RunDir(tmp_path / "run", resume=True).prepare({}, command="cmd")
    assert again.cached("slow", lambda: {"x": 2}) == {"x": 1} and again.stage_seconds == {}


def test_option_added_since_a_run_resumes_it_at_its_default(tmp_path):
    """A run whose config.yaml predates an option (the key is missing) ran with the option's default behaviour:
    it resumes when the option is left at its default, not when it is set to something else."""
    d = tmp_path / "run"
    runs.RunDir(d).prepare({"a": 1}, command="cmd").save_checkpoint("s.json", {"x": 1})
    with pytest.raises(RunDirError, match=r"different parameters \(dtype\)"):
        runs.RunDir(d, resume=True).prepare({"a": 1, "dtype": "bfloat16"}, command="cmd")
    with pytest.raises(RunDirError, match=r"made before the option existed; leave it out"):   # set, even to the default
        runs.RunDir(d, resume=True).prepare({"a": 1, "dtype": "float32"}, command="cmd")
    with pytest.raises(RunDirError, match=r"different parameters \(a\)"):       # only missing keys are excused
        runs.RunDir(d, resume=True).prepare({"a": 2, "dtype": "float32"}, command="cmd",
                                            defaulted=frozenset({"a", "dtype"}))
    r = runs.RunDir(d, resume=True).prepare({"a": 1, "dtype": "float32"}, command="cmd", defaulted=frozenset({"dtype"}))
    assert r.resumed and r.load_checkpoint("s.json") == {"x": 1} and r.read_config()["dtype"] == "float32"


def test_resume_compares_a_missing_key_with_what_older_runs_did(tmp_path):
    """``before``: an option whose default is not what runs made before it did; a config.yaml without the key
    counts as holding that value, so the default blocks the resume (naming the old value) and the old value
    resumes."""
    d = tmp_path / "run"
    runs.RunDir(d).prepare({"a": 1}, command="cmd").save_checkpoint("s.json", {"x": 1})
    with pytest.raises(RunDirError, match=r"different parameters \(compass\).*ran with False"):
        runs.RunDir(d, resume=True).prepare({"a": 1, "compass": True}, command="cmd",
                                            defaulted=frozenset({"compass"}), before={"compass": False})
    r = runs.RunDir(d, resume=True).prepare({"a": 1, "compass": False}, command="cmd", before={"compass": False})
    assert r.resumed and r.load_checkpoint("s.json") == {"x": 1}
    # a config.yaml that records the key is compared as recorded
    r = runs.RunDir(d, resume=True).prepare({"a": 1, "compass": False}, command="cmd", before={"compass": True})
    assert r.resumed


def test_run_dir_refuses_foreign_folder(tmp_path):
    (tmp_path / "mine.txt").write_text("precious")
    with pytest.raises(RunDirError, match="not a paperkit run"):
        runs.RunDir(tmp_path, force=True).prepare({}, command="cmd")
    assert (tmp_path / "mine.txt").read_text() == "precious"


def test_splits():
    rng = np.random.default_rng(0)
    folds = kfold_indices(10, 3, rng)
    assert sorted(np.concatenate(folds).tolist()) == list(range(10))
    assert sorted(len(f) for f in folds) == [3, 3, 4]
    tr, te = train_test_indices(100, 0.25, np.random.default_rng(1))
    assert len(te) == 25 and not set(tr) & set(te)
    y = np.repeat(np.arange(4), 50)
    parts = dirichlet_partition(y, 5, 0.3, np.random.default_rng(2), min_size=5)
    assert sorted(np.concatenate(parts).tolist()) == list(range(200))
    assert min(len(p) for p in parts) >= 5
    # smaller alpha, more skewed class mixes (mean per-client label entropy)
    def entropy(ps):
        out = []
        for p in ps:
            c = np.bincount(y[p], minlength=4) / len(p)
            out.append(-(c[c > 0] * np.log(c[c > 0])).sum())
        return np.mean(out)

    skewed = np.mean([entropy(dirichlet_partition(y, 5, 0.05, np.random.default_rng(s))) for s in range(5)])
    mixed = np.mean([entropy(dirichlet_partition(y, 5, 100.0, np.random.default_rng(s))) for s in range(5)])
    assert skewed < mixed


def test_bundled():
    d = load_bundled("diabetes")
    assert d.X.shape == (442, 10) and d.task == "regression" and d.feature_names[2] == "bmi"
    assert load_bundled("digits").y.dtype == np.int64
