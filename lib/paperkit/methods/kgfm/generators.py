"""Synthetic KGs (MOTIF, Sec. 7 and App. F): ConnectHub(k) by the paper's recipe, a search for small KGs whose
F2 colours tie two relations that F3 separates (the Fig. 7 kind), and Metafam-style rule KGs whose test graph
uses new relation names (zero-shot)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from paperkit.core.errors import UsageError
from paperkit.methods.kgfm.data import Graph, build_vocab, encode
from paperkit.methods.kgfm.lift import lift
from paperkit.methods.kgfm.wl import relation_colors

Triple = tuple[str, str, str]


@dataclass
class Generated:
    splits: dict[str, list[Triple]]
    labels: list[dict[str, object]] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)


# ------------------------------------------------------------------------------------ ConnectHub
def connecthub_graph(k: int, n_hub: int, prefix: str = "") -> tuple[list[Triple], list[dict[str, object]]]:
    """One ConnectHub(k) graph with |R_H| = |R_N| = n_hub >= k + 1.

    A hub entity receives one edge of every R_H relation (the (k+1)-star only R_H forms). For every subset S
    of R_H, and likewise of R_N, of size 2..k a new centre c_S receives s(u, c_S) for s in S from the query
    head u, and r0(u, c_S). A label is 1 for R_H centres, 0 for R_N centres: stars of arity <= k, and all binary
    motifs, look the same for both groups, so only (k+1)-stars can separate them."""
    p = prefix
    triples: list[Triple] = [(f"{p}x{i}", f"{p}H{i}", f"{p}hub") for i in range(n_hub)]
    labels: list[dict[str, object]] = []
    for group, label in (("H", 1), ("N", 0)):
        for size in range(2, k + 1):
            for subset in itertools.combinations(range(n_hub), size):
                c = f"{p}c{group}" + "-".join(map(str, subset))
                triples += [(f"{p}u", f"{p}{group}{i}", c) for i in subset]
                triples.append((f"{p}u", f"{p}r0", c))
                labels.append({"head": f"{p}u", "relation": f"{p}r0", "tail": c, "label": label})
    return triples, labels


def connecthub(k: int, n_graphs: int, seed: int, train_fraction: float = 0.7) -> Generated:
    """``n_graphs`` ConnectHub(k) graphs, |R_H| growing from k+1, split by graph (disjoint relation names)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_graphs)
    n_train = max(1, min(n_graphs - 1, round(train_fraction * n_graphs)))
    splits: dict[str, list[Triple]] = {"train": [], "test": []}
    labels = []
    for g in range(n_graphs):
        split = "train" if g in set(order[:n_train].tolist()) else "test"
        triples, lab = connecthub_graph(k, k + 1 + g, prefix=f"g{g}:")
        splits[split] += triples
        labels += [{"split": split, "graph": g, **row} for row in lab]
    return Generated(splits, labels, {"kind": "connecthub", "k": k, "graphs": n_graphs, "seed": seed})


# ----------------------------------------------------------------------------------------- search
def search_f2_f3(seed: int, tries: int = 2000, n_entities: int = 6, n_relations: int = 3,
                 n_edges: int = 6) -> Generated | None:
    """A small random KG with a query q and two relations a, b that F2 colours tie and F3 colours separate."""
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        rows = {(f"e{rng.integers(n_entities)}", f"r{rng.integers(n_relations)}", f"e{rng.integers(n_entities)}")
                for _ in range(n_edges)}
        rows = sorted(rows)
        vocab = build_vocab(rows)
        if vocab.n_relations < 3:
            continue
        g = Graph.from_triples(encode(rows, vocab), vocab.n_entities, vocab.n_relations)
        lf2, lf3 = lift(g, "f2"), lift(g, "f3")
        for q in range(vocab.n_relations):
            c2, c3 = relation_colors(lf2, q), relation_colors(lf3, q)
            for a, b in itertools.combinations(range(g.n_rel2), 2):
                if q not in (a, b) and c2[a] == c2[b] and c3[a] != c3[b]:
                    names = vocab.relations + [f"{n}^-1" for n in vocab.relations]
                    return Generated({"train": rows}, [{"query": names[q], "a": names[a], "b": names[b]}],
                                     {"kind": "search", "seed": seed})
    return None


# ------------------------------------------------------------------------------------------ rules
@dataclass
class RuleGraph:
    """One typed KG closed under two-hop composition rules.

    ``signature[r] = (head type, tail type)`` for every relation (base and derived, no inverses);
    ``rules[q] = (r1, r2)`` says q(x, z) <=> r1(x, y) and r2(y, z) for some y, where r1 and r2 are base
    relations or their inverses (written ``name^-1``); ``derived[q]`` holds every fact of q."""

    base: list[Triple]
    signature: dict[str, tuple[int, int]]
    rules: dict[str, tuple[str, str]]
    derived: dict[str, list[Triple]]
    entity_type: dict[str, int]


def inverse_name(r: str) -> str:
    return r[:-3] if r.endswith("^-1") else f"{r}^-1"


def _directed(signature: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Type signatures of every relation and of its inverse."""
    return {**signature, **{inverse_name(r): (b, a) for r, (a, b) in signature.items()}}


def two_hop_routes(signature: dict[str, tuple[int, int]], head_type: int, tail_type: int,
                   exclude: str | None = None) -> list[tuple[str, str]]:
    """Every relation pair (s1, s2), inverses included, whose types chain head_type -> X -> tail_type
    (``exclude`` and its inverse left out): the routes a model that knows only relation types could follow."""
    sig = _directed(signature)
    if exclude is not None:
        sig = {r: v for r, v in sig.items() if r not in (exclude, inverse_name(exclude))}
    return [(s1, s2) for s1, (a1, b1) in sig.items() if a1 == head_type
            for s2, (a2, b2) in sig.items() if a2 == b1 and b2 == tail_type and s2 != inverse_name(s1)]


def _choose_rules(rng: np.random.Generator, base_sig: dict[str, tuple[int, int]], n_rules: int,
                  names: list[str]) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[int, int]]]:
    """Greedily add rules q = r1 . r2 (over base relations and inverses) while every chosen rule's route stays
    the only two-hop route between its head and tail types, derived relations counted as relations too: so a
    model that tells relations apart by how they meet (the lift) can find the route, and one that cannot
    (no motifs) faces every other two-hop path out of the head as an equal candidate."""
    sig = _directed(base_sig)
    cands = [(r1, r2) for r1, (_, b1) in sig.items() for r2, (a2, b2) in sig.items()
             if a2 == b1 and r2 != inverse_name(r1) and sig[r1][0] != b2]
    rules: dict[str, tuple[str, str]] = {}
    signature = dict(base_sig)
    for j in rng.permutation(len(cands)):
        if len(rules) == n_rules:
            break
        r1, r2 = cands[j]
        q = names[len(rules)]
        trial = {**signature, q: (sig[r1][0], sig[r2][1])}
        rs = {**rules, q: (r1, r2)}
        if all(two_hop_routes(trial, *trial[p], exclude=p) == [rs[p]] for p in rs):
            rules, signature = rs, trial
    return rules, signature


def _connected(triples: list[Triple], entities: list[str]) -> bool:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    idx = {e: i for i, e in enumerate(entities)}
    h = [idx[x] for x, _, _ in triples]
    t = [idx[z] for _, _, z in triples]
    adj = coo_matrix((np.ones(len(h)), (h, t)), shape=(len(entities), len(entities)))
    return connected_components(adj, directed=False)[0] == 1


def rule_graph(rng: np.random.Generator, prefix: str, *, entities: int, types: int, relations: int, rules: int,
               fanout: int = 2, tries: int = 200) -> RuleGraph:
    """A connected typed KG: ``relations`` base relations between random distinct types, each linking every
    entity of its head type to ``fanout`` random entities of its tail type, and ``rules`` derived relations
    closed under their composition rules. Relation names are ``{prefix}r0``, ``{prefix}r1``, ... in random
    order (names do not tell base from derived)."""
    for _ in range(tries):
        ent = [f"{prefix}e{i}" for i in range(entities)]
        etype = rng.permutation(np.arange(entities) % types)
        members = [[e for e, t in zip(ent, etype, strict=True) if t == k] for k in range(types)]
        names = [f"{prefix}r{i}" for i in rng.permutation(relations + rules)]
        base_sig = {}
        for name in names[:relations]:
            a, b = rng.choice(types, size=2, replace=False)
            base_sig[name] = (int(a), int(b))
        base = sorted((x, r, members[b][j]) for r, (a, b) in base_sig.items() for x in members[a]
                      for j in rng.choice(len(members[b]), size=min(fanout, len(members[b])), replace=False))
        chosen, signature = _choose_rules(rng, base_sig, rules, names[relations:])
        if len(chosen) < rules or not _connected(base, ent):
            continue
        derived = {q: [(x, q, z) for x, z in compose(base, r1, r2)] for q, (r1, r2) in chosen.items()}
        return RuleGraph(base, signature, chosen, derived, {e: int(t) for e, t in zip(ent, etype, strict=True)})
    raise UsageError(f"--kind rules: no connected graph with {rules} rules whose two-hop route is unique after "
                     f"{tries} draws; use more --types or fewer --relations/--rules")


def compose(base: list[Triple], r1: str, r2: str) -> list[tuple[str, str]]:
    """Every (x, z) with r1(x, y) and r2(y, z), where ``name^-1`` reads a base relation backwards."""
    def step(r: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        name, inv = (r[:-3], True) if r.endswith("^-1") else (r, False)
        for h, rel, t in base:
            if rel == name:
                a, b = (t, h) if inv else (h, t)
                out.setdefault(a, set()).add(b)
        return out
    s1, s2 = step(r1), step(r2)
    return sorted({(x, z) for x, ys in s1.items() for y in ys for z in s2.get(y, ())})


def _split_derived(rng: np.random.Generator, g: RuleGraph, visible: float) -> tuple[list[Triple], list[Triple]]:
    """One random fact of each rule, and a fraction ``visible`` of the others, join the message graph (the
    model conditions on a relation through its edges; for the lift one fact is enough, while every further one
    tells a relation-blind model which entities are q-tails); the rest are queries, kept only where head and
    tail are not adjacent in the graph (every query needs two hops or more)."""
    shown, hidden = [], []
    for facts in g.derived.values():
        mask = rng.random(len(facts)) < visible
        mask[rng.integers(len(facts))] = True
        shown += [f for f, m in zip(facts, mask, strict=True) if m]
        hidden += [f for f, m in zip(facts, mask, strict=True) if not m]
    adjacent = {(h, t) for h, _, t in g.base + shown} | {(t, h) for h, _, t in g.base + shown}
    return sorted(g.base + shown), [f for f in hidden if (f[0], f[2]) not in adjacent]


def rules(seed: int, entities: int = 400, types: int = 10, relations: int = 16, n_rules: int = 6,
          fanout: int = 2, visible: float = 0.0, valid: float = 0.2) -> Generated:
    """Zero-shot rule KGs: a training graph and a test graph with new relation names, a new type layout and a
    held-out set of rules (each drawn independently).

    Splits: ``train`` (message graph: base facts and one fact of each rule), ``train_queries``
    (the derived facts to learn from: the shown ones, hidden from the graph when asked, and the hidden ones
    not in ``valid``), ``valid``, ``test_graph`` (message graph of the test KG) and ``test`` (its hidden derived
    facts). Base facts are random, so only the derived ones are worth ranking."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[Triple]] = {}
    labels: list[dict[str, object]] = []
    for split, prefix in (("train", "a:"), ("test", "b:")):
        g = rule_graph(rng, prefix, entities=entities, types=types, relations=relations, rules=n_rules,
                       fanout=fanout)
        graph, queries = _split_derived(rng, g, visible)
        labels += [{"graph": split, "relation": q, "rule": f"{r1} . {r2}", "head_type": g.signature[q][0],
                    "tail_type": g.signature[q][1], "facts": len(g.derived[q])} for q, (r1, r2) in g.rules.items()]
        if split == "train":
            held = rng.random(len(queries)) < valid
            shown = sorted(set(graph) - set(g.base))
            out |= {"train": graph, "train_queries": sorted(shown + [x for x, m in zip(queries, held, strict=True)
                                                                      if not m]),
                    "valid": [x for x, m in zip(queries, held, strict=True) if m]}
        else:
            out |= {"test_graph": graph, "test": queries}
    return Generated(out, labels, {"kind": "rules", "seed": seed, "entities": entities, "types": types,
                                   "relations": relations, "rules": n_rules, "fanout": fanout, "visible": visible})
