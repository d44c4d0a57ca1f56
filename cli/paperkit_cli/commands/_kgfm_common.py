"""Options shared by the kgfm-* commands (graph files, motif families, the star size limit)."""

from __future__ import annotations

import click

from paperkit_cli import options

FAMILY_HELP = ("Motif family: none, h2t, ultra (ULTRA's four binary motifs, inverse-degree weights), f2 (h2h, t2t, "
               "h2t), f3 (f2 + the 3-path motifs tfh, tft, hft, hfh) or starK (f2 + K-stars, K = 2..8).")

graph_option = click.option("--graph", required=True, type=click.Path(dir_okay=False), metavar="TSV",
                            help="Triples, one 'head<TAB>relation<TAB>tail' per line (inverses are added).")

max_hyperedges_option = click.option(
    "--max-hyperedges", type=click.IntRange(min=1), default=5_000_000, show_default=True,
    help="Refuse, before building it, a lift that would enumerate more hyperedges than this.")

motifs_list_option = click.option("--motifs", type=options.ListOf(click.STRING, unique=True), default="f2,f3",
                                  show_default=True, metavar="FAMILY,...", help=FAMILY_HELP + " A list.")
