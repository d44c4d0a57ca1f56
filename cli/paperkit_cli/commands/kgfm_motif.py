"""``paperkit kgfm-motif``: train MOTIF (HCNet over LIFT_F + NBFNet) for link prediction (Huang et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._kgfm_common import FAMILY_HELP, max_hyperedges_option

SETTINGS = "paperkit.methods.kgfm.run:MotifSettings"


@options.command("kgfm-motif", short_help="Train MOTIF on a KG: filtered MRR/Hits@k, or link accuracy with labels.")
@click.option("--train", required=True, type=click.Path(dir_okay=False), metavar="TSV",
              help="Training triples (head<TAB>relation<TAB>tail): the message graph, and the training queries "
                   "unless --train-queries is given.")
@click.option("--train-queries", default=None, type=click.Path(dir_okay=False), metavar="TSV",
              help="Triples to train on, over --train's entities and relations (InGram's msg/sup split); a query "
                   "present in the graph is hidden from it while it is asked.")
@click.option("--valid", default=None, type=click.Path(dir_okay=False), metavar="TSV",
              help="Validation triples: filtered MRR after every epoch.")
@click.option("--test", default=None, type=click.Path(dir_okay=False), metavar="TSV",
              help="Test triples (ranked on the training graph); with --labels, the test graph.")
@click.option("--labels", default=None, type=click.Path(dir_okay=False), metavar="CSV",
              help="Link classification (ConnectHub): columns split (train|test), head, relation, tail, label 0/1; "
                   "test rows need --test (their graph); not with --valid or --train-queries.")
@click.option("--motifs", default="f3", show_default=True, metavar="FAMILY", help=FAMILY_HELP)
@click.option("--dim", type=click.IntRange(1, 1024), default=64, show_default=True, help="Hidden dimension.")
@click.option("--layers", type=click.IntRange(1, 12), default=6, show_default=True, help="Layers of both encoders.")
@click.option("--dropout", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.2, show_default=True,
              help="Dropout in the relation and entity encoders.")
@click.option("--relation-norm/--no-relation-norm", default=False, show_default=True,
              help="Standardise each relation-encoder aggregate over the relations of the query's graph (not in "
                   "the paper): counts that differ by a few percent, as in ConnectHub(k >= 3), survive the layer "
                   "norm. Used by examples/kgfm for Table 1.")
@click.option("--neg", type=int, default=64, show_default=True, help="Strict negatives per query (> 0).")
@click.option("--epochs", type=click.IntRange(1, 100_000), default=10, show_default=True, help="Passes over the data.")
@click.option("--batch-size", type=click.IntRange(1, 4096), default=16, show_default=True, help="Queries per step.")
@click.option("--lr", type=float, default=5e-4, show_default=True, help="AdamW learning rate (0 < lr <= 10).")
@click.option("--temperature", type=float, default=1.0, show_default=True,
              help="Self-adversarial temperature of the negatives' weights (> 0).")
@click.option("--stop-accuracy", type=float, default=1.0, show_default=True,
              help="With --labels: stop once this share of the training links is right by a logit margin of at "
                   "least 1 (0: train every epoch).")
@click.option("--init", default=None, type=click.Path(dir_okay=False), metavar="PT",
              help="Fine-tune from this model.pt (same --dim and --motifs).")
@max_hyperedges_option
@options.seed_option
@options.device_option
@options.run_dir_options
def cli(train, train_queries, valid, test, labels, motifs, dim, layers, dropout, relation_norm, neg, epochs, batch_size, lr, temperature,
        stop_accuracy, init, max_hyperedges, seed, device, run_dir, resume, force):
    """Train MOTIF: relation encoder (HCNet over LIFT_F(G), or ULTRA's for --motifs ultra) and NBFNet over G.

    Ranking (default): tail and head queries of --train (heads through inverse relations), BCE with
    self-adversarial strict negatives, the query edge hidden. Classification (--labels): BCE on the labelled
    links, stopping once --stop-accuracy of them are right by a margin. Writes to DIR: model.pt, metrics.json
    (filtered MRR, Hits@1/3/10 overall, tails, heads; or accuracy), curve.csv (loss and valid MRR, or training-link
    accuracy, per epoch), curves.png, rel_sim.png (cosine similarity of the
    relation representations z_q|q).

    \b
    Examples:
      $ paperkit kgfm-motif --train data/rules/train.tsv --train-queries data/rules/train_queries.tsv --valid data/rules/valid.tsv --motifs f3 --run-dir runs/f3
      $ paperkit kgfm-motif --train data/ch2/train.tsv --test data/ch2/test.tsv --labels data/ch2/labels.csv --motifs star3 --run-dir runs/ch2
    """
    import json

    from paperkit.core import io, plots, tables
    from paperkit.methods.kgfm.plots import curves_figure, similarity_figure
    from paperkit.methods.kgfm.run import MotifSettings, execute_motif, prepare_motif
    from paperkit_cli import runtime

    s = runtime.settings(MotifSettings)
    inputs = prepare_motif(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    res = execute_motif(inputs, run)
    io.save_torch(run.file("model.pt"), res.checkpoint)
    io.write_json(run.file("metrics.json"), res.metrics)
    tables.write_table(run.file("curve.csv"), res.curve)
    plots.save_figure(curves_figure(res.curve, motifs), run.file("curves.png"))
    plots.save_figure(similarity_figure(res.rel_sim, res.relation_names, motifs), run.file("rel_sim.png"))
    flat = [{"split": k, **v} for k, v in res.metrics.items() if isinstance(v, dict)]
    if flat:
        options.report_table(flat, [("split", "split", ""), ("mrr", "MRR", ".3f"), ("hits@1", "H@1", ".3f"),
                                    ("hits@3", "H@3", ".3f"), ("hits@10", "H@10", ".3f"), ("queries", "queries", "d")],
                             title=f"kgfm-motif --motifs {motifs}: filtered ranking (tails and heads)")
    else:
        options.report(f"kgfm-motif --motifs {motifs}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else
                                                                     f"{k} {v}" for k, v in res.metrics.items()))
    inputs_files = [p for p in (train, train_queries, valid, test, labels, init) if p]
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs_files)
    options.echo_data(json.dumps({"run_dir": str(run.path), **res.metrics}))
