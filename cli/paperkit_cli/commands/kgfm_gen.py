"""``paperkit kgfm-gen``: synthetic KGs for MOTIF (Huang et al., ICML 2025): ConnectHub(k), F2/F3 pairs, rule KGs."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.kgfm.run:GenSettings"


@options.command("kgfm-gen", short_help="Generate ConnectHub(k), F2-vs-F3 search or typed rule KGs for zero-shot.")
@click.option("--kind", type=click.Choice(["connecthub", "search", "rules"]), default="connecthub", show_default=True,
              help="connecthub: the Table 1 task; search: a small KG where F2 ties two relations F3 separates; "
                   "rules: typed KGs with two-hop composition rules; a test KG with new relation names and "
                   "held-out rules.")
@click.option("--k", type=click.IntRange(2, 6), default=2, show_default=True,
              help="connecthub: the largest star both relation groups share (hub has k+1 relations).")
@click.option("--graphs", type=click.IntRange(2, 50), default=5, show_default=True,
              help="connecthub: number of graphs (|R_H| = k+1, k+2, ...), split 70/30 by graph.")
@click.option("--entities", type=click.IntRange(20, 100_000), default=400, show_default=True,
              help="rules: entities per graph (spread evenly over the types).")
@click.option("--types", type=click.IntRange(3, 1000), default=10, show_default=True,
              help="rules: entity types; each relation links one type to another.")
@click.option("--relations", type=click.IntRange(2, 1000), default=16, show_default=True,
              help="rules: base relations per graph (random, fan-out 2).")
@click.option("--rules", type=click.IntRange(1, 100), default=6, show_default=True,
              help="rules: derived relations per graph, each r1(x, y) and r2(y, z) => q(x, z).")
@options.seed_option
@options.run_dir_options
def cli(kind, k, graphs, entities, types, relations, rules, seed, run_dir, resume, force):
    """Write a synthetic KG as TSV triples with labels and metadata.

    Writes to DIR: train.tsv (and test.tsv for connecthub; train_queries.tsv, valid.tsv, test_graph.tsv,
    test.tsv for rules), labels.csv (connecthub: split, graph, head, relation, tail, label; search: query,
    a, b; rules: graph, relation, rule, head_type, tail_type, facts) and meta.json. ConnectHub's hub receives
    every R_H relation; centres receive stars of 2..k relations of R_H or R_N from u, and r0(u, c); label 1
    for R_H centres.

    Rules: two connected KGs (train, test) drawn independently: entities of --types types, random base
    relations, and --rules derived relations q = r1 . r2 (inverses allowed), each the only two-hop route
    between its head and tail types. One fact of each derived relation joins the message graph (train.tsv,
    test_graph.tsv); the others are the queries (train_queries.tsv, valid.tsv, test.tsv), all at two hops or
    more. The test KG's relations have new names and its rules are its own (zero-shot).

    \b
    Examples:
      $ paperkit kgfm-gen --kind connecthub --k 2 --run-dir data/ch2
      $ paperkit kgfm-gen --kind rules --seed 1 --run-dir data/rules
    """
    import json

    from paperkit.core import io, tables
    from paperkit.methods.kgfm.data import write_triples
    from paperkit.methods.kgfm.run import GenSettings, execute_gen
    from paperkit_cli import runtime

    s = runtime.settings(GenSettings)
    run = runtime.start_run(run_dir, resume=resume, force=force)
    gen = execute_gen(s)
    outputs = []
    for name, rows in gen.splits.items():
        write_triples(run.file(f"{name}.tsv"), rows)
        outputs.append(run.file(f"{name}.tsv"))
    tables.write_table(run.file("labels.csv"), gen.labels)
    io.write_json(run.file("meta.json"), {**gen.meta, "triples": {k_: len(v) for k_, v in gen.splits.items()}})
    options.report_table([{"file": f"{n}.tsv", "triples": len(v)} for n, v in gen.splits.items()],
                         [("file", "file", ""), ("triples", "triples", "d")], title=f"kgfm-gen --kind {kind}")
    runtime.write_manifest(run_dir=run.path, seed=seed)
    options.echo_data(json.dumps({"run_dir": str(run.path), "kind": kind,
                                  "triples": {n: len(v) for n, v in gen.splits.items()}}))
