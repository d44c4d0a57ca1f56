"""LIFT against brute-force homomorphism enumeration; ULTRA's degree weights; the WL test (App. C)."""

import itertools

import numpy as np
import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.kgfm.data import Graph, build_vocab, encode
from paperkit.methods.kgfm.generators import connecthub_graph, search_f2_f3
from paperkit.methods.kgfm.lift import (
    Lift,
    _binary,
    _binary_pairs,
    check_star_size,
    enumerated_size,
    incidence,
    lift,
    lift_bruteforce,
    relation_sets,
    star_cubes,
)
from paperkit.methods.kgfm.wl import entity_colors, relation_colors


def random_kg(seed, n=30, n_rel=4, m=45):
    rng = np.random.default_rng(seed)
    tr = np.stack([rng.integers(n, size=m), rng.integers(n_rel, size=m), rng.integers(n, size=m)], 1)
    return Graph.from_triples(np.unique(tr, axis=0), n, n_rel)


def enumerate_homs(g, motif):
    """Independent reference: every tuple of edges (E^k) whose endpoints meet as the motif's pattern says."""
    h, r, t = g.edges.T
    same = lambda a, b: a[:, None] == b[None, :]  # noqa: E731
    end = {"h": h, "t": t}
    if motif in ("h2h", "t2t", "h2t", "t2h"):
        i, j = np.nonzero(same(end[motif[0]], end[motif[2]]))
        return {(r[a], r[b]) for a, b in zip(i, j, strict=True)}
    if motif in ("tfh", "tft", "hft", "hfh"):
        meet1 = same(end[motif[0]], h)  # r1's end meets the middle edge's head
        meet3 = same(t, end[motif[2]])  # the middle edge's tail meets r3's end
        out = set()
        for mid in range(len(r)):
            for a in np.nonzero(meet1[:, mid])[0]:
                for b in np.nonzero(meet3[mid])[0]:
                    out.add((r[a], r[mid], r[b]))
        return out
    k = int(motif[4:])
    out = set()
    for combo in itertools.product(range(len(r)), repeat=k):
        if len({t[c] for c in combo}) == 1:
            out.add(tuple(r[c] for c in combo))
    return out


@pytest.mark.parametrize("family", ["f3", "ultra", "h2t", "none"])
def test_lift_equals_homomorphism_enumeration(family):
    g = random_kg(0)
    lf = lift(g, family)
    for motif, edges in lf.edges.items():
        assert {tuple(e) for e in edges.tolist()} == {tuple(map(int, x)) for x in enumerate_homs(g, motif)}
        assert len(edges) == len(np.unique(edges, axis=0))
    ref = lift_bruteforce(g, family)
    for motif in lf.edges:
        assert np.array_equal(np.unique(lf.edges[motif], axis=0), ref.edges[motif])


def test_path_lift_with_more_than_64_relations_is_sorted_and_exact():
    """2 x 40 relations need two 64-bit words per relation set in the path kernel; rows come out in order."""
    g = random_kg(3, n=20, n_rel=40, m=100)
    lf = lift(g, "f3")
    for motif in ("tfh", "tft", "hft", "hfh"):
        e = lf.edges[motif]
        assert {tuple(x) for x in e.tolist()} == {tuple(map(int, x)) for x in enumerate_homs(g, motif)}
        assert np.array_equal(e, e[np.lexsort(e.T[::-1])])


def test_star_lift_equals_enumeration_and_refuses_size():
    g = random_kg(1, n=12, n_rel=3, m=16)
    lf = lift(g, "star3")
    assert {tuple(e) for e in lf.edges["star3"].tolist()} == {tuple(map(int, x)) for x in enumerate_homs(g, "star3")}
    with pytest.raises(UsageError, match="hyperedges"):
        lift(g, "star3", max_hyperedges=5)
    with pytest.raises(UsageError, match="unknown motif family"):
        lift(g, "f4")


@pytest.mark.parametrize("seed,k", [(1, 3), (2, 4), (3, 2)])
def test_star_cubes_stand_for_exactly_the_star_hyperedges(seed, k):
    """The signed cubes' indicator, sum_W coef[W] 1[supp(t) <= W], is 1 on every k-star hyperedge and 0 on every
    other k-tuple of relations (all 6^k of them checked), and their count equals the enumeration's."""
    g = random_kg(seed, n=12, n_rel=3, m=16)
    cubes = star_cubes(g, k)
    stars = {tuple(e) for e in lift(g, f"star{k}").edges[f"star{k}"].tolist()}
    sets = [set(cubes.members[cubes.members[:, 0] == c, 1].tolist()) for c in range(len(cubes.coef))]
    assert len(sets) < len(stars)
    for t in itertools.product(range(g.n_rel2), repeat=k):
        assert sum(int(c) for c, w in zip(cubes.coef, sets, strict=True) if set(t) <= w) == (t in stars), t
    assert cubes.n_hyperedges() == len(stars)
    held = lift(g, f"star{k}", star_cubes_ok=True)
    assert held.edges[f"star{k}"].shape == (0, k) and held.counts()[f"star{k}"] == len(stars)
    # too many intersections: the tuples are enumerated instead
    assert star_cubes(g, k, max_cubes=2) is None
    # the star size limit guards enumeration only: the model's lift (cubes) is not refused, the tuples are
    # (the binary motifs, always enumerated, have their own count under the same limit)
    with pytest.raises(UsageError, match="star lift would enumerate"):
        lift(g, f"star{k}", max_hyperedges=len(stars) - 1)
    check_star_size(g, f"star{k}", len(stars) - 1, cubes_ok=True)
    limit = max(len(stars) - 1, enumerated_size(g, f"star{k}", 10**9))
    assert lift(g, f"star{k}", max_hyperedges=limit, star_cubes_ok=True).counts()[f"star{k}"] == len(stars)


def test_ultra_degree_weights_hand_case():
    # v0 heads r0 and r1 (head degree 2), v1 heads r1 only: h2h(r0, r1) = 1/2, h2h(r1, r1) = 1/2 + 1.
    g = Graph(np.array([[0, 0, 2], [0, 1, 3], [1, 1, 2]]), 4, 1)
    Eh, Et = incidence(g)
    e, w = _binary(Eh, Et, "h2h")
    got = {tuple(x): y for x, y in zip(e.tolist(), w.tolist(), strict=True)}
    assert got == pytest.approx({(0, 0): 0.5, (0, 1): 0.5, (1, 0): 0.5, (1, 1): 1.5})
    # h2t(r1, r0): v1? no; the tails are v2 (r0, r1) and v3 (r1), heads v0, v1: no entity is both
    assert len(_binary(Eh, Et, "h2t")[0]) == 0


def _connecthub(k):
    rows, labels = connecthub_graph(k, k + 1)
    v = build_vocab(rows)
    g = Graph.from_triples(encode(rows, v), v.n_entities, v.n_relations)
    return g, v, labels


@pytest.mark.parametrize("k", [2, 3])
def test_wl_connecthub_f2_ties_and_k_plus_1_star_separates(k):
    g, v, labels = _connecthub(k)
    q, u = v.relations.index("r0"), v.entities.index("u")

    def classes(family):
        ec = entity_colors(g, relation_colors(lift(g, family), q), u)
        pos = sorted(ec[v.entities.index(x["tail"])] for x in labels if x["label"] == 1)
        neg = sorted(ec[v.entities.index(x["tail"])] for x in labels if x["label"] == 0)
        return pos, neg

    for family in ("ultra", "f2", "f3", f"star{k}"):
        pos, neg = classes(family)
        assert pos == neg, family
    pos, neg = classes(f"star{k + 1}")
    assert not set(pos) & set(neg)


def test_searched_pair_only_f3_separates():
    found = search_f2_f3(seed=0)
    assert found is not None
    rows = found.splits["train"]
    v = build_vocab(rows)
    g = Graph.from_triples(encode(rows, v), v.n_entities, v.n_relations)
    names = v.relations + [f"{n}^-1" for n in v.relations]
    pair = found.labels[0]
    q, a, b = (names.index(pair[x]) for x in ("query", "a", "b"))
    for family, separated in (("f2", False), ("ultra", False), ("f3", True)):
        c = relation_colors(lift(g, family), q)
        assert (c[a] != c[b]) == separated, family


def _partition(colors):
    groups = {}
    for i, c in enumerate(colors.tolist()):
        groups.setdefault(c, []).append(i)
    return sorted(groups.values())


def test_swapping_t2h_for_h2t_keeps_colours():
    """Prop. 6.2: t2h is isomorphic to h2t (positions swapped), so the WL partition is the same."""
    g = random_kg(3, n=20, n_rel=4, m=30)
    heads, tails = relation_sets(g)
    base = lift(g, "f2")
    swapped = Lift(base.n_rel2, dict(base.edges), dict(base.weights))
    del swapped.edges["h2t"]
    swapped.edges["t2h"] = _binary_pairs(tails, heads, g.n_rel2)
    for q in range(g.n_rel2):
        assert _partition(relation_colors(base, q)) == _partition(relation_colors(swapped, q))
    assert relation_colors(base, 0).tolist() == relation_colors(base, 0).tolist()  # stable hashing


@pytest.mark.parametrize("family", ["h2t", "ultra", "f2", "f3", "star3"])
def test_enumerated_size_counts_without_building_and_lift_refuses_past_it(family):
    """f2/f3 (and ULTRA's) lifts were never bounded: a hub with R relations gives ~R^2 hyperedges per 3-path
    motif whatever --max-hyperedges said. The count equals the built lift's, and one under it is refused."""
    g = random_kg(4, n=20, n_rel=6, m=60)
    lf = lift(g, family)
    n = sum(v for k, v in lf.counts().items() if not k.startswith("star"))
    assert enumerated_size(g, family, 10**9) == n
    with pytest.raises(UsageError, match="--max-hyperedges"):
        lift(g, family, max_hyperedges=n - 1, star_cubes_ok=True)
