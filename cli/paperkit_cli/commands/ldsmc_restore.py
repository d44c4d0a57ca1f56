"""``paperkit ldsmc-restore``: solve an inverse problem with LD-SMC or a baseline on a latent diffusion prior."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._ldsmc_common import METHODS, problem_options, sampler_options

SETTINGS = "paperkit.methods.ldsmc.run:LdsmcRestoreSettings"


@options.command("ldsmc-restore", short_help="Restore images with LD-SMC (or a baseline) in latent space.")
@problem_options
@click.option("--method", type=click.Choice(METHODS), default="ldsmc", show_default=True,
              help="ldsmc (the paper), ltds (twisted SMC), ldps (latent DPS), psld, pfld (particle-filtered "
                   "PSLD), latentdaps (decoupled annealing), resample, bootstrap (prior-proposal SMC), lsq (pixel "
                   "least squares).")
@sampler_options
@options.run_dir_options
def cli(model, image_files, mask_file, run_dir, resume, force, **_):
    """Restore images from noisy measurements y = A(x) + N(0, τ²) with LD-SMC (Achituve et al., ICML 2025):
    sequential Monte Carlo over the latent diffusion chain with auxiliary observations, a two-phase
    gradient proposal and Gibbs sweeps; or one of its baselines, at the same number of DDIM steps.

    Reads the prior from --model and the images from --images (or the digits test split). Writes to DIR:
    restored.npy (B, C, H, W), particles.npy (B, N, C, H, W), weights.npy (B, N), truth.npy,
    measurements.npy, grid.png (truth | measurement | restored | particles), ess.csv (mean ESS per
    SMC step), metrics.json (PSNR, SSIM, masked MSE, measurement residual, and for digits classifier
    accuracy and Fréchet digits distance, particle spread), timing.csv (wall seconds). Prints the table on
    stderr and one JSON line on stdout. Same seed, same bytes in every data file.

    \b
    Examples:
      $ paperkit ldsmc-restore --model model/ --task box --tau 0.05 --particles 8 --n-images 16 --run-dir r/
      $ paperkit ldsmc-restore --model model/ --method ldps --task sr2 --images mine.npy --run-dir r2/
    """
    import json

    import numpy as np
    import torch

    from paperkit.core import io, plots, tables
    from paperkit.methods.ldsmc.plots import comparison_grid
    from paperkit.methods.ldsmc.run import LdsmcRestoreSettings, execute_ldsmc_restore, prepare_ldsmc_restore
    from paperkit_cli import runtime
    from paperkit_cli.commands import _ldsmc_common as common

    common.check_model_source(model)
    s = runtime.settings(LdsmcRestoreSettings)
    inputs = prepare_ldsmc_restore(s, model, list(image_files), mask_file)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    out = execute_ldsmc_restore(inputs, run)
    res, pr, m = out.restoration, inputs.problems[0], out.metrics
    for name, arr in (("restored", res.restored), ("particles", res.particles), ("weights", res.weights),
                      ("truth", pr.truth), ("measurements", pr.y.numpy())):
        io.write_array(run.file(f"{name}.npy"), arr.astype(np.float32))
    tables.write_table(run.file("ess.csv"), [{"step": i, "ess": float(e)} for i, e in enumerate(res.ess)]
                       if len(res.ess) else {"step": [], "ess": []})
    io.write_json(run.file("metrics.json"), m)
    tables.write_table(run.file("timing.csv"), [{"method": s.method, "seed": s.seed, **out.timing}])
    with torch.no_grad():
        shown = pr.op.pinv(pr.y).clamp(-1, 1).numpy()
    cols = {"truth": pr.truth, "measured": shown, s.method: res.restored}
    for j in range(min(res.particles.shape[1], 4)):
        cols[f"particle {j}"] = res.particles[:, j]
    plots.save_figure(comparison_grid(cols, title=f"{s.method}, {pr.op.name}, τ = {s.tau}, N = {res.particles.shape[1]}"),
                      run.file("grid.png"))
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=inputs.files, extra={"timing": out.timing})
    common.report([{**m, **out.timing}])
    options.echo_data(json.dumps({"run_dir": str(run.path), **{k: v for k, v in {**m, **out.timing}.items()
                                                               if isinstance(v, (int, float, str))}}))
