"""Options shared by the dcgnn-* commands (the graphs to read or generate, a saved model)."""

from __future__ import annotations

import click

from paperkit_cli import options

SYNTHETIC = ("redblue", "topofeature", "motif")

data_options = options._compose(
    click.option("--data", default=None, metavar="FILE.npz|DIR",
                 help="Graphs: an NPZ (keys x (N,F) node features, edge_index (2,E) global node ids with both "
                      "directions, graph_ptr (G+1) node offsets, y (G) int labels; optional edge_gt (E) 0/1, "
                      "split (G) 0 train/1 val/2 test/3 ID test, feature_names, class_names) or a TU-format folder "
                      "<root>/<NAME> holding raw/<NAME>_A.txt etc. (read offline, never downloaded)."),
    click.option("--synthetic", type=click.Choice(SYNTHETIC), default=None,
                 help="Generate the graphs instead (same generator as dcgnn-gen, seeded by --seed)."),
    click.option("--n-graphs", type=click.IntRange(10, 1_000_000), default=2000, show_default=True,
                 help="Graphs to generate with --synthetic."),
)

model_option = click.option("--model", required=True, type=click.Path(dir_okay=False), metavar="PATH",
                            help="A model.pt written by dcgnn-fit.")
