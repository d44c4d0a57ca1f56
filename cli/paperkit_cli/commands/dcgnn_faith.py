"""``paperkit dcgnn-faith``: sufficiency, necessity and FAITH of a DC-GNN's edge explanations."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._dcgnn_common import data_options, model_option

SETTINGS = "paperkit.methods.dcgnn.run:FaithSettings"


@options.command("dcgnn-faith", short_help="FAITH (sufficiency, necessity) of saved DC-GNN explanations vs random.")
@model_option
@data_options
@click.option("--split", type=click.Choice(["train", "val", "test", "id_test", "all"]), default="test",
              show_default=True, help="Graphs to test (the split stored in the data, else the seeded 80/10/10 "
                                      "split; id_test: the motif set's in-distribution test graphs).")
@click.option("--ratio", type=options.FiniteFloat(0.0, 1.0, min_open=True), default=0.3, show_default=True,
              help="Explanation size: the top fraction of undirected edges by mask score.")
@click.option("--budgets", type=options.ListOf(options.FiniteFloat(0.0, 1.0, min_open=True), unique=True),
              default="0.01,0.05,0.1", show_default=True, metavar="A1,A2,...",
              help="Removal budgets α (the official NECALPHA): necessity removes max(1, ⌊α·Ē⌋) explanation edges, "
                   "sufficiency max(1, ⌊2α·Ē⌋) complement edges, Ē the mean edge count of the tested graphs.")
@click.option("--samples", type=click.IntRange(1, 1000), default=8, show_default=True,
              help="Random removals per graph, budget and test.")
@click.option("--max-graphs", type=click.IntRange(1, 1_000_000), default=300, show_default=True,
              help="At most this many graphs of the split.")
@options.seed_option
@options.device_option
@options.run_dir_options
def cli(model, data, synthetic, n_graphs, split, ratio, budgets, samples, max_graphs, seed, device, run_dir,
        resume, force):
    """Test whether the GNN channel's edge explanations are sufficient and necessary for the prediction.

    As the official code: for each graph the explanation is the top --ratio of its undirected edges;
    sufficiency = exp(-mean |p(G) - p(G minus random complement edges)|_1), necessity = 1 - exp(-mean
    |p(G) - p(G minus random explanation edges)|_1), each averaged over graphs (graphs with at most 6
    directed edges are skipped), and FAITH = their harmonic mean; the same for random explanations of equal
    size and, when the data has edge_gt, for the ground truth. Writes faith.csv (seed, explanation, budget,
    sufficiency, necessity, faith, graphs_sufficiency, graphs_necessity), faith.png; prints a table on
    stderr and a JSON summary (mean FAITH per explanation, the paper's ratio FAITH(random)/FAITH(model),
    lower is better) on stdout.

    \b
    Examples:
      $ paperkit dcgnn-faith --model runs/motif/model.pt --data motif.npz --run-dir runs/motif_faith
      $ paperkit dcgnn-faith --model runs/rb/model.pt --synthetic redblue --budgets 0.1,0.3 --run-dir runs/rb_faith
    """
    from paperkit.core import io, plots, tables
    from paperkit.methods.dcgnn import plots as dplots
    from paperkit.methods.dcgnn.run import FaithSettings, execute_faith, faith_summary, prepare_faith
    from paperkit_cli import runtime

    s = runtime.settings(FaithSettings, budgets=tuple(budgets))
    inputs = prepare_faith(s)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    rows = execute_faith(inputs, run)
    tables.write_table(run.file("faith.csv"), rows)
    plots.save_figure(dplots.faith_figure(rows, f"FAITH, {len(inputs.idx)} {split} graphs"), run.file("faith.png"))
    options.report_table(rows, [("seed", "seed", ""), ("explanation", "explanation", ""), ("budget", "budget", ".2f"),
                                ("sufficiency", "Suf", ".3f"), ("necessity", "Nec", ".3f"), ("faith", "FAITH", ".3f")],
                         title="dcgnn-faith")
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[model] + ([data] if data else []))
    options.echo_data(io.dumps_json({"run_dir": str(run.path), "graphs": int(len(inputs.idx)),
                                     **faith_summary(rows)}, indent=None))
