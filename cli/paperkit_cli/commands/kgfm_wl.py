"""``paperkit kgfm-wl``: the two-stage WL test of MOTIF's separation power (Huang et al., ICML 2025, App. C)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._kgfm_common import graph_option, max_hyperedges_option, motifs_list_option

SETTINGS = "paperkit.methods.kgfm.run:WlSettings"


@options.command("kgfm-wl", short_help="Which relations and links a motif family can tell apart (WL test).")
@graph_option
@motifs_list_option
@click.option("--query", default=None, metavar="RELATION", help="Query relation q [default: the first relation].")
@click.option("--source", default=None, metavar="ENTITY", help="Source entity u: also colour the links (u, q, v).")
@click.option("--rounds", type=click.IntRange(1, 1000), default=None,
              help="Refinement rounds, run exactly (colours of graphs refined equally compare) [default: until the "
                   "colour partition is stable].")
@max_hyperedges_option
@options.output_options
def cli(graph, motifs, query, source, rounds, max_hyperedges, output, fmt, manifest_path):
    """Colour refinement on LIFT_F(G) from 1[r = q], then relational local 2-WL on G from --source.

    Writes colours (columns family, kind (relation|link), name, color: a stable 64-bit hash in hex; equal
    colours = MOTIF(F) cannot separate them). Prints, per family, the number of relation and link colour
    classes and the tied relation pairs.

    \b
    Examples:
      $ paperkit kgfm-wl --graph data/ch2/train.tsv --motifs f2,star3 --query g0:r0 --source g0:u -o colors.csv
      $ paperkit kgfm-wl --graph data/search/train.tsv --motifs f2,f3 --query r0
    """
    from paperkit.core import tables
    from paperkit.methods.kgfm.run import WlSettings, run_wl
    from paperkit_cli import runtime

    s = runtime.settings(WlSettings)
    res = run_wl(s)
    tables.write_table(output, res["rows"], fmt=fmt)
    for item in res["summary"]:
        item["tied_pairs"] = ", ".join(item["tied"][:6]) + (" ..." if len(item["tied"]) > 6 else "")
    options.report_table(res["summary"], [("family", "family", ""), ("relation_classes", "relation colours", "d"),
                                          ("link_classes", "link colours", "d"), ("relations_tied", "tied pairs", "d"),
                                          ("tied_pairs", "tied", "")],
                         title=f"kgfm-wl: query {res['query']}" + (f", source {res['source']}" if res["source"] else ""))
    runtime.write_manifest(inputs=[graph], output=output, manifest_path=manifest_path)
