"""``paperkit ferret-recon``: how well shared-randomness reconstruction recovers an update, vs K."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.ferret_train import finite


@options.command("ferret-recon", short_help="Reconstruction study: cosine/relative error vs K, Ferret vs ZO.")
@click.option("--d", "d", type=click.IntRange(min=1), default=100_000, show_default=True, help="Dimension of the update.")
@click.option("--k", "ks", default="50,100,200,350,700,1400", show_default=True, metavar="K1,K2,...",
              help="Numbers of bases to try (total over blocks).")
@click.option("--blocks", "n_blocks", type=click.IntRange(min=1), default=1, show_default=True,
              help="Equal blocks (block-wise reconstruction, K split by --alloc).")
@click.option("--alloc", type=click.Choice(["norm", "uniform", "dim"]), default="norm", show_default=True,
              help="How K is split over blocks.")
@click.option("--trials", type=click.IntRange(min=1), default=5, show_default=True, help="Seeds per K.")
@click.option("--steps", "-T", type=click.IntRange(min=1), default=1, show_default=True,
              help="Local gradient steps making the update (ZO pays its finite-difference error per step).")
@click.option("--zo-eps", type=finite(min=0.0, min_open=True), default=1e-3, show_default=True,
              help="Finite-difference step of the zeroth-order reconstruction.")
@click.option("--no-zo", is_flag=True, help="Only Ferret (the zeroth-order one is slow for large d·K).")
@options.seed_option
@options.jobs_option
@click.option("--run-dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder for recon.csv, recon.png and manifest.json.")
@click.option("--force", is_flag=True, help="Overwrite a previous run in --run-dir.")
def cli(d, ks, n_blocks, alloc, trials, steps, zo_eps, no_zo, seed, jobs, run_dir, force):
    """Measure reconstruction quality against K: Ferret's V·gamma vs a zeroth-order estimate.

    The update is T gradient steps on f(x) = Σ x_i² from a random x (the paper's App. C.5 study).
    Writes DIR/recon.csv (method, K, cosine mean/std, relative error, norm of the mean's error, and
    sqrt(K/d), the cosine a random projection should reach) and DIR/recon.png; prints the table
    on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit ferret-recon --d 100000 --k 350,1400 --trials 20 --no-zo --run-dir recon/
      $ paperkit ferret-recon --d 20000 --k 50,200,800 --blocks 4 --steps 5 --run-dir recon-zo/
    """
    import json

    from paperkit_cli.commands.ferret_train import set_threads

    set_threads(jobs)

    from paperkit.core import plots, tables
    from paperkit.core.errors import ConfigError
    from paperkit.methods.ferret.plots import recon_figure
    from paperkit.methods.ferret.recon import check_memory, recon_study
    from paperkit_cli import runtime

    try:
        k_list = [int(x) for x in ks.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--k '{ks}' is not a comma-separated list of integers") from None
    if not k_list or min(k_list) < 1:
        raise ConfigError(f"--k '{ks}': every K must be a positive integer")
    if n_blocks > d:
        raise ConfigError(f"--blocks {n_blocks} is out of range; expected 1..{d}")
    check_memory(d, n_blocks)  # refuse before allocating (or making the run dir)
    run = runtime.start_run(run_dir, force=force)
    rows = recon_study(d, k_list, trials=trials, n_blocks=n_blocks, alloc=alloc, zo=not no_zo, zo_eps=zo_eps,
                       steps=steps, seed=seed)
    tables.write_table(run.file("recon.csv"), rows)
    plots.save_figure(recon_figure(rows, title=f"d = {d}, {n_blocks} block(s), T = {steps}"), run.file("recon.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed)
    click.echo("\n".join([f"{'method':<13} {'K':>6} {'cosine':>8} {'rel.err':>8}"] +
                         [f"{r['method']:<13} {r['k']:>6} {r['cosine_mean']:>8.4f} {r['rel_error_mean']:>8.3f}"
                          for r in rows]), err=True)
    options.echo_data(json.dumps({"run_dir": str(run.path), "rows": [
        {k: r[k] for k in ("method", "k", "cosine_mean", "rel_error_mean")} for r in rows]}))
