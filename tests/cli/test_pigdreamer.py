"""pigdreamer-train / -eval / -bound / -compare through the real entry point: outputs, determinism, resume
after a kill, the deployment path, bad input."""

import json
import shutil

import pytest

from paperkit.core.io import read_json, read_jsonl
from paperkit.core.tables import read_table

TINY = ["--steps", "480", "--prefill", "240", "--envs", "8", "--batch-size", "2", "--seq-len", "8",
        "--train-ratio", "2", "--imag-starts", "8", "--horizon", "4", "--eval-every", "240", "--eval-episodes", "2",
        "--checkpoint-every", "240", "--device", "cpu", "-q"]


def _main(args):
    from paperkit_cli.main import main

    try:
        main(args)
    except SystemExit as e:
        assert e.code in (0, None)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("pig") / "run"
    _main(["pigdreamer-train", *TINY, "--run-dir", str(d)])
    return d


def test_run_dir_outputs(tiny_run):
    d = tiny_run
    for name in ("config.yaml", "metrics.csv", "eval.jsonl", "model.pt", "summary.json", "curves.png", "manifest.json"):
        assert (d / name).exists(), name
    m = read_table(d / "metrics.csv")
    for col in ("step", "episode_return", "episode_cost", "lambda", "c", "cost_estimate", "gap", "penalty", "dyn",
                "align", "align_loss", "dec", "reward", "cost", "actor_loss", "critic_loss"):
        assert m.has(col), col
    evals = read_jsonl(d / "eval.jsonl")
    assert sorted({e["step"] for e in evals}) == [240, 480] and len(evals) == 4
    assert read_json(d / "summary.json")["episodes"] == 2
    assert "timing_s" in json.dumps(read_json(d / "manifest.json"))


def test_same_seed_same_metrics_and_resume_after_a_kill(pk, tiny_run, tmp_path, monkeypatch):
    """A second run with the same seed writes identical metrics.csv and eval.jsonl; a run killed after its
    first chunk and resumed ends with the same bytes as the uninterrupted one."""
    from paperkit.methods.pigdreamer import train

    killed = tmp_path / "killed"
    real = train.Trainer.run_until

    def dies_in_second_chunk(self, end, on_steps=None):
        if end > 240:
            raise KeyboardInterrupt
        return real(self, end, on_steps)

    monkeypatch.setattr(train.Trainer, "run_until", dies_in_second_chunk)
    r = pk("pigdreamer-train", *TINY, "--run-dir", killed)
    assert r.exit_code != 0 and not (killed / "metrics.csv").exists()
    assert len(list((killed / "checkpoints").iterdir())) == 1
    monkeypatch.setattr(train.Trainer, "run_until", real)
    r = pk("pigdreamer-train", *TINY, "--run-dir", killed, "--resume")
    assert r.exit_code == 0, r.stderr
    for name in ("metrics.csv", "eval.jsonl", "summary.json"):
        assert (killed / name).read_bytes() == (tiny_run / name).read_bytes(), name


def test_a_run_from_before_the_goal_compass_resumes_only_without_it(pk, tiny_run, tmp_path):
    """A HazardNav run dir whose config.yaml predates --goal-compass ran without the compass: resuming it at
    the default would switch the observation mid-run, so it is refused (one line; exit 1, the house's code for a
    run dir that does not match); --no-goal-compass resumes it."""
    import yaml

    old = tmp_path / "old"
    shutil.copytree(tiny_run, old)
    config = yaml.safe_load((old / "config.yaml").read_text())
    del config["goal_compass"]
    (old / "config.yaml").write_text(yaml.safe_dump(config))
    r = pk("pigdreamer-train", *TINY, "--run-dir", old, "--resume")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "ran with False" in r.stderr, r.stderr
    assert (old / "metrics.csv").read_bytes() == (tiny_run / "metrics.csv").read_bytes()
    r = pk("pigdreamer-train", *TINY, "--run-dir", old, "--resume", "--no-goal-compass")
    assert r.exit_code == 0, r.stderr


def test_eval_uses_the_deployed_policy(pk, tiny_run, tmp_path):
    out = tmp_path / "eval.json"
    r = pk("pigdreamer-eval", tiny_run, "--episodes", "3", "-o", out)
    assert r.exit_code == 0, r.stderr
    res = read_json(out)
    assert res["variant"] == "pig" and res["episodes"] == 3 and len(res["per_episode"]) == 3
    r2 = pk("pigdreamer-eval", tiny_run, "--episodes", "3")
    assert json.loads(r2.stdout)["return_mean"] == res["return_mean"]


def test_eval_cost_calibration_adds_the_readings_and_keeps_the_episodes(pk, tiny_run, tmp_path):
    plain = json.loads(pk("pigdreamer-eval", tiny_run, "--episodes", "3").stdout)
    r = pk("pigdreamer-eval", tiny_run, "--episodes", "3", "--cost-calibration")
    assert r.exit_code == 0, r.stderr
    res = json.loads(r.stdout)
    cal = res.pop("cost_calibration")
    assert res == plain
    assert cal["horizon"] == 4 and [row["k"] for row in cal["per_step"]] == [1, 2, 3, 4]
    assert {"real", "posterior", "open_loop", "imagined", "open_loop_privileged_prior"} <= set(cal["per_episode"])
    ppo = tmp_path / "ppo"
    _main(["pigdreamer-train", "--variant", "ppo-lag", "--steps", "512", "--prefill", "0", "--envs", "8", "--eval-every", "512",
           "--eval-episodes", "2", "--device", "cpu", "-q", "--run-dir", str(ppo)])
    r = pk("pigdreamer-eval", ppo, "--cost-calibration")
    assert r.exit_code == 2 and "world model" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = pk("pigdreamer-eval", ppo, "--episodes", "2", "--policy", "random")     # the baseline needs no model
    assert r.exit_code == 0 and json.loads(r.stdout)["variant"] == "ppo-lag", r.stderr
    from paperkit.methods.pigdreamer.envs import make_core
    from paperkit.methods.pigdreamer.train import RandomPolicy, evaluate

    core = make_core("hazardnav", 2, obs="vector", moving=False, goal_compass=True, need_privileged=False)
    assert json.loads(r.stdout)["per_episode"] == evaluate(RandomPolicy(core), core, 2, 7919)


def test_eval_random_policy_is_the_random_baseline_also_under_the_calibration(pk, tiny_run):
    """--policy random rolls out uniform random actions on the run's env and pigdreamer-eval's evaluation seeds,
    and with --cost-calibration gives the same rows plus the readings on them."""
    import torch

    from paperkit.methods.pigdreamer.envs import make_core
    from paperkit.methods.pigdreamer.train import RandomPolicy, config_from_dict, evaluate

    r = pk("pigdreamer-eval", tiny_run, "--episodes", "4", "--policy", "random")
    res = json.loads(r.stdout)
    assert res["policy"] == "random"
    assert any(line.split()[:2] == ["pig", "random"] for line in r.stderr.splitlines()), r.stderr   # who acted
    cfg = config_from_dict(torch.load(tiny_run / "model.pt", weights_only=False)["config"])
    core = make_core(cfg.env, 4, obs=cfg.obs, moving=cfg.moving, goal_compass=cfg.goal_compass, need_privileged=False)
    assert res["per_episode"] == evaluate(RandomPolicy(core), core, 4, 7919)
    own = json.loads(pk("pigdreamer-eval", tiny_run, "--episodes", "4").stdout)
    assert own["per_episode"] != res["per_episode"]
    r = pk("pigdreamer-eval", tiny_run, "--episodes", "4", "--policy", "random", "--cost-calibration")
    assert r.exit_code == 0, r.stderr
    cal = json.loads(r.stdout)
    assert cal.pop("cost_calibration")["per_episode"]["real"] > 0 and cal == res


def test_eval_cost_calibration_refuses_a_horizon_longer_than_the_episodes(pk, tiny_run, tmp_path):
    import torch

    blob = torch.load(tiny_run / "model.pt", weights_only=False)
    blob["config"]["agent"]["horizon"] = 100        # HazardNav's episodes have 100 steps
    (tmp_path / "long").mkdir()
    torch.save(blob, tmp_path / "long" / "model.pt")
    r = pk("pigdreamer-eval", tmp_path / "long", "--episodes", "2", "--cost-calibration")
    assert r.exit_code == 3 and "imagination horizon" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = pk("pigdreamer-eval", tmp_path / "long", "--episodes", "2")          # plain evaluation still runs
    assert r.exit_code == 0, r.stderr


def test_eval_cost_calibration_refuses_what_would_not_fit_in_memory(pk, tiny_run, monkeypatch):
    import paperkit.core.resources as resources

    monkeypatch.setattr(resources, "default_memory_limit_gb", lambda: 0.01)   # 10 MiB: 1,000 episodes need ~36
    r = pk("pigdreamer-eval", tiny_run, "--episodes", "1000", "--cost-calibration")
    assert r.exit_code == 2 and "--cost-calibration over 1000 episodes" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1


def test_eval_policy_sample_by_default_greedy_on_request_and_old_models_greedy(pk, tiny_run, tmp_path):
    """Training evaluations sample the actor (DreamerV3/SafeDreamer); pigdreamer-eval follows the run unless
    told otherwise; a model.pt written before --eval-policy existed reads as greedy, as it was evaluated, and one
    written before --goal-compass existed as trained without it."""
    import torch

    from paperkit.methods.pigdreamer.train import config_from_dict

    assert read_json(tiny_run / "summary.json")["eval_policy"] == "sample"
    runs = {p: json.loads(pk("pigdreamer-eval", tiny_run, "--episodes", "4", "--policy", p).stdout)
            for p in ("model", "sample", "greedy")}
    assert [runs[p]["policy"] for p in runs] == ["sample", "sample", "greedy"]
    assert runs["model"]["per_episode"] == runs["sample"]["per_episode"]
    blob = torch.load(tiny_run / "model.pt", weights_only=False)
    old = {k: v for k, v in blob["config"].items() if k != "eval_policy"}
    assert config_from_dict(old).eval_policy == "greedy" and config_from_dict(blob["config"]).eval_policy == "sample"
    # and one written before --goal-compass existed was trained (and is evaluated) without the compass
    assert blob["config"]["goal_compass"] is True and read_json(tiny_run / "summary.json")["goal_compass"] is True
    assert config_from_dict({k: v for k, v in old.items() if k != "goal_compass"}).goal_compass is False
    r = pk("pigdreamer-train", *TINY, "--eval-policy", "mode", "--run-dir", tmp_path / "x")
    assert r.exit_code == 2 and not (tmp_path / "x").exists()


def test_compare_table_and_plot(pk, tiny_run, tmp_path):
    other = tmp_path / "seed1"
    shutil.copytree(tiny_run, other)
    table, png = tmp_path / "table.csv", tmp_path / "cmp.png"
    r = pk("pigdreamer-compare", tiny_run, other, "-o", table, "--plot", png)
    assert r.exit_code == 0, r.stderr
    t = read_table(table)
    assert list(t.column("variant")) == ["pig"] and int(t.column("n_seeds")[0]) == 2
    assert float(t.column("return_se")[0]) == 0.0                      # identical copies: no spread
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bound_command_json_and_png(pk, tmp_path):
    out, png = tmp_path / "bound.json", tmp_path / "bound.png"
    r = pk("pigdreamer-bound", "-o", out, "--plot", png)
    assert r.exit_code == 0, r.stderr
    res = read_json(out)
    assert res["reward_holds"] and res["cost_holds"] and len(res["belief_right"]) == 101
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "holds" in r.stderr


def no_cost_env():
    import gymnasium as gym

    from paperkit.methods.pigdreamer.envs import CoreEnv

    class NoCost(gym.Wrapper):
        def reset(self, *, seed=None, options=None):
            obs, info = self.env.reset(seed=seed, options=options)
            return obs, {"privileged": info["privileged"]}

        def step(self, action):
            obs, r, te, tr, info = self.env.step(action)
            return obs, r, te, tr, {"privileged": info["privileged"]}

    return NoCost(CoreEnv())


def no_priv_env():
    import gymnasium as gym

    from paperkit.methods.pigdreamer.envs import CoreEnv

    class NoPriv(gym.Wrapper):
        def reset(self, *, seed=None, options=None):
            obs, _ = self.env.reset(seed=seed, options=options)
            return obs, {"cost": 0.0}

        def step(self, action):
            obs, r, te, tr, info = self.env.step(action)
            return obs, r, te, tr, {"cost": info["cost"]}

    return NoPriv(CoreEnv())


@pytest.fixture
def test_envs_registered():
    import gymnasium as gym

    for name in ("no_cost_env", "no_priv_env"):
        env_id = f"pigtest/{name}-v0"
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=f"tests.cli.test_pigdreamer:{name}")


@pytest.mark.parametrize("args, code, needle", [
    (["--env", "Nope-v9"], 2, "unknown --env"),
    (["--env", "pigtest/no_cost_env-v0"], 3, "'cost'"),
    (["--env", "pigtest/no_priv_env-v0"], 3, "'privileged'"),
    (["--cost-limit", "-1"], 2, "--cost-limit"),
    (["--horizon", "0"], 2, "--horizon"),
    (["--cost-estimate", "critic"], 2, "critic"),
    (["--cost-weight", "0"], 2, "--cost-weight"),
    (["--steps", "100"], 2, "fewer than one training batch"),
    (["--prefill", "5000", "--steps", "1000"], 2, "--prefill"),
    (["--variant", "lambda"], 2, "lambda"),
    (["--obs", "image", "--env", "pointgoal"], 3, "lidar"),
    (["--steps", "1000000000", "--envs", "1"], 2, "memory"),
    (["--device", "cuda"], 2, "CPU"),
    (["--no-goal-compass", "--env", "pointgoal"], 2, "--no-goal-compass"),
])
def test_bad_input_is_one_line_error_and_no_run_dir(pk, tmp_path, test_envs_registered, args, code, needle):
    run_dir = tmp_path / "run"
    r = pk("pigdreamer-train", *args, "--run-dir", run_dir)
    assert r.exit_code == code, r.stderr
    assert r.stderr.count("\n") == 1 and "error:" in r.stderr and needle in r.stderr, r.stderr
    assert not run_dir.exists()


def test_unprivileged_runs_on_an_env_without_privileged_info(pk, tmp_path, test_envs_registered):
    r = pk("pigdreamer-train", *TINY[:-5], "--steps", "256", "--prefill", "256", "--eval-every", "256", "-q",
           "--checkpoint-every", "256", "--variant", "unprivileged", "--env", "pigtest/no_priv_env-v0",
           "--run-dir", tmp_path / "run")
    assert r.exit_code == 0, r.stderr
    # registered without max_episode_steps: the calibration's windows need the episode length
    r = pk("pigdreamer-eval", tmp_path / "run", "--episodes", "2", "--cost-calibration")
    assert r.exit_code == 3 and "episode length" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_bad_run_dirs_and_config(pk, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = pk("pigdreamer-eval", empty)
    assert r.exit_code == 3 and "model.pt" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    (empty / "model.pt").write_bytes(b"PK\x03\x04 truncated")
    r = pk("pigdreamer-eval", empty)
    assert r.exit_code == 3 and r.stderr.count("\n") == 1, r.stderr
    r = pk("pigdreamer-compare", empty, tmp_path / "missing")
    assert r.exit_code == 3 and "summary.json" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    cfg = tmp_path / "c.yaml"
    cfg.write_text("variant: pig\nimagination_steps: 3\n")
    r = pk("pigdreamer-train", "--config", cfg, "--run-dir", tmp_path / "run")
    assert r.exit_code == 2 and "imagination_steps" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = pk("pigdreamer-bound", "--accuracy", "0.3")
    assert r.exit_code == 2 and "--accuracy" in r.stderr, r.stderr


def test_a_model_file_never_decides_what_code_is_imported(pk, tiny_run, tmp_path):
    """config.env 'this:Nope-v0' in model.pt would reach gymnasium.make, which imports the module named before
    the colon: a weights-only file must not pick what code runs."""
    import sys

    import torch

    sys.modules.pop("this", None)
    blob = torch.load(tiny_run / "model.pt", weights_only=True)
    blob["config"]["env"] = "this:Nope-v0"
    (tmp_path / "bad").mkdir()
    torch.save(blob, tmp_path / "bad" / "model.pt")
    r = pk("pigdreamer-eval", tmp_path / "bad", "--episodes", "1")
    assert r.exit_code == 3 and "config.env 'this:Nope-v0'" in r.stderr and r.stdout == "", r.stderr
    assert "this" not in sys.modules


@pytest.mark.parametrize("name, change, needle", [
    ("summary.json", lambda t: t.replace('"return_mean": ', '"return_mean": NaN, "x": '), "return_mean = nan"),
    ("summary.json", lambda t: t.replace('"cost_limit": ', '"cost_limit": "2", "x": '), "cost_limit = '2'"),
    ("eval.jsonl", lambda t: t.replace('"return": ', '"return": "abc", "x": ', 1), "entry 1: return = 'abc'"),
])
def test_compare_refuses_nan_or_text_in_a_runs_results(pk, tiny_run, tmp_path, name, change, needle):
    """NaN or text in summary.json/eval.jsonl was averaged into the table (exit 0; found by an audit)."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    (run / name).write_text(change((run / name).read_text()))
    r = pk("pigdreamer-compare", run)
    assert r.exit_code == 3 and needle in r.stderr and r.stdout == "", r.stderr
