"""Options shared by the sve-* commands."""

from __future__ import annotations

import click

size_option = click.option("--size", type=click.IntRange(64, 1024), default=128, show_default=True,
                           help="Side of the square diagrams in px (a multiple of 32).")
max_primitives_option = click.option("--max-primitives", type=click.IntRange(1, 12), default=4, show_default=True,
                                     help="Each diagram draws 1..N primitives (plus constructions and clutter).")
model_option = click.option("--model", "model", default="sve-small", show_default=True, metavar="NAME|PATH",
                            help="A model.pt written by sve-encode, or the built-in 'sve-small' (a small shipped "
                                 "checkpoint trained on 128-px diagrams).")
