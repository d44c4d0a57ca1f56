"""``paperkit ldsmc-restore``: solve an inverse problem with LD-SMC or a baseline on a latent diffusion prior."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._ldsmc_common import problem_options, sampler_options


@options.command("ldsmc-restore", short_help="Restore images with LD-SMC (or a baseline) in latent space.")
@problem_options
@click.option("--method", type=click.Choice(["ldsmc", "ltds", "ldps", "psld", "resample", "bootstrap", "lsq"]),
              default="ldsmc", show_default=True,
              help="ldsmc (the paper), ltds (twisted SMC), ldps (latent DPS), psld, resample, bootstrap "
                   "(prior-proposal SMC), lsq (pixel least squares).")
@sampler_options
@options.seed_option
@options.run_dir_options
def cli(model_dir, task, tau, image_files, mask_file, n_images, box, box_top, box_left, random_box, missing, method,
        particles, steps, s, kappa1, kappa2, rho, gibbs, loglik, aux_var, refine_iters, lsq_iters, zeta, gamma,
        threads, seed, run_dir, resume, force):
    """Restore images from noisy measurements y = A(x) + N(0, τ²) with LD-SMC (Achituve et al., ICML 2025):
    sequential Monte Carlo over the latent diffusion chain with auxiliary observations, a two-phase
    gradient proposal and Gibbs sweeps; or one of its baselines, at the same number of DDIM steps.

    Reads the prior from --model and the images from --images (or the digits test split). Writes to DIR:
    restored.npy (B, C, H, W), particles.npy (B, N, C, H, W), weights.npy (B, N), truth.npy,
    measurements.npy, grid.png (truth | measurement | restored | particles), ess.csv (mean ESS per
    SMC step), metrics.json (PSNR, SSIM, masked MSE, measurement residual, and for digits classifier
    accuracy and Fréchet digits distance, particle spread, seconds). Prints the table on stderr and one
    JSON line on stdout. Same seed, same results.

    \b
    Examples:
      $ paperkit ldsmc-restore --model model/ --task box --tau 0.05 -N 8 --n-images 16 --run-dir r/
      $ paperkit ldsmc-restore --model model/ --method ldps --task sr2 --images mine.npy --run-dir r2/
    """
    import json

    import numpy as np
    import torch

    from paperkit.core import io, plots, tables
    from paperkit.methods.ldsmc.plots import comparison_grid
    from paperkit.methods.ldsmc.restore import evaluate, restore
    from paperkit_cli import runtime
    from paperkit_cli.commands import _ldsmc_common as common

    if threads:
        torch.set_num_threads(threads)
    prior, clf, truth, labels, op, y = common.setup(model_dir, task, tau, image_files, mask_file, n_images, box,
                                                   box_top, box_left, random_box, missing, particles, seed)
    params = common.restore_params(particles, steps, s, kappa1, kappa2, rho, gibbs, loglik, aux_var, refine_iters,
                                   lsq_iters, zeta, gamma)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("threads",))
    res = restore(method, prior, op, y, tau, params, seed=seed)
    m = evaluate(res, truth, op, y, classifier=clf if labels is not None else None, labels=labels)
    m.update({"task": op.name, "tau": tau, "n_images": len(truth), "particles": res.particles.shape[1],
              "steps": steps, "seed": seed, "vae_recon_rmse": prior.recon_rmse})
    io.write_array(run.file("restored.npy"), res.restored.astype(np.float32))
    io.write_array(run.file("particles.npy"), res.particles.astype(np.float32))
    io.write_array(run.file("weights.npy"), res.weights.astype(np.float32))
    io.write_array(run.file("truth.npy"), truth.astype(np.float32))
    io.write_array(run.file("measurements.npy"), y.numpy().astype(np.float32))
    tables.write_table(run.file("ess.csv"), [{"step": i, "ess": float(e)} for i, e in enumerate(res.ess)]
                   if len(res.ess) else {"step": [], "ess": []})
    io.write_json(run.file("metrics.json"), m)
    with torch.no_grad():
        shown = op.pinv(y).clamp(-1, 1).numpy()
    cols = {"truth": truth, "measured": shown, method: res.restored}
    for j in range(min(res.particles.shape[1], 4)):
        cols[f"particle {j}"] = res.particles[:, j]
    plots.save_figure(comparison_grid(cols, title=f"{method}, {op.name}, τ = {tau}, N = {res.particles.shape[1]}"),
                   run.file("grid.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[*image_files, *([mask_file] if mask_file else [])])
    common.print_table([m])
    options.echo_data(json.dumps({"run_dir": str(run.path), **{k: v for k, v in m.items()
                                                               if isinstance(v, (int, float, str))}}))
