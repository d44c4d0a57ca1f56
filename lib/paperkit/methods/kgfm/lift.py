"""LIFT_F (MOTIF, Sec. 4 and App. B): the relational hypergraph whose nodes are the relations of G (inverses
included) and whose hyperedges are the homomorphic images of each motif of the family F.

Binary motifs come from sparse incidence products, 3-path motifs from a sparse (head, relation, tail)
contraction, k-stars from the tail set of every entity. Homomorphism semantics: relations (and entities)
may repeat. ``lift_bruteforce`` enumerates homomorphisms edge by edge: the reference the tests and the
benchmark compare with.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

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
    """Hyperedges per motif type: ``edges[name]`` is (m, arity) int64 relation ids, ``weights[name]`` (m,)."""

    n_rel2: int
    edges: dict[str, np.ndarray] = field(default_factory=dict)
    weights: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def types(self) -> list[str]:
        return list(self.edges)

    def counts(self) -> dict[str, int]:
        return {k: int(len(v)) for k, v in self.edges.items()}


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


def _binary(Eh: sp.csr_matrix, Et: sp.csr_matrix, name: str, ultra: bool) -> tuple[np.ndarray, np.ndarray]:
    A = Eh if name[0] == "h" else Et
    B = Eh if name[2] == "h" else Et
    if ultra:
        # ULTRA's inverse entity degree: each entity contributes 1/(number of relations it takes part in
        # at that end) to every relation pair it links.
        deg = np.asarray(A.sum(axis=1)).ravel()
        A = sp.diags(np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)) @ A
    return _pairs(A.T @ B)


def _path(graph: Graph, Eh: sp.csr_matrix, Et: sp.csr_matrix, name: str) -> np.ndarray:
    """(r1, r2, r3) for every middle edge r2(x, y): r1 meets x at its PATH_ENDS[0] end, r3 meets y."""
    end1, end3 = PATH_ENDS[name]
    x, r2, y = graph.edges[:, 0], graph.edges[:, 1], graph.edges[:, 2]
    n = graph.n_rel2
    L = sp.coo_matrix((Et if end1 == "t" else Eh)[x])  # edge -> r1
    # Fold the middle relation into the column: (edge, r1 * n + r2), then contract the edge with r3.
    L = sp.csr_matrix((L.data, (L.row, L.col * n + r2[L.row])), shape=(len(x), n * n))
    T = sp.coo_matrix(L.T @ (Et if end3 == "t" else Eh)[y])
    out = np.stack([T.row // n, T.row % n, T.col], axis=1).astype(np.int64)
    return out[np.lexsort(out.T[::-1])]


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


def lift(graph: Graph, family: str, *, max_hyperedges: int | None = 5_000_000) -> Lift:
    """LIFT_F(G) for a family name; a star lift over ``max_hyperedges`` tuples is refused up front."""
    types = motif_types(family)
    out = Lift(graph.n_rel2)
    Eh, Et = incidence(graph)
    for name in types:
        if name in BINARY:
            e, w = _binary(Eh, Et, name, ultra=family == "ultra")
        elif name in PATHS:
            e = _path(graph, Eh, Et, name)
            w = np.ones(len(e))
        else:
            k = int(name[4:])
            if max_hyperedges is not None:
                size = star_size(graph, k)
                if size > max_hyperedges:
                    raise UsageError(f"--motifs {family}: the {k}-star lift enumerates {size:,} hyperedges, over "
                                     f"the limit of {max_hyperedges:,}; use a smaller arity or raise --max-hyperedges")
            e = _star(Et, k)
            w = np.ones(len(e))
        out.edges[name] = e
        out.weights[name] = w if family == "ultra" else np.ones(len(e))
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
