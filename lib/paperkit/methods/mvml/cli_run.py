"""The work behind ``paperkit mvml-fit`` and ``mvml-make``: read, fit, score, write a run directory.

Kept in the library so the commands stay thin; nothing here prints or exits.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from paperkit.core import io, plots, tables
from paperkit.core.errors import InputError
from paperkit.core.progress import progress
from paperkit.datasets import train_test_indices
from paperkit.methods.mvml import data as _data
from paperkit.methods.mvml import experiment, metrics
from paperkit.methods.mvml.estimator import TMvML, check_labels, check_views
from paperkit.methods.mvml.files import read_matrix, read_views, split_paths
from paperkit.methods.mvml.views import check_fit_size

log = logging.getLogger(__name__)
TABLE_METRICS = ("average_precision", "ranking_loss", "one_error", "coverage", "hamming_loss", "micro_f1", "macro_f1")


def load_training(views: str | None, labels: str | None, dataset: str | None, seed: int
                  ) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
    if dataset is not None:
        d = _data.load(dataset, np.random.default_rng(seed))
        return d.views, d.Y, []
    paths = split_paths(views)
    Y = check_labels(read_matrix(labels), labels)
    X = check_views(read_views(paths), paths, n_rows=Y.shape[0])
    return X, Y, [*paths, labels]


def format_table(rows: dict[str, dict[str, Any]], title: str) -> str:
    """Methods × metrics; cells are 'mean ± std' (or a single value)."""
    head = ["method", *TABLE_METRICS]
    lines = [[title], head]
    for method, vals in rows.items():
        cells = [method]
        for k in TABLE_METRICS:
            v = vals[k]
            cells.append(f"{v['mean']:.4f}±{v['std']:.4f}" if isinstance(v, dict) else f"{v:.4f}")
        lines.append(cells)
    widths = [max(len(r[i]) for r in lines[1:]) for i in range(len(head))]
    out = [title]
    for r in lines[1:]:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(out)


def convergence_plot(path: Path, trace: dict[str, np.ndarray]) -> None:
    fig, axes = plots.new_figure(1, 2, figsize=(9, 3.4))
    it = trace["iteration"]
    axes[0].plot(it, trace["objective"], label="objective")
    axes[0].plot(it, trace["loss"], label="loss", linestyle="--")
    axes[0].set_xlabel("iteration")
    axes[0].set_title("objective at G")
    axes[0].legend()
    axes[1].semilogy(it, np.maximum(trace["primal_residual"], 1e-300), label="max|W − G|")
    axes[1].semilogy(it, trace["mu"], label="μ", linestyle=":")
    axes[1].set_xlabel("iteration")
    axes[1].set_title("residual and penalty μ")
    axes[1].legend()
    fig.tight_layout()
    plots.save_figure(fig, path)


def fit_command(start_run: Any, params: dict[str, Any], *, views: str | None, labels: str | None, test_views: str | None,
                test_labels: str | None, dataset: str | None, cv: int, test_fraction: float, methods: str,
                lam_tnn: float | None, seed: int) -> tuple[dict[str, Any], list[str], str]:
    """Run mvml-fit; ``start_run()`` gives the RunDir once every input has been read and checked (so bad
    input leaves nothing behind). Returns (summary, input files, table text)."""
    method_list = experiment.check_methods([m.strip() for m in methods.split(",") if m.strip()])
    model = TMvML(**params)
    experiment.check_setup(model, method_list, lam_tnn)
    X, Y, inputs = load_training(views, labels, dataset, seed)
    Xte = Yte = None
    if test_views:
        tpaths = split_paths(test_views)
        Xte = check_views(read_views(tpaths), tpaths)
        if len(Xte) != len(X):
            raise InputError(f"--test-views has {len(Xte)} views; the training data has {len(X)}")
        for v, (A, B) in enumerate(zip(X, Xte, strict=True)):
            if A.shape[1] != B.shape[1]:
                raise InputError(f"{tpaths[v]}: {B.shape[1]} columns; training view {v + 1} has {A.shape[1]}")
        inputs += tpaths
        if test_labels:
            Yte = check_labels(read_matrix(test_labels), test_labels)
            check_views(Xte, tpaths, n_rows=Yte.shape[0])
            if Yte.shape[1] != Y.shape[1]:
                raise InputError(f"{test_labels}: {Yte.shape[1]} labels; the training labels have {Y.shape[1]}")
            inputs.append(test_labels)
    # Everything a fit could reject is checked before the run directory is made: the smallest training
    # set is a --cv split's training part.
    n_fit = len(Y)
    if cv:
        n_fit = len(train_test_indices(len(Y), test_fraction, np.random.default_rng(0))[0])
    check_fit_size(model.map, int(model.m), [v.shape[1] for v in X], n_fit)
    run = start_run()
    with experiment.each_warning_once():  # one line per distinct warning, not one per fit
        return _fit_run(run, model, method_list, X, Y, Xte, Yte, inputs, cv=cv, test_fraction=test_fraction,
                        lam_tnn=lam_tnn, seed=seed)


def _fit_run(run: Any, model: TMvML, method_list: list[str], X: list[np.ndarray], Y: np.ndarray,
             Xte: list[np.ndarray] | None, Yte: np.ndarray | None, inputs: list[str], *, cv: int,
             test_fraction: float, lam_tnn: float | None, seed: int) -> tuple[dict[str, Any], list[str], str]:
    report: dict[str, Any] = {"definitions": metrics.DEFINITIONS, "methods": method_list, "n_train": int(len(Y)),
                              "n_labels": int(Y.shape[1]), "n_views": len(X)}
    report_tables = []
    # Repeated random splits, each checkpointed so --resume skips finished ones.
    if cv:
        done = {}
        for s in range(cv):
            if run.has_checkpoint(f"split{s}.json"):
                done[s] = run.load_checkpoint(f"split{s}.json")
        bar = progress(total=cv, desc="splits", initial=len(done))

        def on_split(s: int, res: dict) -> None:
            run.save_checkpoint(f"split{s}.json", res)
            bar.update(1)

        results = experiment.run_splits(model, X, Y, n_splits=cv, seed=seed, methods=method_list,
                                        test_fraction=test_fraction, lam_tnn=lam_tnn, done=done, on_split=on_split)
        bar.close()
        summ = experiment.summarize_splits(results)
        report["cv"] = {"splits": cv, "test_fraction": test_fraction, "summary": summ}
        rows = [{"split": s, "method": meth, **vals} for s, r in enumerate(results) for meth, vals in r.items()]
        tables.write_table(run.file("splits.csv"), rows)
        report_tables.append(format_table(summ, f"{cv} random splits (test share {test_fraction}), mean ± std:"))

    # The model on all training data (the one saved), scored on the test data when given.
    bar = progress(total=model.max_iter, desc="ADMM")

    def on_iter(state: Any) -> None:
        bar.n = state.iteration
        bar.refresh()

    fitted, scores = experiment.fit_and_score(model, method_list if Yte is not None else ["tmvml"], X, Y,
                                              Xte if Xte is not None else X, lam_tnn=lam_tnn, seed=seed,
                                              callback=on_iter)
    bar.close()
    io.write_arrays(run.file("model.npz"), fitted.to_arrays())
    io.write_array(run.file("scores.npy"), scores["tmvml"])
    trace = fitted.state_.trace_table()
    tables.write_table(run.file("trace.csv"), trace)
    if fitted.n_iter_:
        convergence_plot(run.file("convergence.png"), trace)
    if Yte is not None:
        test = {meth: metrics.evaluate(Yte, F, model.threshold) for meth, F in scores.items()}
        report["test"] = test
        report_tables.append(format_table(test, f"test set ({len(Yte)} samples):"))
    elif Xte is None:
        report["train"] = {"tmvml": metrics.evaluate(Y, scores["tmvml"], model.threshold)}
        if not cv:
            report_tables.append(format_table(report["train"], "training data (no test data given):"))
    report["solver"] = {"iterations": fitted.n_iter_, "converged": fitted.converged_,
                        "primal_residual": float(trace["primal_residual"][-1]) if fitted.n_iter_ else 0.0}
    io.write_json(run.file("metrics.json"), report)
    summary = {"run_dir": str(run.path), "iterations": fitted.n_iter_, "converged": fitted.converged_}
    if "test" in report:
        summary["test_average_precision"] = report["test"]["tmvml"]["average_precision"]
    if "cv" in report:
        summary["cv_average_precision"] = report["cv"]["summary"]["tmvml"]["average_precision"]
    return summary, [p for p in inputs if p], "\n\n".join(report_tables)


def make_command(out: Path, dataset: str, seed: int, n: int | None) -> list[Path]:
    """Write a built-in dataset as view{v}.npy + labels.npy (+ info.json); returns the written paths."""
    kwargs = {} if n is None or dataset == "digits-mvml" else {"n": n}
    d = _data.load(dataset, np.random.default_rng(seed), **kwargs)
    written = []
    for v, X in enumerate(d.views):
        p = out / f"view{v + 1}.npy"
        io.write_array(p, X)
        written.append(p)
    io.write_array(out / "labels.npy", d.Y)
    written.append(out / "labels.npy")
    info = {"dataset": d.name, "n_samples": int(len(d.Y)), "views": d.view_names,
            "view_widths": [int(X.shape[1]) for X in d.views], "labels": d.label_names,
            "label_rates": d.Y.mean(axis=0).round(6).tolist()}
    io.write_json(out / "info.json", info)
    written.append(out / "info.json")
    return written
