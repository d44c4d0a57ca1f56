"""``paperkit ferret-recon``: how well shared-randomness reconstruction recovers an update, vs K."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.ferret.run:FerretReconSettings"
# paperkit.methods.ferret.recon's bounds, repeated so that --help does not import torch (a test checks they agree)
MAX_TRIALS = 100_000
MAX_STEPS = 10_000


@options.command("ferret-recon", short_help="Reconstruction study: cosine/relative error vs K, Ferret vs ZO.")
@click.option("--d", "d", type=click.IntRange(min=1), default=100_000, show_default=True, help="Dimension of the update.")
@click.option("--k", type=options.ListOf(click.IntRange(min=1)), default="50,100,200,350,700,1400",
              show_default=True, metavar="K1,K2,...", help="Numbers of bases to try (total over blocks).")
@click.option("--blocks", type=click.IntRange(min=1), default=1, show_default=True,
              help="Equal blocks (block-wise reconstruction, K split by --alloc).")
@click.option("--alloc", type=click.Choice(["norm", "uniform", "dim", "prop2"]), default="norm", show_default=True,
              help="How K is split over blocks: by update norm, equally, by block size, or prop2 (Prop. 2's "
                   "optimum K_l ∝ ||Delta_l||/rho_l).")
@click.option("--trials", type=click.IntRange(1, MAX_TRIALS), default=5, show_default=True, help="Seeds per K.")
@click.option("--steps", type=click.IntRange(1, MAX_STEPS), default=1, show_default=True,
              help="Local gradient steps T making the update (ZO pays its finite-difference error per step).")
@click.option("--zo-eps", type=options.FiniteFloat(min=0.0, min_open=True), default=1e-3, show_default=True,
              help="Finite-difference step of the zeroth-order reconstruction.")
@click.option("--cubic", type=options.FiniteFloat(), default=0.0, show_default=True, metavar="C",
              help="Objective Σ x² + (C/3) Σ x³: with C ≠ 0 the forward differences of the zeroth-order "
                   "estimate are biased by C·eps² per coordinate whatever K is (on Σ x² alone they are not).")
@click.option("--no-zo", is_flag=True, default=False, help="Only Ferret (the zeroth-order one is slow for large d·K).")
@click.option("--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None,
              help="Refuse a --d needing more memory than this [default: 3/4 of RAM].")
@options.seed_option
@options.jobs_option
@options.device_option
@click.option("--run-dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder for recon.csv, recon.png and manifest.json.")
@click.option("--force", is_flag=True, help="Overwrite a previous run in --run-dir.")
def cli(run_dir, force, **_):
    """Measure reconstruction quality against K: Ferret's V·gamma vs a zeroth-order estimate.

    The update is T gradient steps on f(x) = Σ x_i² from a random x (the paper's App. C.5 study).
    Writes DIR/recon.csv (method, K, cosine mean/std, relative error, norm of the mean's error,
    variance over trials, bias with the trials' noise taken out, and sqrt(K/d), the cosine a random
    projection should reach), DIR/recon.png (cosine, error vs K) and DIR/recon_bias.png (bias and
    standard deviation vs K); prints the table on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit ferret-recon --d 100000 --k 350,1400 --trials 20 --no-zo --run-dir recon/
      $ paperkit ferret-recon --d 20000 --k 50,200,800 --blocks 4 --steps 5 --run-dir recon-zo/
      $ paperkit ferret-recon --d 200 --k 25,100,400,1600 --trials 200 --cubic 1 --zo-eps 0.3 --run-dir bias/
    """
    import json

    from paperkit.core import plots, tables
    from paperkit.methods.ferret.plots import bias_variance_figure, recon_figure
    from paperkit.methods.ferret.run import FerretReconSettings, execute_ferret_recon, prepare_ferret_recon
    from paperkit_cli import runtime

    s = runtime.settings(FerretReconSettings)
    inputs = prepare_ferret_recon(s)   # K, blocks and memory refused before the run dir exists
    run = runtime.start_run(run_dir, force=force, resume_free=("max_memory_gb",))
    rows = execute_ferret_recon(inputs, run).rows
    tables.write_table(run.file("recon.csv"), rows)
    plots.save_figure(recon_figure(rows, title=f"d = {s.d}, {s.blocks} block(s), T = {s.steps}"), run.file("recon.png"))
    plots.save_figure(bias_variance_figure(rows, title=f"d = {s.d}, T = {s.steps}, cubic {s.cubic:g}, "
                                                       f"eps {s.zo_eps:g}"), run.file("recon_bias.png"))
    runtime.write_manifest(run_dir=run.path, seed=s.seed, extra={"device": str(inputs.device)})
    options.report_table(rows, [("method", "method", ""), ("k", "K", "d"), ("cosine_mean", "cosine", ".4f"),
                                ("rel_error_mean", "rel.err", ".3f"), ("bias_debiased", "bias", ".4f"),
                                ("variance", "var", ".3g")])
    options.echo_data(json.dumps({"run_dir": str(run.path), "rows": [
        {k: r[k] for k in ("method", "k", "cosine_mean", "rel_error_mean", "bias_debiased", "variance")} for r in rows]}))
