# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""``paperkit symeq-fit``: train exact S_n-equivariant networks on symmetric tensors against MLP and Maron baselines (Pearce-Crump, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.symeq.run:FitSettings"
MODEL_NAMES = ["equivariant", "mlp", "mlp-wide", "mlp-aug", "maron"]


@options.command("symeq-fit", short_help="Equivariant nets on symmetric tensors vs MLP/Maron (first-principles; no official code).")
@click.option("--task", type=click.Choice(["A", "B", "C"]), default="B", show_default=True,
              help="A: third-moment tensor -> tanh of invariants (k=3, l=0); B: symmetric A -> y_i = mean_j A_ij^2 "
                   "(k=2, l=1); C: a random equivariant teacher (k=--k, l=--l). Ignored with --data.")
@click.option("--data", type=click.Path(dir_okay=False), default=None, metavar="PATH.npz",
              help="Train on your data instead: an .npz with X ([N, n,...,n] full symmetric, or [N, C(n+k-1,k)] "
                   "packed) and y ([N] for l=0, [N, n] for l=1, [N, n,...,n] or packed for l>=2).")
@click.option("--test-data", type=click.Path(dir_okay=False), default=None, metavar="PATH.npz",
              help="Test set for --data (same layout); without it a quarter of --data is held out.")
@click.option("--k", type=int, default=2, show_default=True, help="Input order for --task C and --data (1-6).")
@click.option("--l", type=int, default=1, show_default=True, help="Output order for --task C and --data (0-6).")
@click.option("--n", type=int, default=6, show_default=True, help="Index dimension n of the generated training data.")
@click.option("--n-train", type=click.IntRange(1), default=256, show_default=True, help="Training samples.")
@click.option("--n-test", type=click.IntRange(1, 1_000_000), default=2000, show_default=True,
              help="Test samples per test n (generated tasks).")
@click.option("--test-n", type=options.ListOf(int, unique=True, min_items=0), default="4,8,10", show_default=True,
              metavar="N1,N2,...", help="Other n to evaluate the same weights at (size transfer); '' for none.")
@click.option("--sweep", type=options.ListOf(click.IntRange(1), unique=True, min_items=0), default="", metavar="N1,N2,...",
              help="Training sizes for a learning curve (replaces --n-train), e.g. 8,32,128,512.")
@click.option("--model", "models", type=options.ListOf(choices=MODEL_NAMES, unique=True),
              default="equivariant,mlp,mlp-aug,maron", show_default=True, metavar="M1,M2,...",
              help="Models: equivariant (this paper), mlp (on the unique entries), mlp-wide (4x wider), mlp-aug "
                   "(random S_n permutations), maron (full-tensor layers, Bell-number bases).")
@click.option("--basis", type=click.Choice(["diagram", "orbit"]), default="diagram", show_default=True,
              help="Parametrisation of the equivariant layers: diagram (the same map at every n) or orbit.")
@click.option("--hidden", type=click.IntRange(1, 4096), default=16, show_default=True,
              help="Channels of the hidden equivariant layers.")
@click.option("--layers", type=click.IntRange(1, 32), default=2, show_default=True,
              help="Hidden layers (equivariant: k->k layers; MLP: hidden layers).")
@click.option("--mlp-width", type=click.IntRange(1, 100_000), default=128, show_default=True,
              help="Units per hidden layer of the MLP baselines (mlp-wide uses 4x).")
@click.option("--activation", type=click.Choice(["relu", "tanh", "square"]), default="relu", show_default=True,
              help="Entry-wise nonlinearity between layers.")
@click.option("--steps", type=click.IntRange(0, 10_000_000), default=500, show_default=True,
              help="Adam steps (cosine-decayed learning rate) per fit.")
@click.option("--batch-size", type=click.IntRange(1, 1_000_000), default=64, show_default=True, help="Minibatch size.")
@click.option("--lr", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=3e-3, show_default=True,
              help="Adam learning rate.")
@click.option("--teacher-seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="Seed of the task C teacher (the same function at every n and every --seeds).")
@click.option("--symmetrize", is_flag=True, default=False, help="Symmetrise a non-symmetric X from --data instead of refusing it.")
@options.seeds_option()
@options.device_option
@options.jobs_option
@options.run_dir_options
def cli(task, data, test_data, k, l, n, n_train, n_test, test_n, sweep, models, basis, hidden, layers, mlp_width,
        activation, steps, batch_size, lr, teacher_seed, symmetrize, seeds, device, jobs, run_dir, resume, force):
    """Train S_n-equivariant networks on symmetric tensors and compare them with MLPs and Maron's layers.

    The equivariant layers use the exact diagram (or orbit) basis of the maps S^k(R^n) -> S^l(R^n): 9
    weights per channel pair for 2->2 instead of Maron's 15, and the same weights run at every n.
    Writes to DIR: metrics.json (train/test MSE per model and per test n with standard errors over --seeds,
    parameter counts, basis size), curve.csv (model, n_train, test_mse, test_mse_se), fits.csv (every
    fit), transfer.csv (model, test_n, test_mse, ratio to the training n), basis.json (labels), model.pt
    (the first seed's models), learning_curve.png (with --sweep) and transfer.png (with --test-n). Prints
    a table on stderr and one JSON line on stdout. MSE is over the unique (packed) output entries.

    \b
    Examples:
      $ paperkit symeq-fit --task B --n-train 64 --run-dir runs/b
      $ paperkit symeq-fit --task C --k 2 --l 2 --sweep 8,32,128,512 --seeds 0,1,2 --run-dir runs/c
      $ paperkit symeq-fit --data train.npz --k 2 --l 1 --test-n '' --model equivariant,mlp --run-dir runs/mine
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.symeq import plots as splots
    from paperkit.methods.symeq.run import (
        FitSettings,
        curve_rows,
        execute_fit,
        prepare_fit,
        summarize,
        transfer_rows,
    )
    from paperkit_cli import runtime

    s = runtime.settings(FitSettings)
    inputs = prepare_fit(s)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("jobs",))
    out = execute_fit(inputs, run)
    summary = summarize(inputs, out["records"])
    io.write_json(run.file("metrics.json"), summary)
    tables.write_table(run.file("fits.csv"), [{k_: v for k_, v in r.items() if k_ != "test_mse"}
                                              | {f"test_mse_n{m}": e for m, e in r["test_mse"].items()}
                                              for r in out["records"]])
    curve = curve_rows(inputs, out["records"])
    tables.write_table(run.file("curve.csv"), curve)
    transfer = transfer_rows(summary)
    tables.write_table(run.file("transfer.csv"), transfer)
    io.write_json(run.file("basis.json"), _basis_json(inputs))
    io.save_torch(run.file("model.pt"), {"settings": {"k": inputs.k, "l": inputs.l, "n": inputs.n, "basis": basis,
                                                       "hidden": hidden, "layers": layers, "activation": activation},
                                         "models": out["states"]})
    what = f"task {task}" if not data else inputs.train.source
    if len(inputs.sizes) > 1:
        plots.save_figure(splots.learning_curve_figure(curve, f"{what}, n={inputs.n}"), run.file("learning_curve.png"))
    if test_n:
        plots.save_figure(splots.transfer_figure(transfer, inputs.n, f"{what}: trained at n={inputs.n}"),
                          run.file("transfer.png"))
    rows = [{"model": name, "params": m["params"], "train": m["train_mse"]["mean"],
             **{f"n{t}": v["mean"] for t, v in m["test_mse"].items()}} for name, m in summary["models"].items()]
    cols = [("model", "model", ""), ("params", "params", "d"), ("train", "train MSE", ".4g")]
    cols += [(f"n{t}", f"test n={t}", ".4g") for t in (inputs.n, *sorted(s.test_n))]
    options.report_table(rows, cols, title=f"symeq-fit: {what}, k={inputs.k} -> l={inputs.l}, n={inputs.n}, "
                         f"{inputs.sizes[-1]} training samples, mean over {len(seeds)} seed(s)")
    runtime.write_manifest(run_dir=run.path, seed=seeds[0], inputs=inputs.inputs)
    options.echo_data(json.dumps({"run_dir": str(run.path), "basis_size": summary["basis_size"],
                                  **{name: m["test_mse"][str(inputs.n)]["mean"] for name, m in summary["models"].items()}}))


def _basis_json(inputs) -> dict:
    from paperkit.methods.symeq import orbit
    return {"k": inputs.k, "l": inputs.l, "n": inputs.n, "basis": inputs.settings.basis,
            "labels": [orbit.label_to_str(lab) for lab in orbit.orbit_labels(inputs.k, inputs.l)],
            "hidden_labels": [orbit.label_to_str(lab) for lab in orbit.orbit_labels(inputs.k, inputs.k)]}
