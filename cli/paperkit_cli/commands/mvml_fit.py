"""``paperkit mvml-fit``: fit TMvML (tensor classifier + Laplace Tensor Rank) and score it against baselines."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.mvml.run:FitSettings"
METHODS = ("tmvml", "tnn", "ridge", "ridge-view", "ridge-concat", "br-logistic", "mlknn")
METRICS = ("average_precision", "ranking_loss", "one_error", "coverage", "hamming_loss", "micro_f1", "macro_f1")
PATHS = options.ListOf(click.STRING)
Finite = options.FiniteFloat


@options.command("mvml-fit", short_help="Fit a TMvML multi-view multi-label classifier (Laplace Tensor Rank).")
@click.option("--views", type=PATHS, default=None, metavar="F1,F2,...",
              help="Training views, one file per view (.npy/.npz/.csv/.tsv; '-' is stdin).")
@click.option("--labels", default=None, metavar="FILE",
              help="Training labels, 0/1 matrix (samples × labels); a CSV/TSV/JSONL header names the labels.")
@click.option("--label-names", default=None, metavar="FILE",
              help="Label names, one per line (or one comma-separated line), used in outputs and saved in "
                   "model.npz [default: the labels file's header, else 0-based column numbers].")
@click.option("--test-views", type=PATHS, default=None, metavar="F1,F2,...", help="Test views, same order.")
@click.option("--test-labels", default=None, metavar="FILE", help="Test labels (scored when given).")
@click.option("--dataset", type=click.Choice(["digits-mvml", "synthetic", "planted"]), default=None,
              help="Use a built-in dataset instead of --views/--labels.")
@click.option("--cv", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also score K random train/test splits of the training data (mean ± std).")
@click.option("--test-fraction", type=Finite(0, 1, min_open=True, max_open=True), default=0.3,
              show_default=True, help="Test share of each --cv split.")
@click.option("--methods", type=options.ListOf(choices=METHODS), default="tmvml", show_default=True,
              metavar="M1,M2,...", help="What to score: tmvml, tnn, ridge (ablations), ridge-view, ridge-concat, "
                                        "br-logistic, mlknn.")
@click.option("--map", type=click.Choice(["rbf", "pca", "none"]), default="rbf", show_default=True,
              help="How views reach a common width m (reconstructed; see the docs).")
@click.option("--m", type=click.IntRange(min=1), default=64, show_default=True, help="Common width of the views.")
@click.option("--anchors", type=click.Choice(["joint", "per-view"]), default="joint", show_default=True,
              help="rbf: one k-means on all views (aligned features) or one per view.")
@click.option("--whiten/--no-whiten", default=False, show_default=True, help="pca: unit-variance components.")
@click.option("--intercept/--no-intercept", default=True, show_default=True,
              help="Centre features and labels (intercept outside the tensor) or add a bias column.")
@click.option("--penalty", type=click.Choice(["ltr", "tnn", "none"]), default="ltr", show_default=True,
              help="Low-rank penalty on the rotated tensor: Laplace Tensor Rank, tensor nuclear norm, none.")
@click.option("--lam", type=Finite(), default=1.0, show_default=True,
              help="Weight λ of the tensor penalty (> 0 when a penalty uses it).")
@click.option("--delta", type=Finite(), default=10.0, show_default=True, help="LTR scale δ (> 0): 1 − exp(−σ/δ).")
@click.option("--gamma", type=Finite(min=0.0), default=1e-5, show_default=True, help="Ridge weight γ on W (>= 0).")
@click.option("--lam-tnn", type=Finite(min=0.0, min_open=True), default=None,
              help="λ of the 'tnn' ablation (> 0) [default: λ/δ].")
@click.option("--prox", type=click.Choice(["exact", "reweighted"]), default="exact", show_default=True,
              help="LTR proximal step: exact (Lambert W) or reweighted shrinkage.")
@click.option("--reweight-passes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Passes of the reweighted shrinkage.")
@click.option("--init", type=click.Choice(["ridge", "zeros"]), default="ridge", show_default=True,
              help="ADMM start: the per-view ridge solution or zeros.")
@click.option("--mu0", type=Finite(min=0.0, min_open=True), default=1e-3, show_default=True,
              help="Initial ADMM penalty μ (> 0).")
@click.option("--rho", type=Finite(min=1.0), default=1.2, show_default=True, help="Growth of μ per iteration (>= 1).")
@click.option("--mu-max", type=Finite(min=0.0, min_open=True), default=1e8, show_default=True,
              help="Cap on μ (>= --mu0).")
@click.option("--max-iter", type=click.IntRange(min=1), default=200, show_default=True, help="ADMM iterations.")
@click.option("--tol", type=Finite(min=0.0), default=1e-6, show_default=True, help="Stop when max|W − G| < tol.")
@click.option("--threshold", type=Finite(), default=0.5, show_default=True, help="Predict a label when score > this.")
@click.option("--solver", type=click.Choice(["numba", "numpy"]), default="numba", show_default=True,
              help="ADMM kernel: numba, or the plain NumPy reference.")
@click.option("--calibrate", is_flag=True, default=False,
              help="Also map TMvML's scores to probabilities: Platt sigmoids per label, fitted on 30% of the "
                   "training data held out from a second fit; saved in model.npz, probabilities.npy written.")
@click.option("--select", is_flag=True, default=False,
              help="Choose λ and δ (and m, γ with --grid-m / --grid-gamma) by inner K-fold cross-validation of the "
                   "training data (nested inside every --cv split); the chosen values and the inner-CV scores go "
                   "to metrics.json ('select', 'cv.selected'), the summary and the manifest. --lam, --delta, --m, "
                   "--gamma then only set what is not searched.")
@click.option("--select-folds", type=click.IntRange(min=2), default=3, show_default=True,
              help="Inner cross-validation folds of --select.")
@click.option("--select-metric", type=click.Choice(list(METRICS)), default="average_precision", show_default=True,
              help="What --select maximises (minimises for ranking_loss, one_error, coverage, hamming_loss).")
@click.option("--grid-lam", type=options.ListOf(Finite(min=0.0, min_open=True)), default="0.1,1,10",
              show_default=True, metavar="L1,L2,...", help="λ values tried by --select.")
@click.option("--grid-delta", type=options.ListOf(Finite(min=0.0, min_open=True)), default="1,10",
              show_default=True, metavar="D1,D2,...", help="δ values tried by --select (penalty ltr).")
@click.option("--grid-m", type=options.ListOf(click.IntRange(min=1)), default=None, metavar="M1,M2,...",
              help="Also try these widths m with --select [default: --m only].")
@click.option("--grid-gamma", type=options.ListOf(Finite(min=0.0)), default=None, metavar="G1,G2,...",
              help="Also try these ridge weights γ with --select [default: --gamma only].")
@options.jobs_option
@options.seed_option
@options.run_dir_options
def cli(views, labels, label_names, test_views, test_labels, run_dir, resume, force, **_):
    """Fit a TMvML multi-view multi-label classifier (Laplace Tensor Rank).

    Reads training views (one file per view, same rows) and 0/1 labels, or a built-in --dataset; maps
    the views to a common width, fits the per-view classifiers as one tensor by ADMM with a low-rank
    penalty on its rotation, and writes to --run-dir: model.npz, scores.npy (test scores, else training
    scores), metrics.json (test and --cv metrics of every method, with their definitions), trace.csv
    (objective, residual, μ per iteration), convergence.png, splits.csv (with --cv; each split is a stage
    that --resume keeps). Prints the metric table on stderr and one JSON summary line on stdout: the
    methods scored and the average precision of every one of them (test, --cv mean, or training data),
    and the label names.

    Scores are not probabilities. TMvML, its ablations (tnn, ridge) and the ridge baselines give
    least-squares scores, F = (1/V) sum_v X_v W_v + the label's mean, a ridge-type fit to the 0/1
    labels: higher means more likely and a label is predicted when F > --threshold (0.5), but F can
    leave [0, 1] and is not calibrated. br-logistic and mlknn give probabilities. metrics.json and
    model.npz say which is which ('scores'). --calibrate adds Platt scaling (one sigmoid per label,
    fitted on a held-out 30% of the training data): model.npz then carries it, probabilities.npy holds
    the calibrated probabilities, metrics.json its parameters (and with test labels the log loss and
    Brier score against the raw scores clipped to [0, 1]), and mvml-predict adds prob_<label> columns. Label names come from --label-names, else the header of a
    CSV/TSV/JSONL --labels file, else the built-in dataset's; without them labels are numbered from 0
    (views too, in --views order), like every index in paperkit.

    \b
    Examples:
      $ paperkit mvml-fit --dataset digits-mvml --cv 3 --methods tmvml,ridge-view --run-dir runs/digits
      $ paperkit mvml-make --dataset synthetic --run-dir data/syn
      $ paperkit mvml-fit --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy --labels data/syn/labels.npy --run-dir runs/syn
    """
    import json

    from paperkit.methods.mvml.run import FitSettings, execute_fit, prepare_fit
    from paperkit_cli import runtime

    s = runtime.settings(FitSettings)
    inputs = prepare_fit(s, views=views, labels=labels, test_views=test_views, test_labels=test_labels,
                         label_names=label_names)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    result = execute_fit(inputs, run)
    sel = result.report.get("select")
    if sel:
        keys = list(sel["grid"])
        rows = [{**{k: f"{r[k]:g}" for k in keys}, "mean": f"{r['mean']:.4f}", "std": f"{r['std']:.4f}"}
                for r in sel["inner_cv"]]
        chosen = ", ".join(f"{k} = {v:g}" for k, v in sel["chosen"].items())
        options.report_table(rows, [(k, k, "") for k in keys] + [("mean", "mean", ""), ("std", "std", "")],
                             title=f"--select, inner {sel['folds']}-fold CV {sel['metric']} on the training data; "
                                   f"chosen {chosen}:")
    for title, table in result.tables:
        rows = [{"method": method, **{k: _cell(v[k]) for k in METRICS}} for method, v in table.items()]
        options.report_table(rows, [("method", "method", "")] + [(k, k, "") for k in METRICS], title=title)
    extra = None
    if sel or "selected" in result.report.get("cv", {}):
        extra = {"select": {"chosen": sel["chosen"] if sel else None, "metric": s.select_metric,
                            "folds": s.select_folds, "inner_cv": sel["inner_cv"] if sel else None,
                            "cv_chosen": [r["chosen"] for r in result.report.get("cv", {}).get("selected", [])]}}
    runtime.write_manifest(inputs=inputs.files, run_dir=run.path, seed=s.seed, extra=extra)
    options.echo_data(json.dumps(result.summary))


def _cell(value) -> str:
    return f"{value['mean']:.4f}±{value['std']:.4f}" if isinstance(value, dict) else f"{value:.4f}"
