"""``paperkit dcgnn-gen``: write a synthetic graph-classification set for DC-GNN (Azzolin et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._dcgnn_common import SYNTHETIC

SETTINGS = "paperkit.methods.dcgnn.run:GenSettings"


@options.command("dcgnn-gen", short_help="Generate Red-Blue, TopoFeature or GOOD-Motif-like graphs as NPZ.")
@click.option("--dataset", type=click.Choice(SYNTHETIC), default="redblue", show_default=True,
              help="redblue: BA graphs, label = red nodes outnumber blue; topofeature: BA graphs with 0-4 red "
                   "nodes, label = (≥2 red AND a 5-cycle attached), balanced as the official set; motif: wheel/tree/ladder/star/path base + "
                   "house/5-cycle/crane motif as GOOD-Motif, label = motif, split by base (star: val, path: "
                   "test, held-out wheel/tree/ladder graphs: ID test).")
@click.option("--n-graphs", type=click.IntRange(10, 1_000_000), default=2000, show_default=True,
              help="Number of graphs.")
@click.option("--ood", type=click.Choice(["none", "large", "er"]), default="none", show_default=True,
              help="motif only: 'large' draws 150-250-node bases, 'er' Erdős–Rényi bases.")
@options.seed_option
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), metavar="PATH.npz",
              help="The NPZ to write (x, edge_index, graph_ptr, y, edge_gt, split, feature_names, class_names).")
def cli(dataset, n_graphs, ood, seed, output):
    """Generate a seeded synthetic graph set with edge ground truth and write it as NPZ.

    Prints a one-line JSON summary (graphs, nodes, edges, class counts, ground-truth edges) on stdout.

    \b
    Examples:
      $ paperkit dcgnn-gen --dataset redblue --n-graphs 2000 -o redblue.npz
      $ paperkit dcgnn-gen --dataset motif --ood large --seed 1 -o motif_large.npz
    """
    from paperkit.core import io
    from paperkit.methods.dcgnn.data import write_npz
    from paperkit.methods.dcgnn.run import GenSettings, dataset_summary, execute_gen, prepare_gen
    from paperkit_cli import runtime

    s = prepare_gen(runtime.settings(GenSettings))
    gs = execute_gen(s)
    write_npz(output, gs)
    runtime.write_manifest(output=output, seed=seed)
    options.echo_data(io.dumps_json({"output": str(output), **dataset_summary(gs)}, indent=None))
