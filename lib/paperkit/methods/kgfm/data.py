"""Knowledge-graph data (MOTIF, Sec. 3 and App. E): TSV triples, vocabularies, inverse relations with id
r + |R| (ULTRA issue #19), filtered ranking sets, and the message graph with the query edge removed."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError


@dataclass
class Vocab:
    entities: list[str]
    relations: list[str]

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def n_relations(self) -> int:
        return len(self.relations)


def read_triples(path: str | os.PathLike) -> list[tuple[str, str, str]]:
    """Rows ``head<TAB>relation<TAB>tail``; blank lines and ``#`` comments are skipped."""
    io.require_file(path)
    name = io.display_name(path)
    rows: list[tuple[str, str, str]] = []
    try:
        with io.text_reader(path) as f:
            for i, line in enumerate(f, 1):
                line = line.rstrip("\r\n")
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.split("\t")
                if len(parts) != 3 or any(not p.strip() for p in parts):
                    raise InputError(f"{name}: line {i} has {len(parts)} tab-separated field(s); expected three "
                                     "(head, relation, tail)")
                rows.append((parts[0].strip(), parts[1].strip(), parts[2].strip()))
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not rows:
        raise InputError(f"{name}: no triples (an empty graph)")
    return rows


def write_triples(path: str | os.PathLike, rows: list[tuple[str, str, str]]) -> None:
    io.write_text(path, "".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows))


def build_vocab(*groups: list[tuple[str, str, str]]) -> Vocab:
    """Entities and relations in order of first appearance (deterministic ids)."""
    ents: dict[str, None] = {}
    rels: dict[str, None] = {}
    for rows in groups:
        for h, r, t in rows:
            ents.setdefault(h)
            ents.setdefault(t)
            rels.setdefault(r)
    return Vocab(list(ents), list(rels))


def encode(rows: list[tuple[str, str, str]], vocab: Vocab, source: str = "triples") -> np.ndarray:
    """(n, 3) int64 array of (head, relation, tail) ids; unknown names are an InputError naming the row."""
    e = {n: i for i, n in enumerate(vocab.entities)}
    r = {n: i for i, n in enumerate(vocab.relations)}
    out = np.empty((len(rows), 3), dtype=np.int64)
    for i, (h, rel, t) in enumerate(rows):
        if h not in e or t not in e:
            raise InputError(f"{source}: row {i} names entity '{h if h not in e else t}', absent from the graph")
        if rel not in r:
            raise InputError(f"{source}: row {i} names relation '{rel}', absent from the graph")
        out[i] = (e[h], r[rel], e[t])
    return out


def add_inverses(triples: np.ndarray, n_relations: int) -> np.ndarray:
    """Triples followed by their inverses r^-1(t, h), the inverse of r having id r + |R|."""
    inv = np.stack([triples[:, 2], triples[:, 1] + n_relations, triples[:, 0]], axis=1)
    return np.concatenate([triples, inv]).astype(np.int64)


def tail_queries(triples: np.ndarray, n_relations: int) -> np.ndarray:
    """Tail and head prediction as tail queries: (h, r, ?) and (t, r + |R|, ?) (heads through inverses)."""
    return add_inverses(triples, n_relations)


def filter_sets(*splits: np.ndarray, n_relations: int) -> dict[tuple[int, int], np.ndarray]:
    """(head, relation incl. inverses) -> every known tail, over all splits: the filtered setting."""
    allq = np.concatenate([tail_queries(s, n_relations) for s in splits])
    order = np.lexsort((allq[:, 2], allq[:, 1], allq[:, 0]))
    allq = allq[order]
    keys, starts = np.unique(allq[:, :2], axis=0, return_index=True)
    bounds = list(starts[1:]) + [len(allq)]
    return {(int(k[0]), int(k[1])): np.unique(allq[s:e, 2]) for k, s, e in zip(keys, starts, bounds, strict=True)}


@dataclass
class Graph:
    """A message graph: edges (head, relation, tail) including inverses, over 2|R| relation ids."""

    edges: np.ndarray  # (E, 3) int64
    n_entities: int
    n_relations: int  # |R| before inverses

    @classmethod
    def from_triples(cls, triples: np.ndarray, n_entities: int, n_relations: int) -> Graph:
        return cls(add_inverses(triples, n_relations), n_entities, n_relations)

    @property
    def n_rel2(self) -> int:
        return 2 * self.n_relations

    def relation_components(self) -> np.ndarray:
        """(2|R|,) id of the connected component of G each relation's edges lie in (a relation that spans two
        components gets the id of the one they are joined into): the parts of a graph of several graphs."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        E, n = len(self.edges), self.n_entities
        nodes = n + self.n_rel2  # entities, then relations; each edge joins its head, tail and relation
        rows = np.concatenate([self.edges[:, 0], self.edges[:, 2]])
        cols = np.concatenate([n + self.edges[:, 1]] * 2)
        adj = coo_matrix((np.ones(2 * E), (rows, cols)), shape=(nodes, nodes))
        return connected_components(adj, directed=False)[1][n:].astype(np.int64)

    def edge_index(self) -> dict[tuple[int, int, int], int]:
        return {(int(h), int(r), int(t)): i for i, (h, r, t) in enumerate(self.edges)}

    def query_edges(self, queries: np.ndarray, lookup: dict[tuple[int, int, int], int]) -> np.ndarray:
        """(B, 2) edge ids of each query edge and its inverse in this graph, -1 where absent: the edges a
        training query must not see (otherwise the model learns the shortcut of ULTRA issue #19)."""
        out = np.full((len(queries), 2), -1, dtype=np.int64)
        R = self.n_relations
        for i, (h, r, t) in enumerate(queries):
            inv = r + R if r < R else r - R
            out[i, 0] = lookup.get((int(h), int(r), int(t)), -1)
            out[i, 1] = lookup.get((int(t), int(inv), int(h)), -1)
        return out


def check_conditionable(queries: np.ndarray, graph: Graph, vocab: Vocab, source: str) -> None:
    """A relation-inductive model conditions on q through q's edges: refuse queries of relations absent
    from the inference graph."""
    present = np.zeros(graph.n_relations, dtype=bool)
    present[graph.edges[graph.edges[:, 1] < graph.n_relations, 1]] = True
    bad = np.flatnonzero(~present[queries[:, 1]])
    if len(bad):
        rel = vocab.relations[int(queries[bad[0], 1])]
        raise InputError(f"{source}: row {int(bad[0])} asks about relation '{rel}', which has no edges in the "
                         f"inference graph; the model cannot condition on it ({len(bad)} such row(s))")
