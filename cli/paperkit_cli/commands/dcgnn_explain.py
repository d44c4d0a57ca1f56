"""``paperkit dcgnn-explain``: per-graph explanations of a saved DC-GNN (channels, rule terms, top edges)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._dcgnn_common import data_options, model_option

SETTINGS = "paperkit.methods.dcgnn.run:ExplainSettings"


@options.command("dcgnn-explain", short_help="Explain graphs with a saved DC-GNN: relevances, rule terms, top edges.")
@model_option
@data_options
@click.option("--top-k", type=click.IntRange(1, 10_000), default=6, show_default=True,
              help="Edges reported per graph (highest mask scores; local node ids, 0-based).")
@click.option("--seed-index", type=click.IntRange(0, 10_000), default=0, show_default=True,
              help="Which of the model's trained seeds to use (0-based position in its --seeds).")
@click.option("--max-graphs", type=click.IntRange(0, 10_000_000), default=0, show_default=True,
              help="Explain only the first N graphs (0: all).")
@options.seed_option
@options.device_option
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH",
              help="Where to write the JSON lines; '-' is stdout.")
def cli(model, data, synthetic, n_graphs, top_k, seed_index, max_graphs, seed, device, output):
    """Write one JSON line per graph: label, prediction and class probabilities (named by the model's classes;
    the data's labels must be among them), the channel relevances,
    the rule's terms on this graph (weight × count per feature) and score, and the top-k edges as
    [u, v, score] with graph-local node ids.

    \b
    Examples:
      $ paperkit dcgnn-explain --model runs/redblue/model.pt --data redblue.npz --max-graphs 5
      $ paperkit dcgnn-explain --model runs/motif/model.pt --data motif.npz --top-k 8 -o explain.jsonl
    """
    from paperkit.core import io
    from paperkit.methods.dcgnn.run import ExplainSettings, explain_graphs, prepare_explain
    from paperkit_cli import runtime

    inputs = prepare_explain(runtime.settings(ExplainSettings))
    records = explain_graphs(inputs)
    if io.is_stdio(output):
        for rec in records:
            options.echo_data(io.dumps_json(rec, indent=None))
    else:
        io.write_jsonl(output, records)
        runtime.write_manifest(output=output, seed=seed, inputs=[model] + ([data] if data else []))
