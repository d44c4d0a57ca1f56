"""``paperkit mvml-predict``: score new views with a fitted TMvML model."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("mvml-predict", short_help="Score new views with a model.npz from mvml-fit.")
@click.option("--model", "model_path", required=True, metavar="FILE", help="model.npz written by mvml-fit.")
@click.option("--views", type=options.ListOf(click.STRING), required=True, metavar="F1,F2,...",
              help="Views to score, one file per view in training order ('-' is stdin: .npy/.npz or a table).")
@click.option("--labels", default=None, metavar="FILE", help="True 0/1 labels: print the metrics as JSON on stderr.")
@click.option("--what", type=click.Choice(["scores", "labels", "both"]), default="both", show_default=True,
              help="Scores (score_j columns), predicted 0/1 labels (label_j columns), or both.")
@options.output_options
def cli(model_path, views, labels, what, output, fmt, manifest_path):
    """Score new views with a model.npz from mvml-fit.

    Reads the model and the views (.npy/.npz/.csv/.tsv, one file per view, same rows); writes one row per
    sample to --output: score_1..score_q and/or label_1..label_q (score > the model's threshold). A
    .npy output holds the score matrix (or the label matrix with --what labels). Deterministic: no seed.

    \b
    Examples:
      $ paperkit mvml-predict --model runs/syn/model.npz --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy -o pred.csv
      $ paperkit mvml-predict --model runs/syn/model.npz --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy --what labels | head -3
    """
    from paperkit.core import io, tables
    from paperkit.methods.mvml.run import predict
    from paperkit_cli import runtime

    result = predict(model_path, views, labels)
    if result.metrics is not None:
        options.report(io.dumps_json(result.metrics, indent=None))
    if io.detect_format(output, fmt, default="jsonl") in ("npy", "npz"):
        io.write_array(output, result.labels if what == "labels" else result.scores)
    else:
        cols = {}
        q = result.scores.shape[1]
        if what in ("scores", "both"):
            cols.update({f"score_{j + 1}": result.scores[:, j] for j in range(q)})
        if what in ("labels", "both"):
            cols.update({f"label_{j + 1}": result.labels[:, j] for j in range(q)})
        tables.write_table(output, cols, fmt)
    runtime.write_manifest(inputs=[model_path, *views, labels], output=output, manifest_path=manifest_path)
