"""``paperkit mvml-predict``: score new views with a fitted TMvML model."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("mvml-predict", short_help="Score new views with a model.npz from mvml-fit.")
@click.option("--model", "model_path", required=True, metavar="FILE", help="model.npz written by mvml-fit.")
@click.option("--views", required=True, metavar="FILES", help="Views to score, comma-separated, training order.")
@click.option("--labels", default=None, metavar="FILE", help="True 0/1 labels: print the metrics as JSON on stderr.")
@click.option("--what", type=click.Choice(["scores", "labels", "both"]), default="both", show_default=True,
              help="Scores (score_j columns), predicted 0/1 labels (label_j columns), or both.")
@options.output_options
def cli(model_path, views, labels, what, output, fmt, manifest_path):
    """Score new views with a model.npz from mvml-fit.

    Reads the model and the views (.npy/.npz/.csv/.tsv, one file per view, same rows); writes one row per
    sample to --output: score_1..score_q and/or label_1..label_q (score > the model's threshold). A
    .npy output holds the score matrix (or the label matrix with --what labels).

    \b
    Examples:
      $ paperkit mvml-predict --model runs/syn/model.npz --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy -o pred.csv
      $ paperkit mvml-predict --model runs/syn/model.npz --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy --what labels | head -3
    """
    import numpy as np

    from paperkit.core import io, tables
    from paperkit.methods.mvml import TMvML, check_labels, evaluate
    from paperkit.methods.mvml.files import read_matrix, read_views, split_paths
    from paperkit_cli import runtime

    model = TMvML.from_arrays(io.read_arrays(io.require_file(model_path)), model_path)
    paths = split_paths(views)
    F = model.decision_function(read_views(paths))
    P = (F > model.threshold).astype(np.int64)
    if labels:
        Y = check_labels(read_matrix(labels), labels)
        if Y.shape != F.shape:
            from paperkit.core.errors import InputError

            raise InputError(f"{labels}: shape {Y.shape}; the predictions have shape {F.shape}")
        click.echo(io.dumps_json(evaluate(Y, F, model.threshold), indent=None), err=True)
    if io.detect_format(output, fmt, default="jsonl") in ("npy", "npz"):
        io.write_array(output, P if what == "labels" else F)
    else:
        cols = {}
        if what in ("scores", "both"):
            cols.update({f"score_{j + 1}": F[:, j] for j in range(F.shape[1])})
        if what in ("labels", "both"):
            cols.update({f"label_{j + 1}": P[:, j] for j in range(F.shape[1])})
        tables.write_table(output, cols, fmt)
    runtime.write_manifest(inputs=[model_path, *paths, labels], output=output, manifest_path=manifest_path)
