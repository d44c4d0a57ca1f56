"""hygma-train / hygma-eval / hygma-plot through the real entry point: outputs, determinism, resume, bad input."""

import json

import numpy as np
import pytest

from paperkit.core.io import read_json
from paperkit.core.tables import read_table

TINY = ["--env", "group-capture", "--preset", "easy", "--steps", "400", "--batch-envs", "4", "--batch-size", "4",
        "--eval-every", "200", "--eval-episodes", "4", "--cluster-every", "100", "--history", "50", "-q"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from paperkit_cli.main import main

    d = tmp_path_factory.mktemp("hygma") / "run"
    try:
        main(["hygma-train", *TINY, "--algo", "hygma-qmix,vdn", "-j", "1", "--device", "cpu", "--run-dir", str(d)])
    except SystemExit as e:
        assert e.code in (0, None)
    return d


def test_run_dir_outputs(tiny_run):
    d = tiny_run
    for name in ("config.yaml", "curves.csv", "groups.jsonl", "attention.npy", "model.pt", "summary.json",
                 "manifest.json"):
        assert (d / name).exists(), name
    curves = read_table(d / "curves.csv")
    assert set(curves.column("algo")) == {"hygma-qmix", "vdn"} and curves.has("epsilon") and curves.has("group_ari")
    groups = [json.loads(line) for line in (d / "groups.jsonl").read_text().splitlines()]
    dynamic = [g for g in groups if g["algo"] == "hygma-qmix" and g["kind"] == "dynamic"]
    assert [g["step"] for g in dynamic] == [100, 200, 300, 400]   # an entry at every --cluster-every interval
    assert all(len(g["groups"]) == 4 and 0 <= g["moved_fraction"] <= 1 for g in dynamic)
    summary = read_json(d / "summary.json")
    assert [r["algo"] for r in summary["runs"]] == ["hygma-qmix", "vdn"]
    assert np.load(d / "attention.npy").shape[1:] == (4, 4, 3)   # samples × heads × agents × k_max


def test_same_seed_same_bytes_with_two_processes(pk, tiny_run, tmp_path):
    d = tmp_path / "again"
    r = pk("hygma-train", *TINY, "--algo", "hygma-qmix,vdn", "-j", "2", "--device", "cpu", "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1 and json.loads(r.stdout)["mean"][0]["algo"] == "hygma-qmix"
    for name in ("curves.csv", "groups.jsonl", "attention.npy", "summary.json"):
        assert (d / name).read_bytes() == (tiny_run / name).read_bytes(), name
    timing = read_json(d / "manifest.json")["extra"]["timing"]   # timings live in the manifest
    assert set(timing) == {"hygma-qmix_s0", "vdn_s0"} and timing["vdn_s0"]["env_steps_per_s"] > 0


def test_resume_continues_from_finished_stages(pk, tiny_run, tmp_path):
    import shutil

    d = tmp_path / "resumed"
    shutil.copytree(tiny_run, d)
    (d / "manifest.json").unlink()
    (d / "checkpoints" / "vdn_s0.pt").unlink()
    r = pk("hygma-train", *TINY, "--algo", "hygma-qmix,vdn", "-j", "1", "--device", "cpu", "--run-dir", d, "--resume")
    assert r.exit_code == 0, r.stderr
    assert (d / "curves.csv").read_bytes() == (tiny_run / "curves.csv").read_bytes()


def test_eval_json_ascii_and_plot(pk, tiny_run, tmp_path):
    r = pk("hygma-eval", "--model", tiny_run / "model.pt", "--job", "hygma-qmix_s0", "--episodes", "4", "--ascii",
           "--device", "cpu")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["algo"] == "hygma-qmix" and out["episodes"] == 4 and len(out["groups"]) == 4
    assert "t=0" in r.stderr and "P" in r.stderr
    png = tmp_path / "curves.png"
    r = pk("hygma-plot", tiny_run, "-o", png)
    assert r.exit_code == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def mixed_actions_env():
    """A user ParallelEnv whose agents have different action spaces (refused)."""
    from gymnasium import spaces

    from paperkit.methods.hygma.parallel import grid_parallel_env

    env = grid_parallel_env("pp", "easy")
    env.action_spaces["agent_1"] = spaces.Discrete(3)
    return env


def stateless_env():
    """A user ParallelEnv without state() (needs --state obs-concat)."""
    from paperkit.methods.hygma.parallel import grid_parallel_env

    env = grid_parallel_env("pp", "easy")
    env.state = None
    return env


@pytest.mark.parametrize("args, code, needle", [
    (["--env", "smac"], 2, "unknown --env"),
    (["--preset", "huge"], 2, "unknown preset"),
    (["--k-range", "3", "2"], 2, "k_min"),
    (["--k-range", "2", "3", "--preset", "easy"], 2, "below the number of agents"),
    (["--stability", "1.5"], 2, "1.5"),
    (["--stability", "-0.1"], 2, "-0.1"),
    (["--steps", "100"], 2, "less than one batch"),
    (["--env", "tests.cli.test_hygma:mixed_actions_env"], 3, "Discrete"),
    (["--env", "tests.cli.test_hygma:stateless_env"], 3, "obs-concat"),
    (["--env", "os:system"], 2, "ParallelEnv"),
    (["--env", "no_such_module_xyz:make"], 2, "cannot import"),
    (["--env", "pp", "--state", "obs-concat"], 2, "user envs"),
    (["--buffer-episodes", "1000000", "--preset", "hard"], 2, "memory"),
    (["--algo", "qtran"], 2, "qtran"),
])
def test_bad_input_is_one_line_error_and_no_run_dir(pk, tmp_path, args, code, needle):
    run_dir = tmp_path / "run"
    r = pk("hygma-train", *args, "--run-dir", run_dir)
    assert r.exit_code == code, r.stderr
    assert r.stderr.count("\n") == 1 and "error:" in r.stderr and needle in r.stderr, r.stderr
    assert not run_dir.exists()


def test_unknown_config_key_and_bad_model_files(pk, tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("env: pp\nclustering_interval: 100\n")
    r = pk("hygma-train", "--config", cfg, "--run-dir", tmp_path / "run")
    assert r.exit_code == 2 and "clustering" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"PK\x03\x04 truncated")
    r = pk("hygma-eval", "--model", bad)
    assert r.exit_code == 3 and r.stderr.count("\n") == 1, r.stderr
    r = pk("hygma-eval", "--model", tmp_path / "missing.pt")
    assert r.exit_code == 3 and r.stderr.count("\n") == 1, r.stderr
    empty = tmp_path / "empty_run"
    empty.mkdir()
    r = pk("hygma-plot", empty, "-o", tmp_path / "x.png")
    assert r.exit_code == 3 and r.stderr.count("\n") == 1, r.stderr


def _tampered(tiny_run, tmp_path, change):
    import copy

    import torch

    blob = copy.deepcopy(torch.load(tiny_run / "model.pt", weights_only=True))
    change(blob)
    path = tmp_path / "tampered.pt"
    torch.save(blob, path)
    return path


def user_pp_env():
    """A user env factory (our own pp easy as a ParallelEnv)."""
    from paperkit.methods.hygma.parallel import grid_parallel_env

    return grid_parallel_env("pp", "easy")


def test_a_model_file_never_decides_what_code_is_imported(pk, tiny_run, tmp_path, capsys):
    """settings.env inside model.pt named `this:main`: hygma-eval imported `this` (its top-level code ran and
    printed into the data stream) and would call the module's function, though the file loaded weights-only."""
    import sys

    sys.modules.pop("this", None)
    path = _tampered(tiny_run, tmp_path, lambda b: b["settings"].update(env="this:main"))
    r = pk("hygma-eval", "--model", path, "--episodes", "1", "--device", "cpu")
    assert r.exit_code == 2 and "name it yourself: --env this:main" in r.stderr, r.stderr
    assert "this" not in sys.modules and r.stdout == ""
    r = pk("hygma-eval", "--model", path, "--env", "other:make", "--episodes", "1", "--device", "cpu")
    assert r.exit_code == 2 and "trained on this:main" in r.stderr and "this" not in sys.modules
    path = _tampered(tiny_run, tmp_path, lambda b: b["settings"].update(env=["pp"]))
    r = pk("hygma-eval", "--model", path, "--episodes", "1", "--device", "cpu")
    assert r.exit_code == 3 and "settings.env" in r.stderr, r.stderr


def test_a_user_env_model_evaluates_when_the_user_names_the_env(pk, tmp_path):
    d = tmp_path / "user"
    env = "tests.cli.test_hygma:user_pp_env"
    args = ["--preset", "easy", "--steps", "400", "--batch-envs", "4", "--batch-size", "4", "--eval-every", "400",
            "--eval-episodes", "2", "--cluster-every", "100", "--history", "50", "-q", "--algo", "vdn", "-j", "1",
            "--device", "cpu"]
    assert pk("hygma-train", "--env", env, *args, "--run-dir", d).exit_code == 0
    r = pk("hygma-eval", "--model", d / "model.pt", "--episodes", "1", "--device", "cpu")
    assert r.exit_code == 2 and f"--env {env}" in r.stderr
    r = pk("hygma-eval", "--model", d / "model.pt", "--env", env, "--episodes", "1", "--device", "cpu")
    assert r.exit_code == 0 and json.loads(r.stdout)["env"] == env, r.stderr


def test_a_model_with_nan_weights_is_refused(pk, tiny_run, tmp_path):
    """NaN weights were evaluated (every action argmax(NaN) = 0) and reported with exit 0."""
    import torch

    def poison(blob):
        state = next(v for v in blob["jobs"]["hygma-qmix_s0"].values()
                     if isinstance(v, dict) and any(torch.is_tensor(t) for t in v.values()))
        key = next(k for k, t in state.items() if torch.is_tensor(t) and t.is_floating_point())
        state[key][...] = float("nan")

    r = pk("hygma-eval", "--model", _tampered(tiny_run, tmp_path, poison), "--episodes", "1", "--device", "cpu")
    assert r.exit_code == 3 and "hold NaN/inf values" in r.stderr and "jobs.hygma-qmix_s0" in r.stderr, r.stderr


def test_plot_refuses_nan_in_curves(pk, tiny_run, tmp_path):
    """NaN returns in curves.csv were plotted as gaps (exit 0; found by an audit)."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    lines = (run / "curves.csv").read_text().splitlines()
    col = lines[0].split(",").index("return")
    cells = lines[1].split(",")
    cells[col] = "nan"
    (run / "curves.csv").write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    r = pk("hygma-plot", run, "-o", tmp_path / "c.png")
    assert r.exit_code == 3 and "column 'return'" in r.stderr and not (tmp_path / "c.png").exists(), r.stderr
