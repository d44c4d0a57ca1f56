"""``paperkit dcgnn-fit``: train dual-channel self-explainable GNNs (Azzolin et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._dcgnn_common import data_options

SETTINGS = "paperkit.methods.dcgnn.run:FitSettings"


@options.command("dcgnn-fit", short_help="Train DC-GNNs (SE-GNN + readable count rule) over seeds.")
@data_options
@click.option("--segnn", type=click.Choice(["smgnn", "gsat", "gisst", "none"]), default="smgnn", show_default=True,
              help="The GNN channel: SMGNN (L1 + entropy on edge scores), GSAT (concrete-Bernoulli masks, KL to "
                   "a prior 0.9→0.5), GiSST (sigmoid edge + feature masks), none (plain GIN).")
@click.option("--channels", type=click.Choice(["dual", "gnn", "rule"]), default="dual", show_default=True,
              help="dual: DC-GNN; gnn: the SE-GNN alone; rule: the count rule alone.")
@click.option("--combiner", type=click.Choice(["len", "linear", "mlp", "product", "godel"]), default="len",
              show_default=True, help="How the channels are combined: the LEN entropy layer (gives channel "
                                      "relevances) or an ablation.")
@click.option("--epochs", type=click.IntRange(1, 100_000), default=50, show_default=True, help="Training epochs.")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=64, show_default=True, help="Graphs per batch.")
@click.option("--hidden", type=click.IntRange(1, 4096), default=64, show_default=True, help="GIN width.")
@click.option("--lr", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=1e-3, show_default=True,
              help="Adam learning rate.")
@click.option("--warmup", type=click.IntRange(0, 100_000), default=20, show_default=True,
              help="Epochs of per-channel CE before the combined loss (temperature 1 until then, then → 0.3).")
@click.option("--reg-weight", type=options.FiniteFloat(0.0, 1e6), default=0.01, show_default=True,
              help="Scale of the SMGNN/GiSST mask penalty (L1 + 0.8 entropy).")
@click.option("--side-lr", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=5e-3, show_default=True,
              help="Adam learning rate of the rule channel and the combiner (the official lr_filternode).")
@click.option("--rule-l1", type=options.FiniteFloat(0.0, 1e6), default=0.001, show_default=True,
              help="L1 penalty on the rule weights (sparser rules).")
@click.option("--constant-feature", is_flag=True,
              help="Add a constant-1 node feature to the rule channel (its count is the node count).")
@click.option("--average-edge-attn", type=click.Choice(["mean", "none"]), default="mean", show_default=True,
              help="mean: give (u,v) and (v,u) the average of their scores (undirected graphs).")
@click.option("--pool", type=click.Choice(["sum", "mean"]), default="sum", show_default=True,
              help="GNN-channel readout; mean keeps the classifier from counting nodes when test graphs are "
                   "larger or smaller (the official GOOD-Motif setting).")
@click.option("--norm", type=click.Choice(["none", "bn"]), default="none", show_default=True,
              help="bn: BatchNorm inside the GIN MLPs (the official GOOD-Motif setting; without it a GIN on "
                   "constant node features hardly fits the motif set).")
@click.option("--select", type=click.Choice(["best-val", "last"]), default="best-val", show_default=True,
              help="Checkpoint kept per seed: best-val, the epoch with the lowest cross-entropy on in-distribution "
                   "validation graphs (the val split, or 10% of the training graphs held apart when the data "
                   "hold an id_test split, as GOOD-Motif; a DC-GNN's warm-up epochs excluded), as the official "
                   "pipeline; last, the last epoch.")
@click.option("--temp-schedule", type=click.Choice(["warmup", "official"]), default="warmup", show_default=True,
              help="Channel temperature: warmup, 1 during the warm-up then linear to 0.3 at the last epoch; official, "
                   "as the official code: 1 up to epoch 20 whatever the warm-up, then 1 - 0.7*epoch/epochs.")
@click.option("--combiner-init", type=click.Choice(["equal", "random"]), default="equal", show_default=True,
              help="LEN layer start: equal, columns of equal L1 norm (both channels relevance 0.5); random, "
                   "PyTorch's init (the official code).")
@click.option("--rule-init", type=click.Choice(["zero", "default"]), default="zero", show_default=True,
              help="Rule weights start: zero (the empty rule); default, PyTorch's init (the official code).")
@click.option("--rule-weight-decay", type=options.FiniteFloat(0.0, 1e6), default=0.0, show_default=True,
              help="Adam weight decay on the rule channel (the official channel_weight_decay, 0.001 on Red-Blue).")
@click.option("--combiner-hold", type=click.IntRange(0, 100_000), default=0, show_default=True,
              help="Epochs after the warm-up in which the channel relevances are held fixed while the rest "
                   "trains on the combined output (not in the official code).")
@click.option("--top-k", type=click.IntRange(1, 10_000), default=6, show_default=True,
              help="Edges highlighted per graph in sample_graphs.png.")
@options.seed_option
@options.seeds_option(help="Training seeds (a list: 0,1,2); --seed draws the synthetic data and the split.")
@options.jobs_option
@click.option("--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None, metavar="GB",
              help="Refuse data or training activations estimated above this (default: 3/4 of RAM).")
@options.device_option
@options.run_dir_options
def cli(data, synthetic, n_graphs, segnn, channels, combiner, epochs, batch_size, hidden, lr, warmup, reg_weight,
        side_lr, rule_l1, constant_feature, average_edge_attn, pool, norm, select, temp_schedule, combiner_init,
        rule_init, rule_weight_decay, combiner_hold, top_k, seed, seeds, jobs, max_memory_gb, device,
        run_dir, resume, force):
    """Train a DC-GNN (or one of its channels) on graph classification, once per seed.

    Writes to DIR: metrics.json (acc/F1 per split and channel; the motif set adds in-distribution
    id_val and id_test splits beside its out-of-distribution test split, the epoch kept per seed
    (selection), channel relevances, explanation AUROC
    against edge_gt, mean ± std over seeds), rules.json (the rule channel as feature:weight terms + bias,
    per seed), edge_masks.npy (seeds × edges), per_seed.csv, model.pt (for dcgnn-faith and dcgnn-explain),
    relevance.png, sample_graphs.png. Prints one line per seed naming the channel used on stderr and a
    JSON summary on stdout. With -j N (0: one per core) on CPU the seeds train in up to N processes.

    \b
    Examples:
      $ paperkit dcgnn-fit --synthetic redblue --warmup 0 --seeds 0,1,2 -j 3 --run-dir runs/redblue
      $ paperkit dcgnn-fit --data graphs.npz --segnn gsat --channels gnn --epochs 30 --run-dir runs/gsat
    """
    from paperkit.core import io, plots, tables
    from paperkit.methods.dcgnn import plots as dplots
    from paperkit.methods.dcgnn.run import FitSettings, execute_fit, prepare_fit
    from paperkit_cli import runtime

    s = runtime.settings(FitSettings, seeds=tuple(seeds))
    inputs = prepare_fit(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    res = execute_fit(inputs, run)
    name = res.metrics["model"]
    io.write_json(run.file("metrics.json"), res.metrics)
    io.write_json(run.file("rules.json"), res.rules)
    tables.write_table(run.file("per_seed.csv"), res.per_seed)
    io.save_torch(run.file("model.pt"), res.model)
    plots.save_figure(dplots.relevance_figure(res.per_seed, name), run.file("relevance.png"))
    if res.edge_masks is not None:
        io.write_array(run.file("edge_masks.npy"), res.edge_masks)
        sample = res.splits["test"][:4]
        plots.save_figure(dplots.sample_graphs_figure(res.data, sample, res.edge_masks[0], top_k,
                                                      f"{name}, seed {s.seeds[0]}: top-{top_k} edges (red)"),
                          run.file("sample_graphs.png"))
    for row, rule in zip(res.per_seed, res.rules, strict=True):
        options.report(f"seed {row['seed']}: test acc {row['test_acc']:.3f}, channel used: {row['channel'] or 'n/a'}"
                       + (f", rule: {rule['text']}" if rule.get("kind") == "binary" else ""))
    id_test = [("id_test_acc", "ID test acc", ".3f")] if "id_test_acc" in res.per_seed[0] else []
    options.report_table(res.per_seed, [("seed", "seed", ""), ("selected_epoch", "epoch", ""), ("test_acc", "test acc", ".3f"), *id_test,
                                        ("test_f1", "test F1", ".3f"), ("gnn_relevance", "GNN rel", ".3f"),
                                        ("rule_relevance", "rule rel", ".3f"), ("channel", "channel", ""),
                                        ("explanation_auroc", "expl AUROC", ".3f")], title=f"dcgnn-fit: {name}")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[data] if data else [])
    summ = res.metrics["summary"]
    options.echo_data(io.dumps_json({"run_dir": str(run.path), "model": name,
                                     "test_acc": summ["test_acc"], "id_test_acc": summ.get("id_test_acc"),
                                     "gnn_relevance": summ["gnn_relevance"],
                                     "rule_relevance": summ["rule_relevance"],
                                     "explanation_auroc": summ["explanation_auroc"]}, indent=None))
