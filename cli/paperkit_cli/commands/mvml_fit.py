"""``paperkit mvml-fit``: fit TMvML (tensor classifier + Laplace Tensor Rank) and score it against baselines."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("mvml-fit", short_help="Fit a TMvML multi-view multi-label classifier (Laplace Tensor Rank).")
@click.option("--views", default=None, metavar="FILES", help="Training views, comma-separated (.npy/.npz/.csv/.tsv).")
@click.option("--labels", default=None, metavar="FILE", help="Training labels, 0/1 matrix (samples × labels).")
@click.option("--test-views", default=None, metavar="FILES", help="Test views, comma-separated, same order.")
@click.option("--test-labels", default=None, metavar="FILE", help="Test labels (scored when given).")
@click.option("--dataset", type=click.Choice(["digits-mvml", "synthetic", "planted"]), default=None,
              help="Use a built-in dataset instead of --views/--labels.")
@click.option("--cv", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also score K random train/test splits of the training data (mean ± std).")
@click.option("--test-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.3,
              show_default=True, help="Test share of each --cv split.")
@click.option("--methods", default="tmvml", show_default=True, metavar="LIST",
              help="What to score: tmvml, tnn, ridge (ablations), ridge-view, ridge-concat, br-logistic, mlknn.")
@click.option("--map", "map_", type=click.Choice(["rbf", "pca", "none"]), default="rbf", show_default=True,
              help="How views reach a common width m (reconstructed; see the docs).")
@click.option("--m", type=click.IntRange(min=1), default=64, show_default=True, help="Common width of the views.")
@click.option("--anchors", type=click.Choice(["joint", "per-view"]), default="joint", show_default=True,
              help="rbf: one k-means on all views (aligned features) or one per view.")
@click.option("--whiten/--no-whiten", default=False, show_default=True, help="pca: unit-variance components.")
@click.option("--intercept/--no-intercept", default=True, show_default=True,
              help="Centre features and labels (intercept outside the tensor) or add a bias column.")
@click.option("--penalty", type=click.Choice(["ltr", "tnn", "none"]), default="ltr", show_default=True,
              help="Low-rank penalty on the rotated tensor: Laplace Tensor Rank, tensor nuclear norm, none.")
@click.option("--lam", type=float, default=1.0, show_default=True, help="Weight λ of the tensor penalty (> 0).")
@click.option("--delta", type=float, default=10.0, show_default=True, help="LTR scale δ (> 0): 1 − exp(−σ/δ).")
@click.option("--gamma", type=float, default=1e-5, show_default=True, help="Ridge weight γ on W (>= 0).")
@click.option("--lam-tnn", type=float, default=None, help="λ of the 'tnn' ablation [default: λ/δ].")
@click.option("--prox", type=click.Choice(["exact", "reweighted"]), default="exact", show_default=True,
              help="LTR proximal step: exact (Lambert W) or reweighted shrinkage.")
@click.option("--reweight-passes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Passes of the reweighted shrinkage.")
@click.option("--init", type=click.Choice(["ridge", "zeros"]), default="ridge", show_default=True,
              help="ADMM start: the per-view ridge solution or zeros.")
@click.option("--mu0", type=float, default=1e-3, show_default=True, help="Initial ADMM penalty μ.")
@click.option("--rho", type=float, default=1.2, show_default=True, help="Growth of μ per iteration (>= 1).")
@click.option("--mu-max", type=float, default=1e8, show_default=True, help="Cap on μ.")
@click.option("--max-iter", type=click.IntRange(min=1), default=200, show_default=True, help="ADMM iterations.")
@click.option("--tol", type=float, default=1e-6, show_default=True, help="Stop when max|W − G| < tol.")
@click.option("--threshold", type=float, default=0.5, show_default=True, help="Predict a label when score > this.")
@click.option("--solver", type=click.Choice(["numba", "numpy"]), default="numba", show_default=True,
              help="ADMM kernel: numba, or the plain NumPy reference.")
@options.jobs_option
@options.seed_option
@options.run_dir_options
def cli(views, labels, test_views, test_labels, dataset, cv, test_fraction, methods, map_, m, anchors, whiten,
        intercept, penalty, lam, delta, gamma, lam_tnn, prox, reweight_passes, init, mu0, rho, mu_max, max_iter,
        tol, threshold, solver, jobs, seed, run_dir, resume, force):
    """Fit a TMvML multi-view multi-label classifier (Laplace Tensor Rank).

    Reads training views (one file per view, same rows) and 0/1 labels, or a built-in --dataset; maps
    the views to a common width, fits the per-view classifiers as one tensor by ADMM with a low-rank
    penalty on its rotation, and writes to --run-dir: model.npz, scores.npy (test scores, else training
    scores), metrics.json (test and --cv metrics of every method, with their definitions), trace.csv
    (objective, residual, μ per iteration), convergence.png, splits.csv (with --cv). Prints the metric
    table on stderr and one JSON summary line on stdout.

    \b
    Examples:
      $ paperkit mvml-fit --dataset digits-mvml --cv 3 --methods tmvml,ridge-view --run-dir runs/digits
      $ paperkit mvml-make --dataset synthetic --out data/syn
      $ paperkit mvml-fit --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy --labels data/syn/labels.npy --run-dir runs/syn
    """
    from paperkit.core.errors import UsageError
    from paperkit.methods.mvml import cli_run
    from paperkit_cli import runtime

    if dataset is None and not (views and labels):
        raise UsageError("give --views and --labels, or --dataset")
    if dataset is not None and (views or labels):
        raise UsageError("--dataset and --views/--labels are mutually exclusive")
    if test_labels and not test_views:
        raise UsageError("--test-labels needs --test-views")
    params = dict(map=map_, m=m, anchors=anchors, whiten=whiten, intercept=intercept, penalty=penalty, lam=lam,
                  delta=delta, gamma=gamma, prox=prox, reweight_passes=reweight_passes, init=init, mu0=mu0, rho=rho,
                  mu_max=mu_max, max_iter=max_iter, tol=tol, threshold=threshold, solver=solver, seed=seed,
                  n_jobs=jobs)
    holder = {}

    def start():
        holder["run"] = runtime.start_run(run_dir, resume=resume, force=force)
        return holder["run"]

    summary, inputs, table = cli_run.fit_command(start, params, views=views, labels=labels, test_views=test_views,
                                          test_labels=test_labels, dataset=dataset, cv=cv,
                                          test_fraction=test_fraction, methods=methods, lam_tnn=lam_tnn, seed=seed)
    if table and not runtime.meta_flag("quiet"):
        click.echo(table, err=True)
    runtime.write_manifest(inputs=inputs, run_dir=holder["run"].path, seed=seed)
    import json

    options.echo_data(json.dumps(summary))
