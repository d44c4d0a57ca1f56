"""LIFT_F (MOTIF, Sec. 4 and App. B): the relational hypergraph whose nodes are the relations of G (inverses
included) and whose hyperedges are the homomorphic images of each motif of the family F.

Binary motifs are the supports of incidence products E_a^T E_b (over the boolean semiring, on bit-packed rows;
ULTRA's weighted ones by ``scipy.sparse``), 3-path motifs the support of the (head, relation, tail) contraction
of the incidences (one compiled walk over the edges), k-stars the tuples over the tail set of every entity (for
the model, exactly the same set as a signed sum of cubes over the tail sets' intersections: ``star_cubes``).
Homomorphism semantics: relations (and entities) may repeat. ``lift_bruteforce`` enumerates homomorphisms edge
by edge: the reference the tests and the benchmark compare with.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit

from paperkit.core.errors import UsageError
from paperkit.methods.kgfm.data import Graph

BINARY = ("h2h", "t2t", "h2t", "t2h")
PATHS = ("tfh", "tft", "hft", "hfh")
FAMILIES = ("none", "h2t", "ultra", "f2", "f3", "starK")
MAX_STAR = 8
# For each 3-path motif: which end of r1 meets the middle edge's head x, which end of r3 meets its tail y.
PATH_ENDS = {"tfh": ("t", "h"), "tft": ("t", "t"), "hft": ("h", "t"), "hfh": ("h", "h")}


@dataclass
class Lift:
    """Hyperedges per motif type: ``edges[name]`` is (m, arity) int64 relation ids, ``weights[name]`` (m,).

    A star lift may instead be held as ``cubes[name]`` (see ``star_cubes``): the same hyperedge set, written as a
    signed sum of cubes W^k, without enumerating it; ``edges[name]`` is then empty (0, k)."""

    n_rel2: int
    edges: dict[str, np.ndarray] = field(default_factory=dict)
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    cubes: dict[str, StarCubes] = field(default_factory=dict)

    @property
    def types(self) -> list[str]:
        return list(self.edges)

    def counts(self) -> dict[str, int]:
        return {k: self.cubes[k].n_hyperedges() if k in self.cubes else int(len(v)) for k, v in self.edges.items()}


@dataclass
class StarCubes:
    """The k-star hyperedge set U_v T_v^k (T_v: the relations into entity v) as a signed sum of cubes:

        1[t in U_v T_v^k] = sum_W coef[W] 1[t in W^k],

    W running over the nonempty intersections of the tail sets T_v. The message any hyperedge-wise sum of
    products sends then factorises per cube (``RelationEncoder``): sum over t in W^k, t_i = r, of
    prod_(j != i) x_j(t_j) is prod_(j != i) sum_(s in W) x_j(s), for every r in W. ``members`` is (m, 2) rows
    (cube, relation), sorted; ``coef`` (n_cubes,) int64."""

    k: int
    members: np.ndarray
    coef: np.ndarray

    def sizes(self) -> np.ndarray:
        return np.bincount(self.members[:, 0], minlength=len(self.coef))

    def n_hyperedges(self) -> int:
        """How many tuples the cubes stand for: sum_W coef[W] |W|^k (exact integers)."""
        return int(sum(int(c) * int(s) ** self.k for c, s in zip(self.coef, self.sizes(), strict=True)))


def parse_family(name: str) -> tuple[str, int]:
    """``none|h2t|ultra|f2|f3|starK`` -> (family, star arity or 0)."""
    m = re.fullmatch(r"star(\d+)", name)
    if m:
        k = int(m.group(1))
        if not 2 <= k <= MAX_STAR:
            raise UsageError(f"--motifs {name}: star arity must be 2..{MAX_STAR}")
        return "star", k
    if name not in FAMILIES[:-1]:
        raise UsageError(f"--motifs {name!r}: unknown motif family; expected one of none, h2t, ultra, f2, f3, "
                         f"starK (K = 2..{MAX_STAR})")
    return name, 0


def motif_types(family: str) -> list[str]:
    fam, k = parse_family(family)
    return {"none": [], "h2t": ["h2t"], "ultra": list(BINARY), "f2": ["h2h", "t2t", "h2t"],
            "f3": ["h2h", "t2t", "h2t", *PATHS], "star": ["h2h", "t2t", "h2t", f"star{k}"]}[fam]


def arity(motif: str) -> int:
    return 2 if motif in BINARY else 3 if motif in PATHS else int(motif[4:])


def incidence(graph: Graph) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """E_h[v, r] = 1 if v heads an r-edge; E_t likewise for tails (binary, over 2|R| relations)."""
    shape = (graph.n_entities, graph.n_rel2)
    h, r, t = graph.edges.T
    ones = np.ones(len(h), dtype=np.float64)
    Eh = sp.csr_matrix((ones, (h, r)), shape=shape)
    Et = sp.csr_matrix((ones, (t, r)), shape=shape)
    Eh.data[:] = 1.0
    Et.data[:] = 1.0
    return Eh, Et


def _pairs(M: sp.spmatrix) -> tuple[np.ndarray, np.ndarray]:
    M = sp.coo_matrix(M)
    keep = M.data != 0
    order = np.lexsort((M.col[keep], M.row[keep]))
    return np.stack([M.row[keep], M.col[keep]], axis=1)[order].astype(np.int64), M.data[keep][order]


def _binary(Eh: sp.csr_matrix, Et: sp.csr_matrix, name: str) -> tuple[np.ndarray, np.ndarray]:
    """ULTRA's weighted binary motif: the product of the incidences with each entity weighted by its inverse
    degree, 1/(number of relations it takes part in at that end), in every relation pair it links."""
    A = Eh if name[0] == "h" else Et
    B = Eh if name[2] == "h" else Et
    deg = np.asarray(A.sum(axis=1)).ravel()
    A = sp.diags(np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)) @ A
    return _pairs(A.T @ B)


def relation_sets(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Each entity's relations at the head end and at the tail end, as (entities, ceil(2|R| / 64)) bit words:
    the rows of the incidences E_h and E_t, packed."""
    words = (graph.n_rel2 + 63) // 64
    h, r, t = (np.ascontiguousarray(graph.edges[:, i]) for i in range(3))
    return _pack(h, r, graph.n_entities, words), _pack(t, r, graph.n_entities, words)


@njit(cache=True)
def _pack(ent, rel, n_ent, words):  # pragma: no cover - compiled
    out = np.zeros((n_ent, words), np.uint64)
    for i in range(len(ent)):
        out[ent[i], rel[i] >> 6] |= np.uint64(1) << np.uint64(rel[i] & 63)
    return out


# Index of a 64-bit word's lowest set bit by de Bruijn multiplication (numba has no count-trailing-zeros).
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.zeros(64, np.int64)
for _i in range(64):
    _DEBRUIJN_INDEX[((1 << _i) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58] = _i


@njit(cache=True)
def _bits(words, row, out):  # pragma: no cover - compiled
    """The set bits of ``words[row]`` in increasing order into ``out``; returns how many."""
    n = 0
    for w in range(words.shape[1]):
        b = words[row, w]
        while b:
            low = b & (~b + np.uint64(1))
            out[n] = w * 64 + _DEBRUIJN_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]
            n += 1
            b ^= low
    return n


@njit(cache=True)
def _binary_support(A, B, n):  # pragma: no cover - compiled
    """Support of E_A^T E_B over the boolean semiring as one bitset row per relation, and its size: every
    entity adds its B set to the row of each relation in its A set."""
    acc = np.zeros((n, A.shape[1]), np.uint64)
    ra = np.empty(n, np.int64)
    for v in range(A.shape[0]):
        for i in range(_bits(A, v, ra)):
            for w in range(A.shape[1]):
                acc[ra[i], w] |= B[v, w]
    total = 0
    for r in range(n):
        for w in range(acc.shape[1]):
            b = acc[r, w]
            while b:
                b &= b - np.uint64(1)
                total += 1
    return acc, total


@njit(cache=True)
def _binary_pairs(A, B, n):  # pragma: no cover - compiled
    """The support's rows (r_a, r_b), in order."""
    acc, total = _binary_support(A, B, n)
    out = np.empty((total, 2), np.int64)
    rb = np.empty(n, np.int64)
    m = 0
    for r in range(n):
        for i in range(_bits(acc, r, rb)):
            out[m, 0] = r
            out[m, 1] = rb[i]
            m += 1
    return out


@njit(cache=True)
def _binary_count(A, B, n):  # pragma: no cover - compiled
    """How many rows ``_binary_pairs`` returns, without building them."""
    return _binary_support(A, B, n)[1]


@njit(cache=True)
def _path_count(x, r2, y, hmask, tmask, n, limit):  # pragma: no cover - compiled
    """How many rows the four ``_path_motifs`` arrays hold together, without storing them: the same walk,
    counting each r2's (r1, r3) bits; stops once past ``limit`` (the count is then only a lower bound)."""
    words = hmask.shape[1]
    acc = np.zeros((4, n, words), np.uint64)
    uh = np.zeros(words, np.uint64)
    ut = np.zeros(words, np.uint64)
    rel = np.empty(n, np.int64)
    total = 0
    i = 0
    while i < len(x):
        r = r2[i]
        while i < len(x) and r2[i] == r:
            v = x[i]
            uh[:] = 0
            ut[:] = 0
            while i < len(x) and r2[i] == r and x[i] == v:
                for w in range(words):
                    uh[w] |= hmask[y[i], w]
                    ut[w] |= tmask[y[i], w]
                i += 1
            for a in range(_bits(tmask, v, rel)):
                for w in range(words):
                    acc[0, rel[a], w] |= uh[w]
                    acc[1, rel[a], w] |= ut[w]
            for a in range(_bits(hmask, v, rel)):
                for w in range(words):
                    acc[2, rel[a], w] |= ut[w]
                    acc[3, rel[a], w] |= uh[w]
        for j in range(4):
            for r1 in range(n):
                for w in range(words):
                    b = acc[j, r1, w]
                    while b:
                        b &= b - np.uint64(1)
                        total += 1
                    acc[j, r1, w] = 0
        if total > limit:
            return total
    return total


def _paths(graph: Graph, head_sets: np.ndarray, tail_sets: np.ndarray) -> dict[str, np.ndarray]:
    """The four 3-path motifs: (r1, r2, r3) for every middle edge r2(x, y), r1 meeting x at its PATH_ENDS[0]
    end and r3 meeting y at its PATH_ENDS[1] end.

    Each is the support of the contraction T[r1, r2, r3] = sum_(x, r2, y) E1[x, r1] E3[y, r3] of the
    incidences, walked by one compiled pass over the middle edges sorted by (relation, head) instead of being
    built as a tensor: per (r2, x) the union of the tails' relation sets, given to every r1 at x."""
    order = np.lexsort((graph.edges[:, 0], graph.edges[:, 1]))
    x, r2, y = (np.ascontiguousarray(graph.edges[order, i]) for i in range(3))
    return dict(zip(PATHS, _path_motifs(x, r2, y, head_sets, tail_sets, graph.n_rel2), strict=True))


@njit(cache=True)
def _path_motifs(x, r2, y, hmask, tmask, n):  # pragma: no cover - compiled
    """tfh, tft, hft, hfh as (m, 3) arrays of (r1, r2, r3) in lexicographic order; edges sorted by (r2, x).

    Per r2 the (r1, r3) bits are read out in (r1, r3) order, so the found triples come in (r2, r1, r3) order;
    a counting sort by r1 (stable) puts them in (r1, r2, r3) order."""
    words = hmask.shape[1]
    acc = np.zeros((4, n, words), np.uint64)
    found = np.empty((4, 4096, 3), np.int32)  # (r2, r1, r3) in the order found, grown by doubling
    counts = np.zeros(4, np.int64)
    per_r1 = np.zeros((4, n), np.int64)
    uh = np.zeros(words, np.uint64)
    ut = np.zeros(words, np.uint64)
    rel = np.empty(n, np.int64)
    i = 0
    while i < len(x):
        r = r2[i]
        while i < len(x) and r2[i] == r:
            v = x[i]
            uh[:] = 0
            ut[:] = 0
            while i < len(x) and r2[i] == r and x[i] == v:
                for w in range(words):
                    uh[w] |= hmask[y[i], w]
                    ut[w] |= tmask[y[i], w]
                i += 1
            for a in range(_bits(tmask, v, rel)):  # r1 meets x at its tail: tfh, tft
                for w in range(words):
                    acc[0, rel[a], w] |= uh[w]
                    acc[1, rel[a], w] |= ut[w]
            for a in range(_bits(hmask, v, rel)):  # r1 meets x at its head: hft, hfh
                for w in range(words):
                    acc[2, rel[a], w] |= ut[w]
                    acc[3, rel[a], w] |= uh[w]
        for j in range(4):  # read out this r2's (r1, r3) bits and clear them
            for r1 in range(n):
                m = _bits(acc[j], r1, rel)
                if counts[j] + m > found.shape[1]:
                    grown = np.empty((4, 2 * found.shape[1] + m, 3), np.int32)
                    grown[:, :found.shape[1]] = found
                    found = grown
                for c in range(m):
                    found[j, counts[j] + c, 0] = r
                    found[j, counts[j] + c, 1] = r1
                    found[j, counts[j] + c, 2] = rel[c]
                counts[j] += m
                per_r1[j, r1] += m
                acc[j, r1, :] = 0
    out = []
    for j in range(4):
        start = np.zeros(n, np.int64)
        for r1 in range(1, n):
            start[r1] = start[r1 - 1] + per_r1[j, r1 - 1]
        e = np.empty((counts[j], 3), np.int64)
        for m in range(counts[j]):
            r1 = found[j, m, 1]
            e[start[r1], 0] = r1
            e[start[r1], 1] = found[j, m, 0]
            e[start[r1], 2] = found[j, m, 2]
            start[r1] += 1
        out.append(e)
    return out


def star_size(graph: Graph, k: int) -> int:
    """Ordered k-tuples (with repetition) over the tail set of every distinct tail pattern: the work bound."""
    _, Et = incidence(graph)
    rows = _unique_rows(Et)
    return int(sum(len(r) ** k for r in rows))


def _unique_rows(M: sp.csr_matrix) -> list[np.ndarray]:
    seen = {tuple(M.indices[M.indptr[i]:M.indptr[i + 1]]) for i in range(M.shape[0])}
    return [np.array(s, dtype=np.int64) for s in sorted(seen) if s]


def _star(Et: sp.csr_matrix, k: int) -> np.ndarray:
    blocks = [np.stack(np.meshgrid(*([s] * k), indexing="ij"), axis=-1).reshape(-1, k) for s in _unique_rows(Et)]
    if not blocks:
        return np.zeros((0, k), dtype=np.int64)
    return np.unique(np.concatenate(blocks), axis=0).astype(np.int64)


MAX_CUBES = 4096  # above this many tail-set intersections, enumerate the tuples instead


def star_cubes(graph: Graph, k: int, max_cubes: int = MAX_CUBES) -> StarCubes | None:
    """The k-star lift as cubes (``StarCubes``), or None if the tail sets have more than ``max_cubes``
    distinct intersections.

    Why it is exact: a tuple t lies in W^k iff its support supp(t) is a subset of W. Let L be the family of
    nonempty intersections of the tail sets (closed under intersection) and choose coef from the largest W down
    so that sum_(W' in L, W' >= W) coef[W'] = 1 for every W in L. For a tuple whose support lies in some T_v,
    the members of L containing supp(t) are exactly those containing cl = the intersection of every T_v that
    contains supp(t), itself in L, so the coefficients sum to 1; for any other tuple no member of L contains
    its support and the sum is 0. Sets with coef 0 are dropped."""
    _, Et = incidence(graph)
    gens = sorted({tuple(r.tolist()) for r in _unique_rows(Et)})
    gen_bits = [sum(1 << r for r in g) for g in gens]
    closure, frontier = set(gen_bits), set(gen_bits)
    while frontier:  # every intersection of tail sets, by intersecting new members with the generators
        new = {w & g for w in frontier for g in gen_bits} - closure - {0}
        closure |= new
        frontier = new
        if len(closure) > max_cubes:
            return None
    sets = sorted((tuple(r for r in range(graph.n_rel2) if w >> r & 1) for w in closure),
                  key=lambda x: (-len(x), x))
    if not sets:
        return StarCubes(k, np.zeros((0, 2), np.int64), np.zeros(0, np.int64))
    rows = np.repeat(np.arange(len(sets)), [len(w) for w in sets])
    A = sp.csr_matrix((np.ones(len(rows)), (rows, np.concatenate(sets))), shape=(len(sets), graph.n_rel2))
    sizes = np.array([len(w) for w in sets], np.float64)
    contains = (A @ A.T).toarray() == sizes[None, :]  # contains[i, j]: sets[i] >= sets[j] (larger sets first)
    coef = np.zeros(len(sets), np.int64)
    for j in range(len(sets)):
        coef[j] = 1 - int(coef[:j][contains[:j, j]].sum())
    keep = np.flatnonzero(coef)
    members = np.array([(c, r) for c, i in enumerate(keep) for r in sets[i]], np.int64).reshape(-1, 2)
    return StarCubes(k, members, coef[keep])


def check_star_size(graph: Graph, family: str, max_hyperedges: int | None, *, cubes_ok: bool = False) -> None:
    """Refuse, before any work, a star lift that would enumerate more than ``max_hyperedges`` tuples; with
    ``cubes_ok`` (the model's lift) a star lift that cubes can hold enumerates nothing and is never refused."""
    fam, k = parse_family(family)
    if fam != "star" or max_hyperedges is None:
        return
    size = star_size(graph, k)
    if size > max_hyperedges and cubes_ok and star_cubes(graph, k) is not None:
        return
    if size > max_hyperedges:
        raise UsageError(f"--motifs {family}: the {k}-star lift would enumerate {size} hyperedges, over the limit "
                         f"of {max_hyperedges} (--max-hyperedges); pass --max-hyperedges {size} to build it anyway, "
                         "or use a smaller arity")


def enumerated_size(graph: Graph, family: str, limit: int) -> int:
    """Hyperedges of the binary and 3-path motifs of ``family`` (a star's are ``star_size``), counted without
    building them; past ``limit`` the count stops early and is only a lower bound. Their number grows as the
    square (binary) or cube (3-path) of the relations meeting at an entity: a hub with R relations in and out
    gives ~R^2 hyperedges per 3-path motif."""
    types = motif_types(family)
    if not types:
        return 0
    sets = dict(zip("ht", relation_sets(graph), strict=True))
    total = 0
    for name in types:
        if name in BINARY:
            total += int(_binary_count(sets[name[0]], sets[name[2]], graph.n_rel2))
    if total <= limit and PATHS[0] in types:
        order = np.lexsort((graph.edges[:, 0], graph.edges[:, 1]))
        x, r2, y = (np.ascontiguousarray(graph.edges[order, i]) for i in range(3))
        total += int(_path_count(x, r2, y, sets["h"], sets["t"], graph.n_rel2, limit - total))
    return total


def check_lift_size(graph: Graph, family: str, max_hyperedges: int | None, *, cubes_ok: bool = False) -> None:
    """Refuse, before building it, a lift that would enumerate more than ``max_hyperedges`` hyperedges: the
    star check (``check_star_size``), then the binary and 3-path motifs together."""
    if max_hyperedges is None:
        return
    check_star_size(graph, family, max_hyperedges, cubes_ok=cubes_ok)
    if enumerated_size(graph, family, max_hyperedges) > max_hyperedges:
        raise UsageError(f"--motifs {family}: the lift would enumerate more than {max_hyperedges} hyperedges "
                         f"(--max-hyperedges); pass a larger --max-hyperedges, or use a smaller family")


def lift(graph: Graph, family: str, *, max_hyperedges: int | None = 5_000_000, star_cubes_ok: bool = False) -> Lift:
    """LIFT_F(G) for a family name; a lift over ``max_hyperedges`` hyperedges is refused up front.

    ``star_cubes_ok``: hold a star lift as cubes (``StarCubes``, the same hyperedges without enumerating them;
    what the model needs) where the tail sets have few enough intersections; else as enumerated tuples."""
    types = motif_types(family)
    out = Lift(graph.n_rel2)
    check_lift_size(graph, family, max_hyperedges, cubes_ok=star_cubes_ok)
    if family == "ultra":  # weighted: the products of the sparse incidences
        for name in types:
            out.edges[name], out.weights[name] = _binary(*incidence(graph), name)
        return out
    sets = dict(zip("ht", relation_sets(graph), strict=True))
    paths = _paths(graph, sets["h"], sets["t"]) if PATHS[0] in types else {}
    for name in types:
        if name in BINARY:
            out.edges[name] = _binary_pairs(sets[name[0]], sets[name[2]], graph.n_rel2)
        elif name in PATHS:
            out.edges[name] = paths[name]
        else:
            k = int(name[4:])
            cubes = star_cubes(graph, k) if star_cubes_ok else None
            if cubes is not None:
                out.cubes[name] = cubes
                out.edges[name] = np.zeros((0, k), np.int64)
            else:
                out.edges[name] = _star(incidence(graph)[1], k)
        out.weights[name] = np.ones(len(out.edges[name]))
    return out


# --------------------------------------------------------------------------------- reference
def lift_bruteforce(graph: Graph, family: str) -> Lift:
    """Homomorphism enumeration edge by edge with Python sets (no matrix algebra): the reference."""
    heads: dict[int, set[int]] = {}
    tails: dict[int, set[int]] = {}
    for h, r, t in graph.edges.tolist():
        heads.setdefault(h, set()).add(r)
        tails.setdefault(t, set()).add(r)
    at = {"h": heads, "t": tails}
    out = Lift(graph.n_rel2)
    for name in motif_types(family):
        found: set[tuple[int, ...]] = set()
        if name in BINARY:
            for v in range(graph.n_entities):
                found.update(itertools.product(at[name[0]].get(v, ()), at[name[2]].get(v, ())))
        elif name in PATHS:
            e1, e3 = PATH_ENDS[name]
            for x, r2, y in graph.edges.tolist():
                found.update((r1, r2, r3) for r1 in at[e1].get(x, ()) for r3 in at[e3].get(y, ()))
        else:
            k = int(name[4:])
            for s in tails.values():
                found.update(itertools.product(sorted(s), repeat=k))
        arr = np.array(sorted(found), dtype=np.int64).reshape(-1, arity(name))
        out.edges[name] = arr
        out.weights[name] = np.ones(len(arr))
    return out


def hyperedge_rows(lf: Lift, relation_names: list[str]) -> list[dict[str, object]]:
    """``hyperedges.csv`` rows: motif, arity, the relation names at each position (inverses as ``name^-1``)."""
    names = relation_names + [f"{n}^-1" for n in relation_names]
    width = max((e.shape[1] for e in lf.edges.values()), default=2)
    rows = []
    for motif, edges in lf.edges.items():
        for e, w in zip(edges.tolist(), lf.weights[motif].tolist(), strict=True):
            row: dict[str, object] = {"motif": motif}
            for i in range(width):
                row[f"r{i}"] = names[e[i]] if i < len(e) else ""
            row["weight"] = round(w, 10)
            rows.append(row)
    return rows
