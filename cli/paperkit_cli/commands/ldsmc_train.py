"""``paperkit ldsmc-train``: train the small latent diffusion prior (conv VAE + latent DDPM) offline."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.ldsmc.run:LdsmcTrainSettings"


@options.command("ldsmc-train", short_help="Train the LD-SMC prior offline: a conv VAE and a latent DDPM.")
@click.option("--data", type=click.Choice(["digits", "shapes"]), default="digits", show_default=True,
              help="Training images: sklearn digits upsampled to 16×16, or procedurally rendered shapes.")
@click.option("--vae-iters", type=click.IntRange(min=1, max=1_000_000), default=1500, show_default=True, help="VAE Adam steps.")
@click.option("--ldm-iters", type=click.IntRange(min=1, max=1_000_000), default=4000, show_default=True,
              help="Latent DDPM Adam steps.")
@click.option("--vae-width", type=click.IntRange(min=4), default=32, show_default=True,
              help="Channels of the VAE's 4×4 and 8×8 stages.")
@click.option("--ldm-width", type=click.IntRange(min=8), default=256, show_default=True,
              help="Width of the ε-network's MLP blocks.")
@click.option("--diffusion-steps", type=click.IntRange(min=2, max=100000), default=200, show_default=True,
              help="Diffusion steps T of the linear β schedule (1e-4 → 0.02).")
@click.option("--batch-size", type=click.IntRange(min=2), default=128, show_default=True,
              help="VAE batch size (the latent DDPM uses twice this).")
@click.option("--classifier-iters", type=click.IntRange(min=1), default=300, show_default=True,
              help="Training epochs of the digits classifier behind the accuracy and Fréchet metrics.")
@click.option("--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None,
              help="Refuse model sizes needing more memory than this [default: 3/4 of RAM].")
@options.seed_option
@options.jobs_option
@options.device_option
@options.run_dir_options
def cli(run_dir, resume, force, **_):
    """Train the prior LD-SMC samples from: a conv VAE (16×16 → 2×4×4, KL weight 1e-3), then an ε-network on
    its standardised latents (sinusoidal time embedding, linear β schedule), and for digits the classifier
    behind the accuracy and Fréchet metrics.

    Writes to DIR: vae.pt, ldm.pt, classifier.npz (digits), train_log.csv (stage, step, loss),
    samples.png (prior samples by DDIM η = 1); each stage (vae, ldm, classifier) is checkpointed when it
    finishes, and --resume continues an interrupted run after its last finished stage. Prints one JSON line
    on stdout.

    \b
    Examples:
      $ paperkit ldsmc-train --data digits --run-dir model/
      $ paperkit ldsmc-train --vae-iters 300 --ldm-iters 800 --run-dir tiny/
    """
    import json

    from paperkit.core import plots, tables
    from paperkit.methods.ldsmc import train as tr
    from paperkit.methods.ldsmc.plots import comparison_grid
    from paperkit.methods.ldsmc.run import (
        CLASSIFIER_FILE,
        LdsmcTrainSettings,
        execute_ldsmc_train,
        prepare_ldsmc_train,
        save_classifier,
    )
    from paperkit_cli import runtime

    s = runtime.settings(LdsmcTrainSettings)
    inputs = prepare_ldsmc_train(s)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",))
    r = execute_ldsmc_train(inputs, run)
    tr.save_vae(run.file(tr.VAE_FILE), r.vae, shift=r.shift, scale=r.scale, recon_rmse=r.recon_rmse, data=s.data)
    tr.save_ldm(run.file(tr.LDM_FILE), r.eps, r.schedule)
    if r.classifier is not None:
        save_classifier(run.file(CLASSIFIER_FILE), r.classifier)
    tables.write_table(run.file("train_log.csv"), r.log)
    fig = comparison_grid({f"s{i}": r.samples[i::4] for i in range(4)}, n_rows=8, title=f"{s.data} prior samples")
    plots.save_figure(fig, run.file("samples.png"))
    runtime.write_manifest(run_dir=run.path, seed=s.seed)
    vae_log = [x for x in r.log if x["stage"] == "vae"]
    options.echo_data(json.dumps({"run_dir": str(run.path), "data": s.data, "vae_recon_rmse": round(r.recon_rmse, 5),
                                  "vae_loss": vae_log[-1]["loss"], "ldm_loss": r.log[-1]["loss"],
                                  "classifier_accuracy": r.classifier_accuracy}))
