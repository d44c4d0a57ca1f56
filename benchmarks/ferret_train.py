"""ferret-train benchmark: Ferret vs FedAvg vs FedKSeed side by side on the generated instruction task.

    python benchmarks/ferret_train.py [--quick] [-j 1]

Part 1, one process, same data, same seed: a ~1M-parameter causal transformer (d_model 128, 5 layers) on
the instruct task, 10 clients (one task family per client group), 3 sampled per round, the same local
steps and optimizer for every algorithm. Reports per client per round: uplink bytes (and the FedAvg /
Ferret ratio), wall seconds (ratios vs FedAvg and vs FedKSeed), and the rounds and wall seconds each
algorithm needs to reach FedAvg's round-5 test loss (Ferret and FedKSeed get up to 3× FedAvg's rounds).

Part 2: projection + reconstruction throughput for d = 10⁷ split into 100 blocks with K = 1,000
(10 bases per block), in parameters per second, for the client's projection, the server's rebuild and
the fused client-side pass. Medians over repetitions; the machine may be shared, so quote ratios.

Part 3 (issue 27): how K is split over blocks. A real update (one digits client's 10 local SGD steps,
one block per tensor: weights and biases differ in norm and size) reconstructed with K = 60 by the
uniform split, norm (K_l ∝ ||Delta_l||), prop2 (Prop. 2: ||Delta_l|| / rho_l) and the official per-block
seed pool; mean relative error over seeds and the ratio to uniform. Then ZO's bias vs Ferret's error as
K grows (ferret-recon's study on Σ x² + (1/3) Σ x³, d = 50, eps 1). The per-block pool sends
sum K_l floats (up to K per block), more than the others' K: its row gives that count.

--quick (seconds, for CI): a smaller transformer (d_model 64, 2 layers) on 1,000 examples, FedAvg for 2
rounds (the others up to 6), and d = 10⁶ in part 2.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli")]


def run(task, cfg):
    from paperkit.methods.ferret import Federation

    fed = Federation(task, cfg)
    state, prev, rows = fed.initial_state(), [], []
    t0 = time.perf_counter()
    while state.round < cfg.rounds:
        state, row, prev = fed.run_round(state, prev)
        row["elapsed_s"] = time.perf_counter() - t0
        rows.append(row)
    return fed, rows


def reach(rows, target):
    for r in rows:
        if r["test_loss"] <= target:
            return r["round"], r["elapsed_s"]
    return None, None


def part1(args):
    from paperkit.methods.ferret import FedConfig, instruct_task

    if args.quick:
        task = instruct_task(n_clients=10, seed=0, n_train=1000, n_test=100, d_model=64, n_layers=2)
        base = 2
    else:
        task = instruct_task(n_clients=10, seed=0, n_train=3000, n_test=300, d_model=128, n_layers=5)
        base = 5
    common = dict(n_clients=10, fraction=0.3, local_steps=10, batch_size=16, seed=0, optimizer="adam")
    cfgs = {
        "fedavg": FedConfig(algo="fedavg", rounds=base, lr=args.lr, **common),
        "ferret": FedConfig(algo="ferret", rounds=3 * base, lr=args.lr, k=args.k, **common),
        # FedKSeed: zeroth-order steps along candidate seeds (its paper uses many more, smaller steps)
        "fedkseed": FedConfig(algo="fedkseed", rounds=3 * base, lr=args.kseed_lr, kseed_pool=4096,
                              **{**common, "optimizer": "sgd",
                                 "local_steps": min(args.kseed_steps, 10) if args.quick else args.kseed_steps}),
    }
    results = {}
    for name, cfg in cfgs.items():
        fed, rows = run(task, cfg)
        results[name] = rows
        print(f"  {name:<9} d = {fed.dim:,}  blocks = {fed.blocks.n_blocks}  final test loss "
              f"{rows[-1]['test_loss']:.4f}  ({len(rows)} rounds, {rows[-1]['elapsed_s']:.1f} s)", flush=True)
    target = results["fedavg"][base - 1]["test_loss"]
    med = {n: statistics.median(r["wall_s"] for r in rows) for n, rows in results.items()}
    up = {n: statistics.median(r["uplink_bytes"] for r in rows) for n, rows in results.items()}
    print(f"\nPart 1: instruct task, d = {fed.dim:,}, 10 clients, 3 per round, T = 10 local steps")
    print(f"{'algorithm':<10} {'uplink B/client/round':>22} {'FedAvg/this':>12} {'wall s/round':>13} "
          f"{'vs FedAvg':>10} {'vs FedKSeed':>12} {'rounds to target':>17} {'wall s to target':>17}")
    for n in ("fedavg", "ferret", "fedkseed"):
        r, s = reach(results[n], target)
        print(f"{n:<10} {up[n]:>22,.0f} {up['fedavg'] / up[n]:>12,.0f} {med[n]:>13.3f} "
              f"{med[n] / med['fedavg']:>10.2f} {med[n] / med['fedkseed']:>12.2f} "
              f"{str(r) if r else '> ' + str(len(results[n])):>17} {f'{s:.1f}' if s else '-':>17}")
    print(f"target = FedAvg's round-{base} test loss {target:.4f}")
    rf, sf = reach(results["ferret"], target)
    rk, sk = reach(results["fedkseed"], target)
    print(f"Ferret uplink is {up['fedavg'] / up['ferret']:,.0f}x smaller than FedAvg's (goal ≥ 1,000x); "
          f"reaches the target in {rf} rounds (goal ≤ {3 * base}); "
          f"wall to target: Ferret {sf if sf else 'n/a'} s vs FedKSeed {sk if sk else 'not reached'}")


def part2(args):
    import torch

    from paperkit.methods.ferret import Blocks, project, reconstruct
    from paperkit.methods.ferret.projection import project_reconstruct

    d, L, K = (1_000_000 if args.quick else 10_000_000), 100, 1000
    blocks = Blocks.equal(d, L)
    counts = [K // L] * L
    delta = torch.randn(d, generator=torch.Generator().manual_seed(0))
    reps = 2 if args.quick else 3
    times = {"project (client)": [], "reconstruct (server)": [], "project+reconstruct (client)": []}
    for r in range(reps):
        t = time.perf_counter()
        g = project(delta, r, blocks, counts)
        times["project (client)"].append(time.perf_counter() - t)
        t = time.perf_counter()
        reconstruct(g, r, blocks, counts)
        times["reconstruct (server)"].append(time.perf_counter() - t)
        t = time.perf_counter()
        project_reconstruct(delta, r, blocks, counts)
        times["project+reconstruct (client)"].append(time.perf_counter() - t)
    print(f"\nPart 2: d = {d:,}, {L} blocks, K = {K} ({K // L} per block), {torch.get_num_threads()} thread(s)")
    print(f"{'operation':<30} {'median s':>9} {'params/s':>14} {'bases entries/s':>16}")
    for name, ts in times.items():
        m = statistics.median(ts)
        entries = (K // L) * d * (2 if name.startswith("project+") else 1)
        print(f"{name:<30} {m:>9.3f} {d / m:>14,.0f} {entries / m:>16,.0f}")
    print(f"(a single dense block with the same K would draw {K * d:,} entries per pass, {L}x more)")


def part3(args):
    import numpy as np
    import torch

    from paperkit.methods.ferret import FedConfig, Federation, digits_task
    from paperkit.methods.ferret.projection import (
        Blocks,
        allocate,
        pool_subsets,
        project_pool,
        project_reconstruct,
        reconstruct_pool,
        seed_pool,
    )
    from paperkit.methods.ferret.recon import recon_study

    task = digits_task(10, 0.5, seed=0)
    fed = Federation(task, FedConfig(n_clients=10, local_steps=10, k=60, blocks="tensor", seed=0))
    blocks: Blocks = fed.blocks
    n_seeds = 5 if args.quick else 30
    deltas = [fed._first_order(fed.initial_state().weights, c, torch.Generator().manual_seed(c))[0] for c in range(3)]
    norms = [float(deltas[0][sl].norm()) for sl in blocks.slices()]
    print(f"\nPart 3: digits MLP update, d = {blocks.dim}, blocks (tensors) {blocks.sizes}, "
          f"||Delta_l|| {[round(n, 3) for n in norms]}, K = 60, {n_seeds} seeds x 3 clients")
    # the pool scheme's uplink is sum K_l > K: a second pool sized so that client 0 sends about K floats
    k_eq = max(2, round(60 * 60 / sum(pool_subsets(60, blocks, deltas[0], 1000)[0])))
    pools = {"per-block pool": (60, seed_pool(0, 60)), f"pool, K = {k_eq}": (k_eq, seed_pool(0, k_eq))}
    err: dict[str, list[float]] = {}
    for delta in deltas:
        for how in ("uniform", "norm", "prop2"):
            counts = allocate(60, blocks, delta, how)
            for s in range(n_seeds):
                est = project_reconstruct(delta, 1000 + s, blocks, counts)[1]
                err.setdefault(how, []).append(float((est - delta).norm() / delta.norm()))
        for name, (kp, pool) in pools.items():
            for s in range(n_seeds):
                counts, idx = pool_subsets(kp, blocks, delta, 1000 + s)
                est = reconstruct_pool(project_pool(delta, pool, blocks, counts, idx), pool, blocks, counts, idx)
                err.setdefault(name, []).append(float((est - delta).norm() / delta.norm()))
    print(f"{'split':<16} {'K_l (client 0)':<22} {'floats':>6} {'rel. error':>15} {'vs uniform':>10}")
    for how, e in err.items():
        c = (pool_subsets(pools[how][0], blocks, deltas[0], 1000)[0] if how in pools
             else allocate(60, blocks, deltas[0], how))
        print(f"{how:<16} {str(c):<22} {sum(c):>6} {np.mean(e):>7.3f} ± {np.std(e) / len(e) ** 0.5:.3f} "
              f"{np.mean(e) / np.mean(err['uniform']):>8.2f}x")
    ks = [25, 100, 400] if args.quick else [25, 100, 400, 1600]
    rows = recon_study(50, ks, trials=50 if args.quick else 200, cubic=1.0, zo_eps=1.0, check=False)
    print("\nZO bias vs Ferret, d = 50, f = Σ x² + (1/3) Σ x³, eps 1 (bias: trials' noise taken out)")
    print(f"{'method':<13} {'K':>5} {'rel.err':>8} {'bias':>8} {'sqrt var':>9}")
    for r in rows:
        print(f"{r['method']:<13} {r['k']:>5} {r['rel_error_mean']:>8.3f} {r['bias_debiased']:>8.4f} "
              f"{r['variance'] ** 0.5:>9.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="Fewer repetitions.")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="torch threads (0 = one per core).")
    ap.add_argument("--k", type=int, default=900, help="Ferret's K (total over blocks).")
    ap.add_argument("--lr", type=float, default=1e-4, help="Local Adam lr of FedAvg and Ferret.")
    ap.add_argument("--kseed-lr", type=float, default=1e-3)
    ap.add_argument("--kseed-steps", type=int, default=50)
    ap.add_argument("--part", choices=["1", "2", "3", "all"], default="all")
    args = ap.parse_args()
    from paperkit.core.resources import set_threads

    set_threads(args.jobs)
    if args.part in ("1", "all"):
        part1(args)
    if args.part in ("2", "all"):
        part2(args)
    if args.part in ("3", "all"):
        part3(args)


if __name__ == "__main__":
    main()
