"""dcgnn-fit: the cost of the second channel, and batched FAITH.

1. One training epoch on the same Red-Blue batches for GIN, SMGNN and DC-SMGNN (rule channel + LEN
   combiner on top of SMGNN): medians, graphs/s, the DC/SMGNN and SMGNN/GIN ratios (the issue asks
   DC/SMGNN ≤ 1.2), and the extrapolated time of Red-Blue 5,000 graphs × 100 epochs.
2. FAITH over graphs × budgets × samples: every perturbed graph in large batches vs one forward pass per
   perturbed graph (a per-graph loop), same entries, same numbers; the ratio (asked ≥ 10×).
``--quick`` uses fewer graphs and one repetition (~30 s).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from paperkit.methods.dcgnn.data import generate
from paperkit.methods.dcgnn.faith import default_chunk, faith_scores, perturbations, perturbed_probs
from paperkit.methods.dcgnn.train import FitConfig, build_model, loss_terms, predict, to_pyg

MODELS = {"GIN": ("none", "gnn"), "SMGNN": ("smgnn", "gnn"), "DC-SMGNN": ("smgnn", "dual")}


def epoch_seconds(batches: list, segnn: str, channels: str, epoch: int, reps: int) -> float:
    cfg = FitConfig(segnn=segnn, channels=channels, epochs=100)
    torch.manual_seed(0)
    model = build_model(cfg, 2, 2)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for b in batches:
            loss = sum(loss_terms(model, model(b), b.y, epoch, cfg).values())
            opt.zero_grad()
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer graphs, one repetition (~30 s)")
    ap.add_argument("--graphs", type=int, default=1000, help="Red-Blue graphs per timed epoch")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from torch_geometric.loader import DataLoader

    n, reps = (256, 1) if args.quick else (args.graphs, 3)
    gs = generate("redblue", n, seed=0)
    batches = list(DataLoader(to_pyg(gs), batch_size=64))
    print(f"One training epoch, Red-Blue {n} graphs, batch 64, hidden 64, 1 thread (median of {reps})")
    secs = {}
    for name, (segnn, channels) in MODELS.items():
        secs[name] = epoch_seconds(batches, segnn, channels, epoch=30, reps=reps)
        print(f"  {name:9s} {secs[name]:7.2f} s  {n / secs[name]:8.0f} graphs/s  "
              f"Red-Blue 5,000 x 100 epochs ≈ {secs[name] * 5000 / n * 100 / 60:5.1f} min")
    print(f"  DC-SMGNN / SMGNN = {secs['DC-SMGNN'] / secs['SMGNN']:.2f}x   SMGNN / GIN = {secs['SMGNN'] / secs['GIN']:.2f}x")

    m = generate("motif", 120 if args.quick else 400, seed=0)
    model = build_model(FitConfig(segnn="gsat", channels="gnn"), 1, 3).eval()
    idx = np.arange(m.n_graphs)
    mask = predict(model, m, idx)["mask"]
    budgets, samples = [0.01, 0.05, 0.1], 8     # the official NECALPHA values and expval_budget
    pert = perturbations(m, idx, mask, ratio=0.3, budgets=budgets, n_samples=samples, seed=0)
    t0 = time.perf_counter()
    big = perturbed_probs(model, m, pert.entries)             # the library's CPU chunk
    t_batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    loop = perturbed_probs(model, m, pert.entries, chunk=1)
    t_loop = time.perf_counter() - t0
    assert np.allclose(big, loop, atol=1e-5)
    f = faith_scores(big, pert)["faith"]
    print(f"FAITH, {len(idx)} motif graphs x {len(budgets)} budgets x {samples} samples x 2 tests "
          f"= {len(pert.entries)} perturbed graphs")
    print(f"  batched      {t_batch:7.2f} s   ({default_chunk('cpu')} perturbed graphs per forward pass)")
    print(f"  per graph    {t_loop:7.2f} s")
    print(f"  ratio        {t_loop / t_batch:7.1f}x   FAITH by budget {np.round(f, 3).tolist()}")


if __name__ == "__main__":
    main()
