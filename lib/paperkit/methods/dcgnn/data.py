"""Graph datasets for DC-GNN (Azzolin et al., ICML 2025, Sec. 6 and App. D): the NPZ format, its checks,
seeded numpy generators for Red-Blue Nodes, TopoFeature and a GOOD-Motif-like set (own Barabási–Albert
and motif attachment, edge ground truth included), and TU-format folders read offline through PyG.

NPZ keys: ``x`` (N, F) float node features, ``edge_index`` (2, E) int global node ids (both directions
of each undirected edge), ``graph_ptr`` (G + 1,) int node offsets (0, …, N), ``y`` (G,) int labels,
optional ``edge_gt`` (E,) 0/1 explanation ground truth, ``split`` (G,) 0 train / 1 val / 2 test /
3 in-distribution test (optional),
``feature_names`` and ``class_names`` (strings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from paperkit.core import io
from paperkit.core.errors import InputError, UsageError

SYNTHETIC = ("redblue", "topofeature", "motif")
MOTIFS = ("house", "cycle", "crane")
BASES = ("wheel", "tree", "ladder", "star", "path")
REQUIRED = ("x", "edge_index", "graph_ptr", "y")
MAX_CLASSES = 1000   # the model's widths grow with the class count (the LEN combiner as its square)


@dataclass
class GraphSet:
    x: np.ndarray                 # (N, F) float32
    edge_index: np.ndarray        # (2, E) int64, global node ids
    graph_ptr: np.ndarray         # (G + 1,) int64
    y: np.ndarray                 # (G,) int64
    edge_gt: np.ndarray | None = None   # (E,) uint8
    split: np.ndarray | None = None     # (G,) int8
    feature_names: list[str] = field(default_factory=list)
    class_names: list[str] = field(default_factory=list)

    @property
    def n_graphs(self) -> int:
        return len(self.y)

    @property
    def n_classes(self) -> int:
        return len(self.class_names)

    def edge_graph(self) -> np.ndarray:
        """The graph each edge belongs to."""
        return np.searchsorted(self.graph_ptr, self.edge_index[0], side="right") - 1

    def edge_ptr(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(np.bincount(self.edge_graph(), minlength=self.n_graphs))])

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"x": self.x, "edge_index": self.edge_index, "graph_ptr": self.graph_ptr, "y": self.y,
               "feature_names": np.array(self.feature_names), "class_names": np.array(self.class_names)}
        if self.edge_gt is not None:
            out["edge_gt"] = self.edge_gt
        if self.split is not None:
            out["split"] = self.split
        return out


# ------------------------------------------------------------------------------------------ checks
def _int_array(a: np.ndarray, name: str, src: str) -> np.ndarray:
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            raise InputError(f"{src}: '{name}' holds non-integer values; expected integers")
    elif a.dtype.kind not in "iub":
        raise InputError(f"{src}: '{name}' has dtype {a.dtype}; expected integers")
    return a.astype(np.int64)


def check_graphset(arrs: dict[str, np.ndarray], src: str) -> GraphSet:
    """Validate the NPZ arrays and build a GraphSet; every failure names the key and the value."""
    missing = [k for k in REQUIRED if k not in arrs]
    if missing:
        raise InputError(f"{src}: missing key '{missing[0]}'; expected keys {', '.join(REQUIRED)}")
    x = np.asarray(arrs["x"])
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.dtype.kind not in "fiub":
        raise InputError(f"{src}: 'x' has shape {x.shape} and dtype {x.dtype}; expected a 2-D numeric array")
    x = x.astype(np.float32)
    if not np.all(np.isfinite(x)):
        bad = np.argwhere(~np.isfinite(x))[0]
        raise InputError(f"{src}: 'x' has NaN/inf values (first at node {bad[0]}, feature {bad[1]})")
    ptr = _int_array(np.asarray(arrs["graph_ptr"]).ravel(), "graph_ptr", src)
    n = x.shape[0]
    if len(ptr) < 2 or ptr[0] != 0 or ptr[-1] != n or np.any(np.diff(ptr) < 1):
        raise InputError(f"{src}: 'graph_ptr' must rise strictly from 0 to the node count {n} "
                         f"(got {ptr[:3].tolist()}…{ptr[-1:].tolist()}, length {len(ptr)})")
    y = _int_array(np.asarray(arrs["y"]).ravel(), "y", src)
    if len(y) != len(ptr) - 1:
        raise InputError(f"{src}: 'y' has {len(y)} labels but 'graph_ptr' describes {len(ptr) - 1} graphs")
    if y.min() < 0:
        raise InputError(f"{src}: 'y' has negative label {int(y.min())}; expected 0..C-1")
    n_classes = int(y.max()) + 1
    declared = int(np.size(arrs.get("class_names", [])))
    if n_classes > MAX_CLASSES or n_classes > max(len(y), declared):
        # the class count is max(y) + 1 and sizes names, metrics and the model: a stray huge label must not
        raise InputError(f"{src}: 'y' holds label {n_classes - 1}, which makes {n_classes} classes for {len(y)} "
                         f"graphs; expected labels 0..C-1 with C at most the number of graphs (or of "
                         f"'class_names') and at most {MAX_CLASSES}")
    if len(np.unique(y)) < 2:
        raise InputError(f"{src}: 'y' has a single class ({int(y[0])}); expected at least two")
    ei = np.asarray(arrs["edge_index"])
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise InputError(f"{src}: 'edge_index' has shape {ei.shape}; expected (2, E)")
    ei = _int_array(ei, "edge_index", src)
    if ei.size and (ei.min() < 0 or ei.max() >= n):
        raise InputError(f"{src}: 'edge_index' holds node id {int(ei.min() if ei.min() < 0 else ei.max())} "
                         f"outside 0..{n - 1}")
    g_src = np.searchsorted(ptr, ei[0], side="right") - 1
    g_dst = np.searchsorted(ptr, ei[1], side="right") - 1
    if np.any(g_src != g_dst):
        e = int(np.argmax(g_src != g_dst))
        raise InputError(f"{src}: 'edge_index' edge {e} joins graphs {g_src[e]} and {g_dst[e]}")
    if np.any(np.diff(g_src) < 0):
        order = np.argsort(g_src, kind="stable")
        ei, g_src = ei[:, order], g_src[order]
    else:
        order = None
    gs = GraphSet(x=x, edge_index=ei, graph_ptr=ptr, y=y)
    if "edge_gt" in arrs:
        gt = np.asarray(arrs["edge_gt"]).ravel()
        if len(gt) != ei.shape[1]:
            raise InputError(f"{src}: 'edge_gt' has length {len(gt)}; expected one value per edge ({ei.shape[1]})")
        if not np.all(np.isin(gt, (0, 1))):
            raise InputError(f"{src}: 'edge_gt' must hold 0/1 values")
        gs.edge_gt = gt.astype(np.uint8) if order is None else gt.astype(np.uint8)[order]
    if "split" in arrs:
        sp = _int_array(np.asarray(arrs["split"]).ravel(), "split", src)
        if len(sp) != len(y) or not np.all(np.isin(sp, (0, 1, 2, 3))):
            raise InputError(f"{src}: 'split' must hold one value in 0/1/2/3 per graph ({len(y)})")
        gs.split = sp.astype(np.int8)
    names = [str(s) for s in arrs.get("feature_names", [])]
    gs.feature_names = names if len(names) == x.shape[1] else [f"f{i}" for i in range(x.shape[1])]
    cls = [str(s) for s in arrs.get("class_names", [])]
    gs.class_names = cls if len(cls) == n_classes else [str(c) for c in range(n_classes)]
    return gs


def read_npz(path: str | Path) -> GraphSet:
    arrs = io.read_arrays(path)
    return check_graphset(arrs, io.display_name(path))


def write_npz(path: str | Path, gs: GraphSet) -> None:
    io.write_arrays(path, gs.arrays())


def read_tu(folder: str | Path) -> GraphSet:
    """A TU-format folder (``<root>/<NAME>/raw/<NAME>_A.txt`` …), read from its raw text files only.

    PyG's own parser gives the features (node attributes, then one-hot node labels), labels and edges
    TUDataset would. TUDataset itself is not used: it caches into ``<NAME>/processed/`` (writing into the
    input folder, then reading a stale cache after the raw files change) and loads that cache with
    ``torch.load(weights_only=False)`` when a weights-only load fails, so a planted file would run code.
    """
    folder = Path(folder)
    name = folder.name
    raw = folder / "raw"
    needed = [raw / f"{name}_{s}.txt" for s in ("A", "graph_indicator", "graph_labels")]
    missing = [p for p in needed if not p.is_file()]
    if missing:
        raise InputError(f"{folder}: TU raw file {missing[0]} is missing (no download is attempted)")
    import torch
    from torch_geometric.io.tu import read_file, read_tu_data

    try:
        data, slices, _ = read_tu_data(str(raw), name)
        graph_of_node = read_file(str(raw), name, "graph_indicator", torch.long) - 1
    except Exception as e:  # malformed text files surface here
        raise InputError(f"{folder}: cannot read the TU files: {str(e).splitlines()[0]}") from None
    counts = torch.bincount(graph_of_node).numpy()
    ptr = np.concatenate([[0], np.cumsum(counts)])
    eptr = slices["edge_index"].numpy()
    n = int(ptr[-1])
    x = data.x.numpy() if data.x is not None else np.ones((n, 1), np.float32)
    # read_tu_data numbers each graph's edges from its own first node; paperkit's arrays are global
    graph_of_edge = np.repeat(np.arange(len(eptr) - 1), np.diff(eptr))
    edge_index = data.edge_index.numpy() + ptr[graph_of_edge]
    y = data.y.numpy().reshape(-1)
    return check_graphset({"x": x, "edge_index": edge_index, "graph_ptr": ptr, "y": y - y.min()}, str(folder))


def load_data(spec: str | Path) -> GraphSet:
    p = Path(spec)
    if p.is_dir():
        return read_tu(p)
    io.require_file(p)
    return read_npz(p)


# -------------------------------------------------------------------------------------- generators
def ba_edges(n: int, m: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Barabási–Albert: a clique on m + 1 nodes, then each new node links to m distinct nodes drawn ∝ degree."""
    edges = [(i, j) for i in range(m + 1) for j in range(i + 1, m + 1)]
    ends = [v for e in edges for v in e]   # each node listed once per incident edge
    for v in range(m + 1, n):
        targets: set[int] = set()
        while len(targets) < m:
            targets.add(ends[rng.integers(len(ends))])
        for t in sorted(targets):
            edges.append((t, v))
            ends += [t, v]
    return edges


# GOOD-Motif's motifs (its synthetic_structsim): every one has 5 nodes and is attached through node 0.
MOTIF_EDGES = {
    "house": (5, [(0, 1), (0, 4), (1, 2), (2, 3), (3, 4), (1, 4)]),    # square 1-2-3-4, roof 0 on 1 and 4
    "cycle": (5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]),            # GOOD's "dircycle": a 5-cycle
    "crane": (5, [(0, 1), (0, 3), (1, 2), (2, 3), (3, 4), (1, 4)]),    # square 1-2-3-4, 0 on 1 and 3: K(2,3)
}


def base_edges(kind: str, width: int, rng: np.random.Generator) -> tuple[int, list[tuple[int, int]]]:
    """GOOD-Motif bases of a given width (and ER for the OOD variant); returns (node count, edges). As
    GOOD: a wheel of ``width`` nodes, a balanced binary tree of height max(1, ⌊log₂ width⌋ − 1), a ladder
    of ``width`` rungs (2·width nodes), a star with ``width`` leaves, a path of ``width`` nodes."""
    n = width
    if kind == "wheel":
        return n, [(0, i) for i in range(1, n)] + [(i, i % (n - 1) + 1) for i in range(1, n)]
    if kind == "tree":
        n = 2 ** (max(1, int(np.log2(width)) - 1) + 1) - 1
        return n, [((i - 1) // 2, i) for i in range(1, n)]
    if kind == "ladder":
        return 2 * n, [(i, i + 1) for i in range(n - 1)] + [(n + i, n + i + 1) for i in range(n - 1)] + \
            [(i, n + i) for i in range(n)]
    if kind == "star":
        return n + 1, [(0, i) for i in range(1, n + 1)]
    if kind == "path":
        return n, [(i, i + 1) for i in range(n - 1)]
    if kind == "er":   # connected: a random spanning tree plus G(n, 2/n) edges
        edges = {(int(rng.integers(i)), i) for i in range(1, n)}
        iu, ju = np.triu_indices(n, 1)
        keep = rng.random(len(iu)) < 2.0 / n
        edges |= {(int(a), int(b)) for a, b in zip(iu[keep], ju[keep], strict=True)}
        return n, sorted(edges)
    raise UsageError(f"unknown base '{kind}'")


def attach(n_base: int, edges: list, motif: str, rng: np.random.Generator) -> tuple[int, list, list]:
    """Append a motif to a base graph, its node 0 bridged to a random base node (GOOD's plug-in); returns
    (nodes, edges, gt flags)."""
    k, medges = MOTIF_EDGES[motif]
    bridge = (int(rng.integers(n_base)), n_base)
    all_edges = list(edges) + [bridge] + [(n_base + a, n_base + b) for a, b in medges]
    gt = [0] * (len(edges) + 1) + [1] * len(medges)
    return n_base + k, all_edges, gt


def add_noise_edges(n: int, n_base: int, edges: list, gt: list, frac: float,
                    rng: np.random.Generator) -> tuple[list, list]:
    """GOOD's ``perturb``: ⌊frac·E⌋ draws of a new node pair, kept when one end is a base node (so the
    motif stays intact and ``edge_gt`` exact)."""
    present = {(min(a, b), max(a, b)) for a, b in edges}
    edges, gt = list(edges), list(gt)
    for _ in range(int(frac * len(present))):
        while True:
            u, v = (int(a) for a in rng.integers(n, size=2))
            if u != v and (min(u, v), max(u, v)) not in present:
                break
        if min(u, v) < n_base:
            present.add((min(u, v), max(u, v)))
            edges.append((u, v))
            gt.append(0)
    return edges, gt


def _assemble(graphs: list[tuple[np.ndarray, list, list]], y: list[int], feature_names: list[str],
              class_names: list[str], split: np.ndarray | None, with_gt: bool) -> GraphSet:
    """Concatenate per-graph (x, undirected edges, gt flags) into a GraphSet with both edge directions."""
    xs, eis, gts, ptr = [], [], [], [0]
    for x, edges, gt in graphs:
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2).T
        eis.append(np.concatenate([e, e[::-1]], axis=1) + ptr[-1])
        g = np.asarray(gt, dtype=np.uint8)
        gts.append(np.concatenate([g, g]))
        xs.append(x)
        ptr.append(ptr[-1] + len(x))
    return GraphSet(x=np.concatenate(xs).astype(np.float32), edge_index=np.concatenate(eis, axis=1),
                    graph_ptr=np.array(ptr, dtype=np.int64), y=np.array(y, dtype=np.int64),
                    edge_gt=np.concatenate(gts) if with_gt else None, split=split,
                    feature_names=feature_names, class_names=class_names)


def random_split(n: int, rng: np.random.Generator, frac: tuple[float, float] = (0.8, 0.1)) -> np.ndarray:
    split = np.full(n, 2, dtype=np.int8)
    perm = rng.permutation(n)
    n_tr, n_va = int(frac[0] * n), int(frac[1] * n)
    split[perm[:n_tr]] = 0
    split[perm[n_tr:n_tr + n_va]] = 1
    return split


def make_redblue(n_graphs: int, rng: np.random.Generator, sizes: tuple[int, int] = (10, 100)) -> GraphSet:
    """Red-Blue Nodes: BA(m=2) graphs, each node red or blue; label 1 iff red nodes outnumber blue ones."""
    graphs, y = [], []
    for _ in range(n_graphs):
        n = int(rng.integers(sizes[0], sizes[1] + 1)) | 1      # odd size: no ties
        red = rng.random(n) < rng.uniform(0.2, 0.8)
        x = np.stack([red, ~red], axis=1).astype(np.float32)
        graphs.append((x, ba_edges(n, 2, rng), []))
        y.append(int(red.sum() > n - red.sum()))
    return _assemble(graphs, y, ["red", "blue"], ["blue_majority", "red_majority"],
                     random_split(n_graphs, rng), with_gt=False)


def make_topofeature(n_graphs: int, rng: np.random.Generator, sizes: tuple[int, int] = (8, 80)) -> GraphSet:
    """TopoFeature as the official generator: label 1 iff ≥ 2 red nodes AND a 5-cycle is attached. Balanced
    and built so that neither ingredient alone decides: half the graphs are positive (cycle + 2–4 red nodes),
    a quarter are negative with 2–4 red nodes and no cycle, a quarter negative with the cycle and 0–1 red
    nodes. BA(m = 2) bases of 8–80 nodes (5 fewer when the cycle is attached, so the node count does not
    give it away); red nodes are base nodes; edge_gt marks the cycle."""
    graphs, y = [], []
    for _ in range(n_graphs):
        label = int(rng.integers(2))
        has_cycle = bool(label or rng.integers(2))
        n_red = int(rng.integers(2, 5)) if label or not has_cycle else int(rng.integers(0, 2))
        n_base = max(int(rng.integers(sizes[0], sizes[1] + 1)) - 5 * has_cycle, n_red, 3)
        red = np.zeros(n_base, dtype=bool)
        red[rng.choice(n_base, size=n_red, replace=False)] = True
        n, edges = n_base, ba_edges(n_base, 2, rng)
        gt = [0] * len(edges)
        if has_cycle:
            n, edges, gt = attach(n_base, edges, "cycle", rng)
            red = np.concatenate([red, np.zeros(n - n_base, dtype=bool)])
        x = np.stack([red, ~red], axis=1).astype(np.float32)
        graphs.append((x, edges, gt))
        y.append(label)
    return _assemble(graphs, y, ["red", "other"], ["negative", "positive"], random_split(n_graphs, rng),
                     with_gt=True)


def make_motif(n_graphs: int, rng: np.random.Generator, *, ood: str | None = None, noise: float = 0.05,
               id_test: float = 1 / 6) -> GraphSet:
    """GOOD-Motif-like (basis, covariate shift): a base (wheel/tree/ladder/star/path, width 10 ± 5 as GOOD)
    with a house, 5-cycle or crane motif; label = the motif; ``noise``·E random edges touching the base
    (GOOD's perturb). Split on the base as GOOD: wheel/tree/ladder graphs train (0) or, a fraction
    ``id_test`` of them (10% of all graphs, as GOOD), in-distribution test (3); star bases are the OOD
    validation (1), path bases the OOD test (2). ``ood``: 'large' draws widths 150–250, 'er' uses Erdős–Rényi bases. Constant features.
    GOOD's 10% label noise is left out (accuracies stay readable against 100%)."""
    if ood not in (None, "large", "er"):
        raise UsageError(f"unknown OOD variant '{ood}'; expected large or er")
    lo, hi = (150, 250) if ood == "large" else (5, 15)
    graphs, y, split = [], [], []
    for i in range(n_graphs):
        b = i % len(BASES)
        label = int(rng.integers(len(MOTIFS)))
        n_base, edges = base_edges("er" if ood == "er" else BASES[b], int(rng.integers(lo, hi + 1)), rng)
        n, edges, gt = attach(n_base, edges, MOTIFS[label], rng)
        edges, gt = add_noise_edges(n, n_base, edges, gt, noise, rng)
        graphs.append((np.ones((n, 1), np.float32), edges, gt))
        y.append(label)
        split.append({3: 1, 4: 2}.get(b, 3 if rng.random() < id_test else 0))
    order = rng.permutation(n_graphs)
    graphs, y = [graphs[j] for j in order], [y[j] for j in order]
    return _assemble(graphs, y, ["one"], list(MOTIFS), np.array(split, dtype=np.int8)[order], with_gt=True)


def generate(kind: str, n_graphs: int, seed: int, *, ood: str | None = None) -> GraphSet:
    rng = np.random.default_rng(seed)
    if kind == "redblue":
        return make_redblue(n_graphs, rng)
    if kind == "topofeature":
        return make_topofeature(n_graphs, rng)
    if kind == "motif":
        return make_motif(n_graphs, rng, ood=ood)
    raise UsageError(f"unknown synthetic dataset '{kind}'; expected one of {', '.join(SYNTHETIC)}")
