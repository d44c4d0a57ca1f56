"""``paperkit ldsmc-bench``: every LD-SMC method on one task, side by side, over several seeds."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._ldsmc_common import METHODS, problem_options, sampler_options

SETTINGS = "paperkit.methods.ldsmc.run:LdsmcBenchSettings"


@options.command("ldsmc-bench", short_help="Run every LD-SMC method on one task: bench.csv + bench.png.")
@problem_options
@click.option("--methods", type=options.ListOf(choices=METHODS, unique=True), default=",".join(METHODS),
              show_default=True, help="Methods to compare.")
@click.option("--sweep", type=click.Choice(["particles", "s", "kappa1", "kappa2", "rho", "gibbs", "steps"]),
              default=None, help="Ablation: run LD-SMC once per value of this parameter instead of --methods.")
@click.option("--values", type=options.ListOf(options.FiniteFloat(), unique=True), default=None, metavar="V1,V2,...",
              help="Values of the --sweep parameter.")
@click.option("--n-seeds", type=click.IntRange(min=1, max=1000), default=1, show_default=True,
              help="Repetitions (seed, seed+1, ...): new measurement noise and sampler randomness each.")
@sampler_options
@options.run_dir_options
def cli(model, image_files, mask_file, run_dir, resume, force, **_):
    """Compare LD-SMC with its baselines (LTDS, latent DPS, PSLD, ReSample, bootstrap SMC, pixel least
    squares) on the same images, masks, measurement noise and number of DDIM steps.

    Writes to DIR: runs.csv (one row per method and seed), bench.csv (per method: mean and std over seeds
    of PSNR, SSIM, masked MSE, accuracy, Fréchet digits distance, residual), timing.csv (wall seconds per
    method and seed), bench.png (bars) and grid.png (one restoration per method). Each finished
    (method, seed) is a checkpointed stage; --resume continues. Prints the table on stderr and one JSON
    line on stdout.

    \b
    Examples:
      $ paperkit ldsmc-bench --model model/ --task box --n-images 64 --n-seeds 3 --run-dir bench/
      $ paperkit ldsmc-bench --model model/ --task sr2 --methods ldsmc,ldps,resample --run-dir sr/
      $ paperkit ldsmc-bench --model model/ --sweep particles --values 1,2,4,8 --run-dir n/
    """
    import json

    import torch

    from paperkit.core import plots, tables
    from paperkit.methods.ldsmc.plots import bench_figure, comparison_grid
    from paperkit.methods.ldsmc.run import LdsmcBenchSettings, execute_ldsmc_bench, prepare_ldsmc_restore
    from paperkit_cli import runtime
    from paperkit_cli.commands import _ldsmc_common as common

    common.check_model_source(model)
    s = runtime.settings(LdsmcBenchSettings)
    inputs = prepare_ldsmc_restore(s, model, list(image_files), mask_file)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    result = execute_ldsmc_bench(inputs, run)
    tables.write_table(run.file("runs.csv"), result.rows)
    tables.write_table(run.file("bench.csv"), result.summary)
    tables.write_table(run.file("timing.csv"), result.timing)
    pr = inputs.problems[0]
    title = (f"{pr.op.name}, τ = {s.tau}, N = {s.particles}, {s.steps} steps, {len(pr.truth)} images × "
             f"{s.n_seeds} seeds")
    plots.save_figure(bench_figure(result.summary, title=title), run.file("bench.png"))
    with torch.no_grad():
        meas = pr.op.pinv(pr.y).clamp(-1, 1).numpy()
    plots.save_figure(comparison_grid({"truth": pr.truth, "measured": meas, **result.shown}, title=title),
                      run.file("grid.png"))
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=inputs.files)
    secs = {r["method"]: result.seconds_per_image(r["method"]) for r in result.summary}
    common.report([{**r, "seconds": secs[r["method"]] * len(pr.truth)} for r in result.summary])
    options.echo_data(json.dumps({"run_dir": str(run.path), "task": pr.op.name, "methods": [
        {**{k: r[k] for k in ("method", "psnr", "accuracy", "fd", "residual") if k in r},
         "seconds_per_image": secs[r["method"]]} for r in result.summary]}))
