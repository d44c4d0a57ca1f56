"""``paperkit kgfm-eval``: zero-shot or fine-tuned MOTIF metrics on another KG (Huang et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.kgfm.run:EvalSettings"


@options.command("kgfm-eval", short_help="Rank a KG's queries with a trained MOTIF model: zero-shot or fine-tuned.")
@click.option("--model", required=True, type=click.Path(dir_okay=False), metavar="PT", help="model.pt of kgfm-motif.")
@click.option("--graph", required=True, type=click.Path(dir_okay=False), metavar="TSV",
              help="The inference graph (its relations may be new to the model).")
@click.option("--queries", required=True, type=click.Path(dir_okay=False), metavar="TSV",
              help="Triples to rank (tails and heads), over the entities and relations of --graph.")
@click.option("--epochs", type=click.IntRange(0, 100_000), default=0, show_default=True,
              help="Fine-tune on --graph for this many epochs first (0: zero-shot).")
@click.option("--neg", type=int, default=64, show_default=True, help="Fine-tuning: strict negatives per query (> 0).")
@click.option("--lr", type=float, default=5e-4, show_default=True, help="Fine-tuning: AdamW learning rate (0 < lr <= 10).")
@click.option("--batch-size", type=click.IntRange(1, 4096), default=16, show_default=True, help="Queries per batch.")
@options.seed_option
@options.device_option
@options.output_options
def cli(model, graph, queries, epochs, neg, lr, batch_size, seed, device, output, fmt, manifest_path):
    """Filtered MRR and Hits@1/3/10 (overall, tails, heads) of a MOTIF model on another graph.

    Writes one JSON line (or a table by suffix): motifs, mode (zero-shot|fine-tuned), mrr, hits@1, hits@3,
    hits@10, queries, and the same for tails and heads.

    \b
    Examples:
      $ paperkit kgfm-eval --model runs/f3/model.pt --graph data/rules/test_graph.tsv --queries data/rules/test.tsv
      $ paperkit kgfm-eval --model runs/f3/model.pt --graph g.tsv --queries q.tsv --epochs 2 -o ft.json
    """
    import json

    from paperkit.core import io, tables
    from paperkit.methods.kgfm.run import EvalSettings, execute_eval, prepare_eval
    from paperkit_cli import runtime

    s = runtime.settings(EvalSettings)
    res = execute_eval(prepare_eval(s))
    if io.is_stdio(output) and fmt is None:
        options.echo_data(json.dumps(res))
    elif (fmt or io.detect_format(output, default="json")) == "json":
        io.write_json(output, res)
    else:
        tables.write_table(output, [{k: v for k, v in res.items() if not isinstance(v, dict)}], fmt=fmt)
    options.report_table([{"split": "all", **res}, {"split": "tails", **res["tail"]}, {"split": "heads", **res["head"]}],
                         [("split", "", ""), ("mrr", "MRR", ".3f"), ("hits@1", "H@1", ".3f"), ("hits@10", "H@10", ".3f"),
                          ("queries", "queries", "d")], title=f"kgfm-eval: {res['motifs']}, {res['mode']}")
    runtime.write_manifest(inputs=[model, graph, queries], output=None if io.is_stdio(output) else output,
                           manifest_path=manifest_path, seed=seed)
