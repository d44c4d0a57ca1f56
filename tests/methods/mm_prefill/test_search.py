"""The offline search labels planted heads, round-trips as JSON, and modality boundaries pay off."""

import json

import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods.mm_prefill import index as sparse_index
from paperkit.methods.mm_prefill import search, synthetic
from paperkit.methods.mm_prefill.attention import dense_attention, recall_from_lse, sparse_prefill_torch

KINDS = ["grid", "vs", "a_shape", "block"]


@pytest.fixture(scope="module")
def searched():
    torch.set_num_threads(1)
    spec = synthetic.SyntheticSpec(frames=15, height=16, width=16, text_prefix=64, text_suffix=64, heads=KINDS * 4, seed=1)
    g = synthetic.generate(spec)
    q, k, v = (torch.from_numpy(g[x]) for x in "qkv")
    return search.search_model(q, k, v, density=0.1, sample_blocks=12), q, k


def test_search_labels_planted_heads(searched):
    doc, _, _ = searched
    labels = [doc["layers"]["0"][str(h)]["pattern"] for h in range(16)]
    correct = sum(lab == KINDS[h % 4] for h, lab in enumerate(labels))
    assert correct >= 14, labels
    for h in range(16):
        e = doc["layers"]["0"][str(h)]
        assert e["density"] <= 0.1 + 1e-9 and 0 < e["score"] <= 1


def test_patterns_round_trip_and_rebuild(searched, tmp_path):
    doc, q, k = searched
    path = tmp_path / "patterns.json"
    path.write_text(search.dumps(doc))
    back = search.check_patterns(json.loads(path.read_text()), heads=16, layers=1)
    assert back == json.loads(search.dumps(doc))
    idx = search.index_from_patterns(q[0], k[0], back, 0)
    assert idx.patterns == [back["layers"]["0"][str(h)]["pattern"] for h in range(16)]
    assert max(sparse_index.density(idx)) <= 0.1 + 1e-9
    with pytest.raises(InputError, match="for 16 heads"):
        search.check_patterns(back, heads=8)
    bad = json.loads(search.dumps(doc))
    bad["layers"]["0"]["3"]["pattern"] = "zigzag"
    with pytest.raises(InputError, match="unknown pattern 'zigzag'"):
        search.check_patterns(bad)


def test_boundary_permutation_improves_recall_on_mixed_heads():
    """Text segments between frames break blocks and the grid stride; grouping by modality repairs both."""
    spec = synthetic.SyntheticSpec(frames=24, height=8, width=8, text_prefix=32, text_suffix=32, text_len=24,
                           text_every=1, heads=["q_boundary", "2d_boundary"], seed=2)
    g = synthetic.generate(spec)
    q, k, v = (torch.from_numpy(g[x][0]) for x in "qkv")
    modality = torch.from_numpy(g["modality"])
    _, dense_lse = dense_attention(q, k, v)
    bs = 32

    def rec(h, head_index):
        idx = sparse_index.stack_heads([head_index], bs)
        _, lse = sparse_prefill_torch(q[h:h + 1], k[h:h + 1], v[h:h + 1], idx, return_lse=True)
        return float(recall_from_lse(lse, dense_lse[h:h + 1])[0]), sparse_index.density(idx)[0]

    gains = {}
    for h, kind in enumerate(["q_boundary", "2d_boundary"]):
        params = {"stride": 64} if kind == "2d_boundary" else {}
        permuted, d = rec(h, search.build_head(kind, q[h], k[h], density=0.05, modality=modality, block_size=bs,
                                           params=params))
        plain, d0 = rec(h, search.build_head("block", q[h], k[h], density=d, block_size=bs))
        assert d0 <= d + 1e-9
        gains[kind] = permuted - plain
    # Q-boundary rows help a little on these planted heads; grouping both axes (vision grid inside) a lot
    assert gains["q_boundary"] >= 0.0 and gains["2d_boundary"] >= 0.05, gains
