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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="Fewer repetitions.")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="torch threads (0 = one per core).")
    ap.add_argument("--k", type=int, default=900, help="Ferret's K (total over blocks).")
    ap.add_argument("--lr", type=float, default=1e-4, help="Local Adam lr of FedAvg and Ferret.")
    ap.add_argument("--kseed-lr", type=float, default=1e-3)
    ap.add_argument("--kseed-steps", type=int, default=50)
    ap.add_argument("--part", choices=["1", "2", "all"], default="all")
    args = ap.parse_args()
    from paperkit.core.resources import set_threads

    set_threads(args.jobs)
    if args.part in ("1", "all"):
        part1(args)
    if args.part in ("2", "all"):
        part2(args)


if __name__ == "__main__":
    main()
