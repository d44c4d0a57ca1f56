"""Generators: labels recomputed independently from each graph (networkx isomorphism for the motifs),
BA structure, the NPZ round trip and the NPZ checks."""

import networkx as nx
import numpy as np
import pytest

from paperkit.core.errors import InputError
from paperkit.methods.dcgnn.data import check_graphset, generate, make_motif, read_npz, write_npz


def graphs(gs):
    """(x, undirected networkx graph, gt subgraph) per graph, rebuilt from the flat arrays."""
    eg = gs.edge_graph()
    for g in range(gs.n_graphs):
        a, b = gs.graph_ptr[g], gs.graph_ptr[g + 1]
        sel = eg == g
        e = gs.edge_index[:, sel] - a
        G = nx.Graph()
        G.add_nodes_from(range(b - a))
        G.add_edges_from(e.T.tolist())
        gt = nx.Graph()
        if gs.edge_gt is not None:
            gt.add_edges_from(e[:, gs.edge_gt[sel] == 1].T.tolist())
        yield gs.x[a:b], G, gt, e


def test_redblue_labels_and_ba_structure():
    gs = generate("redblue", 60, seed=3)
    for g, (x, G, _, e) in enumerate(graphs(gs)):
        n = len(x)
        assert gs.y[g] == int(x[:, 0].sum() > x[:, 1].sum())
        assert set(np.unique(x.sum(1))) == {1.0}                # one-hot colour
        assert nx.is_connected(G) and nx.number_of_selfloops(G) == 0
        assert G.number_of_edges() == 3 + 2 * (n - 3)          # BA(m=2) from a triangle
        assert e.shape[1] == 2 * G.number_of_edges()            # both directions, no duplicates
        assert 10 <= n <= 101
    assert 0.3 < gs.y.mean() < 0.7


def test_topofeature_labels_from_reds_and_cycle():
    """Label recomputed from the graph; as the official set, no graph lacks both ingredients (so neither the
    count rule nor the cycle alone beats 75%), red nodes are never cycle nodes, classes are balanced."""
    gs = generate("topofeature", 200, seed=1)
    for g, (x, G, gt, _) in enumerate(graphs(gs)):
        has_cycle = gt.number_of_edges() > 0
        if has_cycle:
            assert nx.is_isomorphic(gt, nx.cycle_graph(5))
            assert not x[list(gt.nodes), 0].any()
        reds = int(x[:, 0].sum())
        assert 0 <= reds <= 4 and (has_cycle or reds >= 2)
        assert gs.y[g] == int(reds >= 2 and has_cycle)
        assert nx.is_connected(G) and 8 <= len(x) <= 80
    assert 0.4 < gs.y.mean() < 0.6


CRANE = nx.complete_bipartite_graph(2, 3)          # GOOD-Motif's crane
REFERENCE = {0: nx.house_graph(), 1: nx.cycle_graph(5), 2: CRANE}


@pytest.mark.parametrize("ood", [None, "er"])
def test_motif_labels_from_ground_truth_subgraph(ood):
    gs = generate("motif", 45, seed=2, ood=ood)
    assert gs.class_names == ["house", "cycle", "crane"]
    for g, (_, G, gt, _) in enumerate(graphs(gs)):
        assert nx.is_isomorphic(gt, REFERENCE[int(gs.y[g])])
        assert nx.is_connected(G)
    assert set(np.unique(gs.split)) == {0, 1, 2, 3}


def _base(G, gt):
    """The base graph: drop the motif (and with it the bridge)."""
    return G.subgraph([v for v in G if v not in gt.nodes])


def _good_base(kind, width):
    """GOOD-Motif's bases built by networkx, as its synthetic_structsim does."""
    return {"wheel": lambda: nx.wheel_graph(width), "ladder": lambda: nx.ladder_graph(width),
            "tree": lambda: nx.balanced_tree(2, max(1, int(np.log2(width)) - 1)),
            "star": lambda: nx.star_graph(width), "path": lambda: nx.path_graph(width)}[kind]()


def test_motif_covariate_split_on_base_as_good():
    """Without noise edges every base is one of GOOD's (some width in 5..15), and the split follows it:
    wheel/tree/ladder train or in-distribution test, star OOD validation, path OOD test."""
    gs = make_motif(60, np.random.default_rng(0), noise=0.0)
    allowed = {0: ("wheel", "tree", "ladder"), 3: ("wheel", "tree", "ladder"), 1: ("star",), 2: ("path",)}
    for g, (_, G, gt, _) in enumerate(graphs(gs)):
        base = _base(G, gt)
        assert any(nx.is_isomorphic(base, _good_base(k, w)) for k in allowed[int(gs.split[g])]
                   for w in range(5, 16))


def test_motif_noise_edges_touch_the_base_only():
    """Noise edges raise the edge density but never join two motif nodes: the subgraph induced by the motif
    nodes is the ground truth exactly."""
    def density(gs):
        return gs.edge_index.shape[1] / gs.graph_ptr[-1]

    noisy = make_motif(40, np.random.default_rng(4), noise=0.2)
    assert density(noisy) > density(make_motif(40, np.random.default_rng(4), noise=0.0)) + 0.05
    for _, G, gt, _ in graphs(noisy):
        assert nx.utils.edges_equal(G.subgraph(gt.nodes).edges, gt.edges)


def test_large_ood_sizes():
    gs = generate("motif", 10, seed=0, ood="large")
    sizes = np.diff(gs.graph_ptr)
    assert sizes.min() >= 2 ** 7 - 1 + 5 and sizes.max() <= 2 * 250 + 5


def test_same_seed_same_arrays_and_npz_round_trip(tmp_path):
    a, b = generate("topofeature", 30, seed=5), generate("topofeature", 30, seed=5)
    for k, v in a.arrays().items():
        np.testing.assert_array_equal(v, b.arrays()[k])
    write_npz(tmp_path / "g.npz", a)
    c = read_npz(tmp_path / "g.npz")
    np.testing.assert_array_equal(c.edge_index, a.edge_index)
    assert c.feature_names == ["red", "other"] and c.class_names == ["negative", "positive"]


def _arrays():
    return generate("motif", 10, seed=0).arrays()


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.pop("graph_ptr"), "missing key 'graph_ptr'"),
    (lambda d: d.__setitem__("graph_ptr", d["graph_ptr"][::-1]), "graph_ptr"),
    (lambda d: d.__setitem__("edge_index", d["edge_index"] + 10**6), "outside"),
    (lambda d: d.__setitem__("y", np.zeros_like(d["y"])), "single class"),
    (lambda d: d.__setitem__("y", d["y"] + 0.5), "non-integer"),
    (lambda d: d.__setitem__("edge_gt", d["edge_gt"][:-1]), "edge_gt"),
    (lambda d: d["x"].__setitem__((0, 0), np.nan), "NaN"),
])
def test_bad_npz_named(edit, words):
    d = _arrays()
    d["x"] = d["x"].copy()
    edit(d)
    with pytest.raises(InputError, match=words):
        check_graphset(d, "g.npz")


def test_edge_joining_two_graphs_refused():
    d = _arrays()
    d["edge_index"] = d["edge_index"].copy()
    d["edge_index"][1, 0] = d["graph_ptr"][-2]
    with pytest.raises(InputError, match="joins graphs"):
        check_graphset(d, "g.npz")
