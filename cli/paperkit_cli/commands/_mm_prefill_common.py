"""Options and helpers shared by ``mm-prefill``, ``mm-prefill-search`` and ``mm-prefill-bench``
(click only at import time)."""

from __future__ import annotations

import click

from paperkit_cli import options

PATTERN_CHOICES = ("a_shape", "vs", "block", "grid", "q_boundary", "2d_boundary", "dense")
CANDIDATES = PATTERN_CHOICES[:-1]

memory_option = click.option(
    "--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None, metavar="GB",
    help="Refuse runs whose estimated memory (from the shapes, before allocating) exceeds GB "
         "[default: 3/4 of RAM].")

input_options = options._compose(
    click.option("--qkv", "qkv_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                 help="Captured tensors: .npz (arrays q, k, v, optional modality) or .pt dict; [H,N,D] or [L,H,N,D]."),
    click.option("--synthetic", default=None, metavar="SPEC",
                 help="Synthetic planted heads instead: preset 'video' or 'mixed', or a YAML spec file."),
    click.option("--block-size", type=click.Choice([16, 32, 64, 128]), default=64, show_default=True,
                 help="Tile size (query and key blocks)."),
)

backend_option = click.option("--backend", type=click.Choice(["auto", "torch", "triton"]), default="auto",
                              show_default=True, help="Sparse operator: auto = Triton on CUDA, torch on CPU.")
