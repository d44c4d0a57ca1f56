"""Options shared by the rgtg-* commands (the base LM)."""

from __future__ import annotations

import click

lm_option = click.option(
    "--lm", "lm_path", required=True, type=click.Path(path_type=str), metavar="LM.pt|DIR",
    help="The frozen base LM pi_ref: an LM.pt (rgtg-toy's lm.pt) or a local HF causal-LM directory "
         "(loaded with local_files_only; its tokenizer must be in the same directory).")
