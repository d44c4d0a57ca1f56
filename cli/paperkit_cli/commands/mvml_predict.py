"""``paperkit mvml-predict``: score new views with a fitted TMvML model."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("mvml-predict", array_formats=("npy", "npz"), short_help="Score new views with a model.npz from mvml-fit.")
@click.option("--model", "model_path", required=True, metavar="FILE", help="model.npz written by mvml-fit.")
@click.option("--views", type=options.ListOf(click.STRING), required=True, metavar="F1,F2,...",
              help="Views to score, one file per view in training order ('-' is stdin: .npy/.npz or a table).")
@click.option("--labels", default=None, metavar="FILE", help="True 0/1 labels: print the metrics as JSON on stderr.")
@click.option("--what", type=click.Choice(["scores", "labels", "probabilities", "both"]), default="both",
              show_default=True,
              help="Scores (score_<label> columns), predicted 0/1 labels (label_<label>), calibrated "
                   "probabilities (prob_<label>; models fitted with --calibrate), or all of them.")
@click.option("--label-names", default=None, metavar="FILE",
              help="Label names, one per line, for the column names [default: those saved in the model, else "
                   "0-based numbers].")
@options.output_options
def cli(model_path, views, labels, what, label_names, output, fmt, manifest_path):
    """Score new views with a model.npz from mvml-fit.

    Reads the model and the views (.npy/.npz/.csv/.tsv, one file per view, same rows); writes one row per
    sample to --output: score_<label> and/or label_<label> columns (label: score > the model's
    threshold), named by the label names saved in the model (from mvml-fit's --label-names or its
    labels header), else score_0..score_<q-1> (0-based, like every index in paperkit). A .npy output
    holds the score matrix (or the label matrix with --what labels). Deterministic: no seed.

    The scores are least-squares scores (a ridge-type fit to the 0/1 labels): higher means more likely,
    but they are not probabilities (they can leave [0, 1] and are not calibrated); the manifest says so.
    A model fitted with mvml-fit --calibrate also gives prob_<label> columns: Platt-calibrated
    probabilities (--what probabilities for those alone).

    \b
    Examples:
      $ paperkit mvml-predict --model runs/syn/model.npz --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy -o pred.csv
      $ paperkit mvml-predict --model runs/syn/model.npz --views data/syn/view1.npy,data/syn/view2.npy,data/syn/view3.npy --what labels | head -3
    """
    from paperkit.core import io, tables
    from paperkit.methods.mvml.estimator import SCORES_ARE
    from paperkit.methods.mvml.run import predict
    from paperkit_cli import runtime

    result = predict(model_path, views, labels, label_names, what)
    if result.metrics is not None:
        options.report(io.dumps_json(result.metrics, indent=None))
    if io.detect_format(output, fmt, default="jsonl") in ("npy", "npz"):
        io.write_array(output, result.labels if what == "labels" else
                       result.probabilities if what == "probabilities" else result.scores)
    else:
        tables.write_table(output, result.columns(what), fmt)
    runtime.write_manifest(inputs=[model_path, *views, labels, label_names], output=output,
                           manifest_path=manifest_path,
                           extra={"scores": SCORES_ARE, "label_names": result.label_names})
