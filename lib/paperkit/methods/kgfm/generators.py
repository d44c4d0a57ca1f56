"""Synthetic KGs (MOTIF, Sec. 7 and App. F): ConnectHub(k) by the paper's recipe, a search for small KGs whose
F2 colours tie two relations that F3 separates (the Fig. 7 kind), and Metafam-style rule KGs whose test graph
uses new relation names (zero-shot)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

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
RULE_RELATIONS = ("father_of", "mother_of", "parent_of", "child_of", "spouse_of", "sibling_of",
                  "grandparent_of", "grandchild_of")


def _family_facts(rng: np.random.Generator, prefix: str, generations: int, max_children: int) -> list[Triple]:
    """One family tree closed under the rules: hierarchy (father/mother -> parent), inverse (child),
    symmetry (spouse, sibling) and composition (grandparent = parent . parent)."""
    people: list[tuple[str, str]] = []  # (name, sex)
    parents: dict[str, tuple[str, str]] = {}
    couples = [(f"{prefix}p0", f"{prefix}p1")]
    people += [(f"{prefix}p0", "m"), (f"{prefix}p1", "f")]
    facts: set[Triple] = set()
    for _ in range(generations):
        nxt = []
        for dad, mum in couples:
            facts.update({(dad, "spouse_of", mum), (mum, "spouse_of", dad)})
            for _ in range(int(rng.integers(1, max_children + 1))):
                child = f"{prefix}p{len(people)}"
                sex = "m" if rng.random() < 0.5 else "f"
                people.append((child, sex))
                parents[child] = (dad, mum)
                partner = f"{prefix}p{len(people)}"
                people.append((partner, "f" if sex == "m" else "m"))
                nxt.append((child, partner) if sex == "m" else (partner, child))
        couples = nxt
    for child, (dad, mum) in parents.items():
        facts.update({(dad, "father_of", child), (mum, "mother_of", child)})
        for par in (dad, mum):
            facts.update({(par, "parent_of", child), (child, "child_of", par)})
            for gp in parents.get(par, ()):
                facts.update({(gp, "grandparent_of", child), (child, "grandchild_of", gp)})
    for a, b in itertools.permutations(parents, 2):
        if parents[a] == parents[b]:
            facts.add((a, "sibling_of", b))
    return sorted(facts)


def rules(seed: int, families: int = 6, generations: int = 3, max_children: int = 3,
          holdout: float = 0.2) -> Generated:
    """Train graph (train.tsv, valid.tsv held out) and a test graph of other families whose relations carry new
    names (test_graph.tsv = what the model sees, test.tsv = held-out facts to rank)."""
    rng = np.random.default_rng(seed)
    train = [f for i in range(families) for f in _family_facts(rng, f"a{i}:", generations, max_children)]
    test = [f for i in range(families) for f in _family_facts(rng, f"b{i}:", generations, max_children)]
    new_names = {r: f"rel{j}" for j, r in enumerate(rng.permutation(RULE_RELATIONS).tolist())}
    test = [(h, new_names[r], t) for h, r, t in test]

    def split(rows: list[Triple]) -> tuple[list[Triple], list[Triple]]:
        mask = rng.random(len(rows)) < holdout
        return [x for x, m in zip(rows, mask, strict=True) if not m], [x for x, m in zip(rows, mask, strict=True) if m]

    train_graph, valid = split(train)
    test_graph, test_q = split(test)
    ents = {e for h, _, t in test_graph for e in (h, t)}
    rels = {r for _, r, _ in test_graph}
    test_q = [x for x in test_q if x[0] in ents and x[2] in ents and x[1] in rels]
    ents_tr = {e for h, _, t in train_graph for e in (h, t)}
    valid = [x for x in valid if x[0] in ents_tr and x[2] in ents_tr]
    labels = [{"relation": r, "test_name": n} for r, n in new_names.items()]
    return Generated({"train": train_graph, "valid": valid, "test_graph": test_graph, "test": test_q}, labels,
                     {"kind": "rules", "seed": seed, "families": families, "generations": generations})
