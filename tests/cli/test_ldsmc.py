"""ldsmc-train / ldsmc-restore / ldsmc-bench through the real entry point: outputs, determinism, bad input."""

import json

import numpy as np
import pytest

from paperkit.core.io import read_json
from paperkit.core.tables import read_table
from tests.ldsmc_helpers import tiny_model_dir

FAST = ["--steps", "5", "--lsq-iters", "20", "-j", "1", "-q"]

TRAIN = ["--vae-iters", "20", "--ldm-iters", "20", "--vae-width", "8", "--ldm-width", "16", "-j", "1",
         "--batch-size", "32", "--classifier-iters", "5", "-q"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, pk_module):
    d = tmp_path_factory.mktemp("ldsmc_cli") / "model"
    r = pk_module("ldsmc-train", *TRAIN, "--run-dir", d)
    assert r.exit_code == 0, r.stderr
    return d, r


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory), None


@pytest.fixture(scope="module")
def pk_module():
    from tests.conftest import Result, _code

    def run(*args):
        from click.testing import CliRunner

        from paperkit_cli.main import main

        runner = CliRunner()
        with runner.isolation() as (out, err, _):
            try:
                main([str(a) for a in args])
                code = 0
            except SystemExit as e:
                code = _code(e)
            return Result(code, out.getvalue().decode(), err.getvalue().decode())

    return run


def test_train_writes_the_model_and_resumes(trained, pk):
    d, r = trained
    summary = json.loads(r.stdout)
    assert len(r.stdout.strip().splitlines()) == 1 and summary["data"] == "digits"
    for name in ("vae.pt", "ldm.pt", "classifier.npz", "train_log.csv", "samples.png", "manifest.json"):
        assert (d / name).exists(), name
    assert set(read_table(d / "train_log.csv").columns) == {"stage", "step", "loss"}
    # the stages are run.cached checkpoints (no hand-written checkpoint loop)
    assert sorted(p.name for p in (d / "checkpoints").iterdir()) == ["classifier.npz", "ldm.pt", "vae.pt"]
    # an interrupted run (outputs gone, checkpoints kept) resumes from its checkpoints to the same log
    before = (d / "train_log.csv").read_bytes()
    for name in ("manifest.json", "vae.pt", "ldm.pt", "train_log.csv"):
        (d / name).unlink()
    args = [*TRAIN, "--run-dir", d]
    assert pk("ldsmc-train", *args).exit_code == 1  # unfinished run: needs --resume or --force
    r = pk("ldsmc-train", *args, "--resume")
    assert r.exit_code == 0, r.stderr
    assert (d / "train_log.csv").read_bytes() == before


def test_restore_outputs_and_same_seed(model, pk, tmp_path):
    d, _ = model
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        r = pk("ldsmc-restore", "--model", d, "--n-images", "4", "--particles", "3", *FAST, "--seed", "2", "--run-dir", out)
        assert r.exit_code == 0, r.stderr
        assert len(r.stdout.strip().splitlines()) == 1 and json.loads(r.stdout)["method"] == "ldsmc"
        outs.append(out)
    for f in ("restored.npy", "particles.npy", "weights.npy", "grid.png", "ess.csv", "metrics.json", "timing.csv"):
        assert (outs[0] / f).exists(), f
    assert np.load(outs[0] / "particles.npy").shape == (4, 3, 1, 16, 16)
    # same seed, same bytes in every data file: wall times live in timing.csv and the manifest only
    for f in ("restored.npy", "particles.npy", "weights.npy", "truth.npy", "measurements.npy", "ess.csv",
              "metrics.json"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    m = read_json(outs[0] / "metrics.json")
    assert {"psnr", "ssim", "masked_mse", "accuracy", "fd", "residual", "ess_mean"} <= set(m)
    assert not {"seconds", "seconds_per_image"} & set(m)
    assert m["steps"] == 5 and m["particles"] == 3
    assert read_json(outs[0] / "manifest.json")["extra"]["timing"]["seconds"] > 0
    assert len(read_table(outs[0] / "ess.csv")) == 6


def test_restore_user_images_and_bench(model, pk, tmp_path):
    d, _ = model
    imgs = np.random.default_rng(0).uniform(-1, 1, size=(3, 1, 16, 16)).astype(np.float32)
    np.save(tmp_path / "mine.npy", imgs)
    r = pk("ldsmc-restore", "--model", d, "--images", tmp_path / "mine.npy", "--task", "sr2", "--method", "ldps",
           *FAST, "--run-dir", tmp_path / "u")
    assert r.exit_code == 0, r.stderr
    assert "accuracy" not in read_json(tmp_path / "u" / "metrics.json")  # no labels for user images
    # a user's own prior: a Python file whose build_prior() returns a LatentPrior
    user = tmp_path / "myprior.py"
    user.write_text("from paperkit.methods.ldsmc import load_prior\n"
                    f"def build_prior():\n    return load_prior({str(d)!r})\n")
    r = pk("ldsmc-restore", "--model", user, "--n-images", "2", "--particles", "2", *FAST, "--run-dir", tmp_path / "own")
    assert r.exit_code == 0, r.stderr
    (tmp_path / "broken.py").write_text("x = 1\n")
    r = pk("ldsmc-restore", "--model", tmp_path / "broken.py", "-q", "--run-dir", tmp_path / "own2")
    assert r.exit_code == 3 and "build_prior" in r.stderr
    r = pk("ldsmc-bench", "--model", d, "--n-images", "4", "--particles", "2", *FAST, "--n-seeds", "2", "--methods",
           "ldsmc,ltds,ldps,pfld,latentdaps", "--langevin-steps", "2", "--run-dir", tmp_path / "bench")
    assert r.exit_code == 0, r.stderr
    rows = read_table(tmp_path / "bench" / "bench.csv")
    assert list(rows.column("method")) == ["ldsmc", "ltds", "ldps", "pfld", "latentdaps"]
    assert (tmp_path / "bench" / "bench.png").exists()
    acc = rows.column("accuracy")
    np.testing.assert_allclose(rows.column("accuracy_se"), [np.std(
        [r["accuracy"] for r in read_table(tmp_path / "bench" / "runs.csv").records() if r["method"] == m], ddof=1)
        / np.sqrt(2) for m in rows.column("method")], atol=1e-9)
    assert len(acc) == 5 and len(read_table(tmp_path / "bench" / "runs.csv")) == 10
    for name in ("runs.csv", "bench.csv"):  # wall times only in timing.csv
        assert not any("seconds" in c for c in read_table(tmp_path / "bench" / name).columns), name
    assert len(read_table(tmp_path / "bench" / "timing.csv")) == 10


def test_bad_input(model, pk, tmp_path):
    d, _ = model
    base = ["ldsmc-restore", "--model", d, "--n-images", "2", *FAST]

    def err(*extra, code=3, match=""):
        r = pk(*base, *extra, "--run-dir", tmp_path / f"r{len(list(tmp_path.iterdir()))}")
        assert r.exit_code == code, (extra, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("paperkit ldsmc-restore: error:"), r.stderr
        assert match in lines[0], lines[0]

    np.save(tmp_path / "big.npy", np.zeros((2, 1, 32, 32), np.float32))
    np.save(tmp_path / "rgb.npy", np.zeros((2, 3, 16, 16), np.float32))
    np.save(tmp_path / "full.npy", np.zeros((16, 16), np.float32))
    np.save(tmp_path / "none.npy", np.ones((16, 16), np.float32))
    err("--images", tmp_path / "big.npy", match="16×16")
    err("--images", tmp_path / "rgb.npy", match="channel")
    err("--mask", tmp_path / "full.npy", match="covers everything")
    err("--mask", tmp_path / "none.npy", match="covers nothing")
    # bad option values are usage errors (exit 2), bad files input errors (exit 3); one line each
    err("--tau", "0", code=2, match="--tau")
    err("--tau", "-0.1", code=2, match="--tau")
    err("--particles", "0", code=2, match="--particles")
    err("--rho", "nan", code=2, match="--rho")
    err("--zeta", "inf", code=2, match="--zeta")
    err("--langevin-lr", "3", code=2, match="--langevin-lr")
    err("--pfld-stage", "0", code=2, match="--pfld-stage")
    err("--cauchy-scale", "0", code=2, match="--cauchy-scale")
    err("--ode-steps", "0", code=2, match="--ode-steps")
    err("--box", "16", code=2, match="covers everything")
    err("--box", "100", code=2, match="covers everything")
    err("--device", "cuda", code=2, match="CPU")
    err("--steps", "100000", code=2, match="199 usable diffusion steps")
    err("--particles", "1000000000", code=2, match="--max-memory-gb")
    np.save(tmp_path / "small_mask.npy", np.ones((8, 8), np.float32))
    err("--mask", tmp_path / "small_mask.npy", match="small_mask.npy")
    np.save(tmp_path / "text.npy", np.array([["a"] * 16] * 16))
    err("--images", tmp_path / "text.npy", match="text.npy")
    err("--mask", tmp_path / "text.npy", match="text.npy")
    r = pk("ldsmc-restore", "--model", tmp_path / "no_such_model", "-q", "--run-dir", tmp_path / "rm")
    assert r.exit_code == 3 and len(r.stderr.strip().splitlines()) == 1 and "no_such_model" in r.stderr
    r = pk("ldsmc-restore", "--model", tmp_path / "no_such.py", "-q", "--run-dir", tmp_path / "rm")
    assert r.exit_code == 3 and len(r.stderr.strip().splitlines()) == 1 and "no such file" in r.stderr
    bad = tmp_path / "badmodel"
    bad.mkdir()
    import shutil

    shutil.copy(d / "vae.pt", bad / "vae.pt")
    (bad / "ldm.pt").write_bytes(b"not a checkpoint")
    r = pk("ldsmc-restore", "--model", bad, "-q", "--run-dir", tmp_path / "rb")
    assert r.exit_code == 3 and len(r.stderr.strip().splitlines()) == 1 and "ldm.pt" in r.stderr


def test_python_model_file_only_from_the_command_line(model, pk, tmp_path):
    """--model FILE.py runs the file: refused from --config and from the environment (exit 2), before running it."""
    d, _ = model
    marker = tmp_path / "ran.txt"
    user = tmp_path / "prior.py"
    user.write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                    "from paperkit.methods.ldsmc import load_prior\n"
                    f"def build_prior():\n    return load_prior({str(d)!r})\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"model: {user}\n")
    r = pk("ldsmc-restore", "--config", cfg, "-q", "--run-dir", tmp_path / "a")
    assert r.exit_code == 2 and "command line" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = pk("ldsmc-bench", "-q", "--run-dir", tmp_path / "b", env={"PAPERKIT_LDSMC_BENCH_MODEL": str(user)})
    assert r.exit_code == 2 and "PAPERKIT_LDSMC_BENCH_MODEL" in r.stderr
    assert not marker.exists() and not (tmp_path / "a").exists()
    r = pk("ldsmc-restore", "--config", cfg, "--model", user, "--n-images", "2", "--particles", "2", *FAST,
           "--run-dir", tmp_path / "c")
    assert r.exit_code == 0, r.stderr
    assert marker.exists()


@pytest.mark.parametrize("args, text", [
    (["--methods", "ldsmc,zz"], "zz"),
    (["--sweep", "particles", "--values", "a,b"], "'a'"),
    (["--sweep", "particles", "--values", "1.5,2"], "whole numbers"),
    (["--sweep", "rho", "--values", "0.5,2"], "rho"),
    (["--sweep", "particles"], "--values"),
    (["--seeds", "3"], "--seeds"),
    (["-N", "3"], "-N"),
    (["--threads", "1"], "--threads"),
])
def test_bench_bad_options_are_usage_errors(model, pk, tmp_path, args, text):
    d, _ = model
    r = pk("ldsmc-bench", "--model", d, *args, "-q", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert text in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_train_refuses_absurd_sizes_up_front(pk, tmp_path):
    r = pk("ldsmc-train", "--vae-width", "100000000", "-q", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "--max-memory-gb" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
    for old in (["--batch", "32"], ["--threads", "1"], ["--T", "50"]):
        assert pk("ldsmc-train", *old, "-q", "--run-dir", tmp_path / "r").exit_code == 2, old


def test_cli_method_list_matches_the_library():
    from paperkit.methods.ldsmc.restore import METHODS
    from paperkit_cli.commands._ldsmc_common import METHODS as CLI_METHODS

    assert CLI_METHODS == METHODS


@pytest.fixture(scope="module")
def bad_models(model, tmp_path_factory):
    """Copies of the tiny model folder, each with one bad field (from the audit: all were exit 70)."""
    import shutil

    import torch

    d, _ = model
    root = tmp_path_factory.mktemp("ldsmc_bad_models")
    c = dict(np.load(d / "classifier.npz"))
    v = torch.load(d / "vae.pt", weights_only=True)
    m = torch.load(d / "ldm.pt", weights_only=True)
    cases = {
        "noW1": ("classifier.npz", {k: x for k, x in c.items() if k != "W1"}, "no W1 array"),
        "clfshape": ("classifier.npz", dict(c, W2=c["W2"][:3]), "W2 has shape (3, 10)"),
        "clfnan": ("classifier.npz", dict(c, W1=c["W1"] * np.nan), "'W1' hold NaN"),
        "vaecfg": ("vae.pt", dict(v, config=dict(v["config"], bogus=1)), "unknown key(s) ['bogus']"),
        "vaewidth": ("vae.pt", dict(v, config=dict(v["config"], width=10**9)), "config.width = 1000000000"),
        "noshift": ("vae.pt", {k: x for k, x in v.items() if k != "shift"}, "no 'shift' entry"),
        "scale0": ("vae.pt", dict(v, scale=torch.zeros(())), "scale = 0.0 is out of range"),
        "vaenan": ("vae.pt", dict(v, state_dict={k: x * np.nan for k, x in v["state_dict"].items()}), "NaN"),
        "schedT": ("ldm.pt", dict(m, schedule=dict(m["schedule"], T=-5)), "schedule.T = -5"),
        "schedbeta": ("ldm.pt", dict(m, schedule=dict(m["schedule"], beta_end=5.0)), "schedule.beta_end = 5.0"),
        "ldmwidth": ("ldm.pt", dict(m, config=dict(m["config"], width=7)), "do not match the model's shapes"),
    }
    out = {}
    for name, (file, content, message) in cases.items():
        folder = root / name
        folder.mkdir()
        for f in ("vae.pt", "ldm.pt", "classifier.npz"):
            shutil.copy(d / f, folder / f)
        if file.endswith(".npz"):
            np.savez(folder / file, **content)
        else:
            torch.save(content, folder / file)
        out[name] = (folder, file, message)
    return out


def test_bad_model_folder_contents_exit_3_before_the_run_dir(bad_models, pk, tmp_path):
    """Every field loaded from --model is checked in prepare: exit 3, one line naming the file and the field,
    no run dir (they were exit 70, several after the run dir existed)."""
    for name, (folder, file, message) in bad_models.items():
        for command, extra in (("ldsmc-restore", []), ("ldsmc-bench", ["--methods", "lsq"])):
            out = tmp_path / f"{command}_{name}"
            r = pk(command, "--model", folder, *extra, "--particles", "2", "--n-images", "2", *FAST, "--run-dir", out)
            assert r.exit_code == 3, (name, command, r.exit_code, r.stderr)
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and f"{folder / file}: " in lines[0] and message in lines[0], (name, r.stderr)
            assert not out.exists(), name


@pytest.mark.parametrize("args, text", [
    (["--sweep", "kappa1", "--values", "1e30"], "--kappa1"),   # ran with κ1 = 1e30, exit 0
    (["--sweep", "rho", "--values", "0.5,1.5"], "--rho"),
    (["--sweep", "particles", "--values", "0"], "--particles"),
    (["--values", "1,2"], "--sweep"),                          # --values without --sweep was ignored
    (["--n-images", "1000000000000"], "test split has 205 images"),  # was silently clamped to 205
])
def test_bench_sweep_values_keep_the_options_ranges(model, pk, tmp_path, args, text):
    d, _ = model
    r = pk("ldsmc-bench", "--model", d, "--methods", "lsq", "--particles", "1", "--n-images", "2", "--steps", "1",
           "--lsq-iters", "1", "-j", "1", "-q", *args, "--run-dir", tmp_path / "r")
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert text in r.stderr and ("--values" in r.stderr or "--n-images" in r.stderr), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_sweep_ranges_match_the_options(model):
    """The library's sweep ranges are the CLI options' own (gibbs 10^9 ran until killed)."""
    import math

    from paperkit.core.errors import UsageError
    from paperkit.methods.ldsmc.run import SWEEP_RANGES, LdsmcBenchSettings, prepare_ldsmc_restore
    from paperkit_cli.main import load_command

    params = {p.name: p.type for p in load_command("ldsmc-bench").params}
    for name, (low, high) in SWEEP_RANGES.items():
        t = params[name]
        assert (t.min, t.max if t.max is not None and math.isfinite(t.max) else None) == (low, high), name
    d, _ = model
    with pytest.raises(UsageError, match="--values 1000000000: gibbs must lie in"):
        prepare_ldsmc_restore(LdsmcBenchSettings(sweep="gibbs", values=(1e9,), n_images=1), d)


def test_sweep_values_that_print_alike_get_their_own_stage(model):
    """0.1 and 0.1000001 were both 'rho=0.1' (one checkpoint, one result reused); ordinary values keep their
    names (older run dirs resume)."""
    from paperkit.methods.ldsmc.run import LdsmcBenchSettings, _stage_name, prepare_ldsmc_restore

    d, _ = model
    inputs = prepare_ldsmc_restore(LdsmcBenchSettings(sweep="rho", values=(0.1, 0.1000001, 0.25), n_images=1), d)
    names = [name for name, _, _ in inputs.entries]
    assert names == ["rho=0.1", "rho=0.1000001", "rho=0.25"]
    assert len({_stage_name(n) for n in names}) == 3
    inputs = prepare_ldsmc_restore(LdsmcBenchSettings(sweep="particles", values=(1.0, 1000000.0), n_images=1), d)
    assert [name for name, _, _ in inputs.entries] == ["particles=1", "particles=1000000"]


def test_train_without_a_gpu_refuses_cuda_up_front(pk, tmp_path, monkeypatch):
    """--device cuda with no GPU was exit 1 after the run dir was created."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    r = pk("ldsmc-train", *TRAIN, "--device", "cuda", "--run-dir", tmp_path / "r")
    assert r.exit_code == 2 and "--device cuda" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "r").exists()


def test_train_iterations_have_an_upper_bound(pk, tmp_path):
    """--vae-iters/--ldm-iters 10^12 ran until killed: bounded far above the examples' 1500 and 4000."""
    from paperkit_cli.main import load_command

    params = {p.name: p.type for p in load_command("ldsmc-train").params}
    assert params["vae_iters"].max is not None and params["ldm_iters"].max is not None  # first: else it hangs
    assert min(params["vae_iters"].max, params["ldm_iters"].max) >= 100_000
    for opt in ("--vae-iters", "--ldm-iters"):
        r = pk("ldsmc-train", *TRAIN, opt, str(10**12), "--run-dir", tmp_path / "r")
        assert r.exit_code == 2 and opt in r.stderr and not (tmp_path / "r").exists(), r.stderr


def test_restore_one_image_has_no_frechet_distance(model, pk, tmp_path):
    """One digits image: the Fréchet distance (a covariance) is left out; it was NaN, then exit 70."""
    d, _ = model
    r = pk("ldsmc-restore", "--model", d, "--n-images", "1", "--particles", "1", "--steps", "1", "-j", "1", "-q",
           "--run-dir", tmp_path / "r")
    assert r.exit_code == 0, r.stderr
    m = read_json(tmp_path / "r" / "metrics.json")
    assert "fd" not in m and "accuracy" in m
