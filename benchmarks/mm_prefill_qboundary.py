"""mm-prefill: does the Q-boundary row permutation raise attention recall at equal density? (issue 27)

On the synthetic mixed-modality stream (the example's layout: frames of h×w patches with a caption every
few frames, text prefix and suffix) with one planted Q-boundary head per seed, the ``q_boundary`` index
(queries grouped by modality, block selection per query block) is built at each density, and every
unpermuted single pattern (block, VS, A-shape) is then sized to the density it actually reached
(never above). Prints recall (share of dense attention mass kept, mean over all queries) per seed and
the mean ± s.e. over seeds, plus the recall of text and vision queries separately.

Run: python benchmarks/mm_prefill_qboundary.py [--seeds 5] [--density 0.02,0.05] [--block-size 64] [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from paperkit.methods.mm_prefill import index as sparse_index
from paperkit.methods.mm_prefill import search, synthetic
from paperkit.methods.mm_prefill.attention import dense_attention, sparse_prefill_torch


def recall_rows(q, k, v, head_index, dense_lse, bs):
    idx = sparse_index.stack_heads([head_index], bs)
    _, lse = sparse_prefill_torch(q[None], k[None], v[None], idx, return_lse=True)
    # per-row recall: exp(lse_sparse - lse_dense) is the share of the dense softmax mass kept
    return torch.exp(lse[0] - dense_lse[0]).clamp(max=1.0), sparse_index.density(idx)[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--density", default="0.02,0.05")
    ap.add_argument("--block-size", type=int, default=64, help="tile size (smaller: lower densities reachable)")
    ap.add_argument("--quick", action="store_true", help="2 seeds, 16 frames of 8×8")
    a = ap.parse_args()
    densities = [float(x) for x in a.density.split(",")]
    seeds = range(2 if a.quick else a.seeds)
    frames, side = (16, 8) if a.quick else (32, 12)
    bs = a.block_size
    rows = {}
    for seed in seeds:
        spec = synthetic.SyntheticSpec(frames=frames, height=side, width=side, text_prefix=96, text_suffix=64,
                                       text_len=16, text_every=4, heads=["q_boundary"], seed=seed)
        g = synthetic.generate(spec)
        q, k, v = (torch.from_numpy(g[x][0, 0]) for x in "qkv")
        modality = torch.from_numpy(g["modality"])
        _, dense_lse = dense_attention(q[None], k[None], v[None])
        text = modality == 0
        for d in densities:
            r, dq = recall_rows(q, k, v, search.build_head("q_boundary", q, k, density=d, modality=modality,
                                                           block_size=bs), dense_lse, bs)
            out = {"q_boundary": (r, dq)}
            for name in ("block", "vs", "a_shape"):
                out[name] = recall_rows(q, k, v, search.build_head(name, q, k, density=dq, block_size=bs),
                                        dense_lse, bs)
            for name, (r, dd) in out.items():
                rows.setdefault((d, name), []).append((float(r.mean()), float(r[text].mean()),
                                                       float(r[~text].mean()), dd))
            print(f"seed {seed} N={q.shape[0]} budget {d}: " + ", ".join(
                f"{n} {float(r.mean()):.4f} (density {dd:.4f})" for n, (r, dd) in out.items()), flush=True)
    print(f"\n{'budget':>6s} {'pattern':>10s} {'density':>8s} {'recall':>16s} {'text rows':>16s} "
          f"{'vision rows':>16s} {'q_boundary gain':>16s}")
    for (d, name), vals in rows.items():
        v = np.array(vals)
        se = v.std(axis=0, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.zeros(4)
        gain = np.array(rows[(d, "q_boundary")])[:, 0] - v[:, 0]
        print(f"{d:6.2f} {name:>10s} {v[:, 3].mean():8.4f} {v[:, 0].mean():9.4f} ± {se[0]:.4f} "
              f"{v[:, 1].mean():9.4f} ± {se[1]:.4f} {v[:, 2].mean():9.4f} ± {se[2]:.4f} "
              f"{gain.mean():+9.4f} ± {gain.std(ddof=1) / np.sqrt(len(gain)) if len(gain) > 1 else 0:.4f}")


if __name__ == "__main__":
    main()
