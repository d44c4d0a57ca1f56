"""``paperkit ldsmc-train``: train the small latent diffusion prior (conv VAE + latent DDPM) offline."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("ldsmc-train", short_help="Train the LD-SMC prior offline: a conv VAE and a latent DDPM.")
@click.option("--data", type=click.Choice(["digits", "shapes"]), default="digits", show_default=True,
              help="Training images: sklearn digits upsampled to 16×16, or procedurally rendered shapes.")
@click.option("--vae-iters", type=click.IntRange(min=1), default=1500, show_default=True, help="VAE Adam steps.")
@click.option("--ldm-iters", type=click.IntRange(min=1), default=4000, show_default=True,
              help="Latent DDPM Adam steps.")
@click.option("--vae-width", type=click.IntRange(min=4), default=32, show_default=True,
              help="Channels of the VAE's 4×4 and 8×8 stages.")
@click.option("--ldm-width", type=click.IntRange(min=8), default=256, show_default=True,
              help="Width of the ε-network's MLP blocks.")
@click.option("--T", "T", type=click.IntRange(min=2), default=200, show_default=True,
              help="Diffusion steps of the linear β schedule (1e-4 → 0.02).")
@click.option("--batch", type=click.IntRange(min=2), default=128, show_default=True, help="Batch size (both stages).")
@click.option("--classifier-iters", type=click.IntRange(min=1), default=300, show_default=True,
              help="Training epochs of the digits classifier behind the accuracy and Fréchet metrics.")
@click.option("--threads", type=click.IntRange(min=0), default=0, show_default=True,
              help="torch CPU threads; 0 leaves torch's default. Results do not depend on it.")
@options.seed_option
@options.run_dir_options
def cli(data, vae_iters, ldm_iters, vae_width, ldm_width, T, batch, classifier_iters, threads, seed, run_dir, resume, force):
    """Train the prior LD-SMC samples from: a conv VAE (16×16 → 2×4×4, KL weight 1e-3), then an ε-network on
    its standardised latents (sinusoidal time embedding, linear β schedule), and for digits the classifier
    behind the accuracy and Fréchet metrics.

    Writes to DIR: vae.pt, ldm.pt, classifier.npz (digits), train_log.csv (stage, step, loss),
    samples.png (prior samples by DDIM η = 1), checkpoints every few hundred steps; --resume continues an
    interrupted run from its last checkpoint with the same batches. Prints one JSON line on stdout.

    \b
    Examples:
      $ paperkit ldsmc-train --data digits --run-dir model/
      $ paperkit ldsmc-train --vae-iters 300 --ldm-iters 800 --run-dir tiny/
    """
    import json

    import torch

    from paperkit.core import plots, tables
    from paperkit.core.progress import progress
    from paperkit.methods.ldsmc import train as tr
    from paperkit.methods.ldsmc.data import load_dataset
    from paperkit.methods.ldsmc.metrics import DigitsClassifier
    from paperkit.methods.ldsmc.pipeline import CLASSIFIER_FILE, save_classifier
    from paperkit.methods.ldsmc.plots import comparison_grid
    from paperkit.methods.ldsmc.sampling import sample_prior
    from paperkit_cli import runtime

    if threads:
        torch.set_num_threads(threads)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("threads",))
    x_train, y_train = load_dataset(data, "train", seed)
    x_test, _ = load_dataset(data, "test", seed)
    logs = []

    def stage(name, iters, fit):
        ck = f"{name}_state.pt"
        state = run.load_checkpoint(ck) if run.resumed and run.has_checkpoint(ck) else None
        with progress(total=iters, desc=f"ldsmc-train {name}", unit="step",
                      initial=int(state["step"]) if state else 0) as bar:
            out = fit(state, lambda step, loss: (bar.update(1), bar.set_postfix(loss=f"{loss:.4f}")),
                      lambda s: run.save_checkpoint(ck, s))
        logs.extend({"stage": name, **r} for r in out[-1])
        return out

    vae, _ = stage("vae", vae_iters, lambda st, on, sv: tr.train_vae(
        x_train, iters=vae_iters, batch=batch, width=vae_width, seed=seed, state=st, on_step=on, save=sv))
    latents, shift, scale = tr.latent_stats(vae, x_train)
    rmse = tr.reconstruction_rmse(vae, x_test)
    eps, sched, _ = stage("ldm", ldm_iters, lambda st, on, sv: tr.train_ldm(
        (latents - shift) / scale, T=T, iters=ldm_iters, batch=batch * 2, width=ldm_width, seed=seed, state=st,
        on_step=on, save=sv))
    tr.save_vae(run.file(tr.VAE_FILE), vae, shift=shift, scale=scale, recon_rmse=rmse, data=data)
    tr.save_ldm(run.file(tr.LDM_FILE), eps, sched)
    acc = None
    if data == "digits":
        clf = DigitsClassifier(seed=seed).fit(x_train, y_train, max_iter=classifier_iters)
        save_classifier(run.file(CLASSIFIER_FILE), clf)
        acc = clf.accuracy(x_test, load_dataset(data, "test")[1])
    tables.write_table(run.file("train_log.csv"), logs)
    prior = tr.load_prior(run.path)
    samples = sample_prior(prior, 32, steps=50, seed=seed)
    fig = comparison_grid({f"s{i}": samples[i::4] for i in range(4)}, n_rows=8, title=f"{data} prior samples")
    plots.save_figure(fig, run.file("samples.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed)
    options.echo_data(json.dumps({"run_dir": str(run.path), "data": data, "vae_recon_rmse": round(rmse, 5),
                                  "vae_loss": logs[[r["stage"] for r in logs].index("ldm") - 1]["loss"],
                                  "ldm_loss": logs[-1]["loss"], "classifier_accuracy": acc}))
