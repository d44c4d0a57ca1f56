"""On planted heads (N = 8192): VS recall, grid stride/phase recovery, grid vs VS at equal density."""

import torch

from paperkit.methods.mm_prefill import index as sparse_index
from paperkit.methods.mm_prefill import search
from paperkit.methods.mm_prefill.attention import recall_from_lse, sparse_prefill_torch


def recall(q, k, v, h, head_index, rows, dense_lse):
    idx = sparse_index.stack_heads([head_index], 64)
    _, lse = sparse_prefill_torch(q[h:h + 1], k[h:h + 1], v[h:h + 1], idx, return_lse=True)
    return float(recall_from_lse(lse[:, rows], dense_lse[h:h + 1])[0]), sparse_index.density(idx)[0]


def test_vs_recall_on_planted_vs_heads(video8k, dense_rows):
    spec, g, q, k, v = video8k
    rows, dense_lse = dense_rows
    for h in (0, 2):
        vs = search.build_head("vs", q[h], k[h], density=0.10)
        r, d = recall(q, k, v, h, vs, rows, dense_lse)
        assert d <= 0.10 and r >= 0.95, (h, r, d)
        # the planted columns are (nearly all) among the selected ones
        assert len(set(g["truth"][0][h]["columns"]) & set(vs.columns.tolist())) >= 7


def test_grid_estimator_and_grid_beats_vs(video8k, dense_rows):
    spec, g, q, k, v = video8k
    rows, dense_lse = dense_rows
    for h in (1, 3):
        truth = g["truth"][0][h]
        est = search.head_stats(q[h], k[h]).grid
        assert (est["stride"], est["phase"]) == (truth["stride"], truth["phase"]) == (256, 128)
        grid = search.build_head("grid", q[h], k[h], density=0.05)
        r_grid, d_grid = recall(q, k, v, h, grid, rows, dense_lse)
        vs = search.build_head("vs", q[h], k[h], density=d_grid)
        r_vs, d_vs = recall(q, k, v, h, vs, rows, dense_lse)
        assert d_vs <= d_grid + 1e-9
        assert r_grid >= 0.95 and r_vs <= r_grid - 0.1, (r_grid, r_vs, d_grid, d_vs)


def test_recall_from_lse_equals_mask_mass():
    """exp(lse_sparse − lse_dense) is the attention mass on the selected keys (brute force)."""
    from paperkit.methods.mm_prefill.attention import dense_attention

    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 200, 32, generator=g) for _ in range(3))
    idx = sparse_index.stack_heads([sparse_index.block_sparse(q[0], k[0], fraction=0.4, block_size=32)], 32)
    _, lse = sparse_prefill_torch(q, k, v, idx, return_lse=True)
    _, dlse = dense_attention(q, k, v)
    p = torch.softmax(((q[0] @ k[0].T) / 32 ** 0.5).masked_fill(~torch.ones(200, 200).bool().tril(), -torch.inf), -1)
    mass = (p * sparse_index.dense_mask(idx, 0)).sum(1).mean()
    assert abs(float(recall_from_lse(lse, dlse)[0]) - float(mass)) < 1e-5
