"""The rule-KG generator: connected graphs, rules that hold, queries that need two hops or more, routes that
only the relation types pin down, zero-shot splits."""

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

from paperkit.methods.kgfm.generators import compose, rule_graph, rules, two_hop_routes


@pytest.fixture(scope="module")
def gen():
    return rules(3, entities=200, types=10, relations=16, n_rules=5)


def _graph(rows):
    ents = sorted({e for h, _, t in rows for e in (h, t)})
    idx = {e: i for i, e in enumerate(ents)}
    h, t = [idx[r[0]] for r in rows], [idx[r[2]] for r in rows]
    return coo_matrix((np.ones(len(h)), (h, t)), shape=(len(ents), len(ents))), idx


@pytest.mark.parametrize("split", ["train", "test_graph"])
def test_message_graphs_are_connected(gen, split):
    adj, _ = _graph(gen.splits[split])
    assert connected_components(adj, directed=False)[0] == 1


def _hop(base, r):
    """(x, y) pairs of relation r over the base facts, ``name^-1`` read backwards."""
    name = r.removesuffix("^-1")
    return {(t, h) if r.endswith("^-1") else (h, t) for h, rr, t in base if rr == name}


def test_rules_hold_on_every_fact(gen):
    """Each derived relation's facts (graph and queries together) are exactly r1 . r2 over the base facts,
    recomputed here by a join independent of the generator's."""
    for graph, splits in (("train", ("train", "train_queries", "valid")), ("test", ("test_graph", "test"))):
        rows = {x for s in splits for x in gen.splits[s]}
        rel_rules = {x["relation"]: x["rule"].split(" . ") for x in gen.labels if x["graph"] == graph}
        base = [x for x in rows if x[1] not in rel_rules]
        for q, (r1, r2) in rel_rules.items():
            a, b = _hop(base, r1), _hop(base, r2)
            joined = {(x, z) for x, y in a for y2, z in b if y == y2}
            facts = {(h, t) for h, rr, t in rows if rr == q}
            hidden = {(h, t) for h, rr, t in gen.splits["valid" if graph == "train" else "test"] if rr == q}
            assert hidden <= facts <= joined and len(facts) > 0
            # facts dropped as queries are exactly those adjacent in the graph: none besides them is missing
            graph_rows = gen.splits["train" if graph == "train" else "test_graph"]
            adjacent = {(h, t) for h, _, t in graph_rows} | {(t, h) for h, _, t in graph_rows}
            assert joined - facts <= adjacent
            assert set(compose(base, r1, r2)) == joined


def test_queries_need_two_hops_or_more(gen):
    for graph, queries in (("train", "valid"), ("train", "train_queries"), ("test_graph", "test")):
        adj, idx = _graph(gen.splits[graph])
        rows = [q for q in gen.splits[queries] if q not in set(gen.splits[graph])]
        assert rows
        dist = shortest_path(adj, directed=False, unweighted=True, indices=sorted({idx[h] for h, _, _ in rows}))
        at = {s: i for i, s in enumerate(sorted({idx[h] for h, _, _ in rows}))}
        d = np.array([dist[at[idx[h]], idx[t]] for h, _, t in rows])
        assert d.min() >= 2 and np.isfinite(d).all()


def test_each_rule_is_the_only_typed_two_hop_route():
    g = rule_graph(np.random.default_rng(0), "x:", entities=200, types=10, relations=16, rules=5)
    for q, rule in g.rules.items():
        assert two_hop_routes(g.signature, *g.signature[q], exclude=q) == [rule]
    # the types of the facts agree with the signatures
    for h, r, t in g.base + [f for fs in g.derived.values() for f in fs]:
        assert (g.entity_type[h], g.entity_type[t]) == g.signature[r]


def test_zero_shot_split_and_same_seed(gen):
    names = lambda splits: {x for s in splits for h, r, t in gen.splits[s] for x in (h, r, t)}  # noqa: E731
    assert not names(("train", "train_queries", "valid")) & names(("test_graph", "test"))
    assert sum(x["graph"] == "train" for x in gen.labels) == 5
    assert rules(3, entities=200, n_rules=5).splits == gen.splits
    test_rel = {r for _, r, _ in gen.splits["test"]}
    assert test_rel <= {r for _, r, _ in gen.splits["test_graph"]}  # the model can condition on each
