"""var-approx: the seeds of one sweep cell trained as one vmapped model vs one after another, the cost of one
fit, and the 84-token pyramid vs the flat 64-token model (per-step cost beside the error ratio).

Timings are medians over repetitions, measured side by side in one process; ratios are what we quote.
``--quick`` uses fewer steps and widths (~30 s on a quiet 2-core machine).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from paperkit.methods.var_approx.train import Problem, fit, fit_seeds


def timed(fn, reps: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer steps, widths and repetitions (~30 s)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    steps, widths, reps = (60, (8, 64), 1) if args.quick else (300, (8, 16, 32, 64, 128, 256), 3)
    seeds = (0, 1, 2)
    print(f"vmapped vs sequential seeds ({len(seeds)} seeds, {steps} steps, fourier L=2)")
    print(f"{'width':>6} {'sequential s':>13} {'vmapped s':>10} {'ratio':>6} {'max |Δ rmse|':>13}")
    sweep_s = 0.0
    for w in widths:
        p = Problem(lipschitz=2.0, width=w, steps=steps)
        t_seq, seq = timed(lambda p=p: fit_seeds(p, seeds, vmapped=False), reps)
        t_vm, vm = timed(lambda p=p: fit_seeds(p, seeds), reps)
        diff = max(abs(a["test_rmse"] - b["test_rmse"]) for a, b in zip(seq, vm, strict=True))
        print(f"{w:>6} {t_seq:>13.2f} {t_vm:>10.2f} {t_seq / t_vm:>6.2f} {diff:>13.2e}")
        sweep_s += 3 * t_vm * Problem().steps / steps      # 3 Lipschitz constants, default steps
    print(f"default sweep ({len(widths)} widths x 3 L x {len(seeds)} seeds vmapped, {Problem().steps} steps), "
          f"extrapolated from these cells: {sweep_s / 60:.1f} min (issue: <= 10 min at 6 widths)")
    one_steps = 150 if args.quick else 1500
    t_one, res = timed(lambda: fit(Problem(lipschitz=2.0, width=256, steps=one_steps), 0), 1)
    print(f"\none fit at width 256, {one_steps} steps: {t_one:.1f} s (test rel L2 {res.metrics['test_rel_l2']:.3f})")
    print("\npyramid (84 tokens) vs flat (64 tokens), width 64")
    rows = {}
    for ablate in ("none", "no-pyramid"):
        p = Problem(lipschitz=2.0, width=64, steps=steps, ablate=ablate)
        t, f = timed(lambda p=p: fit(p, 0), reps)
        rows[ablate] = (t / steps * 1e3, f.metrics["test_rmse"], f.metrics["tokens"])
    for k, (ms, rmse, tok) in rows.items():
        print(f"{k:>11}: {tok} tokens, {ms:.2f} ms/step, test RMSE {rmse:.4f}")
    print(f"ratio pyramid/flat: time {rows['none'][0] / rows['no-pyramid'][0]:.2f}, "
          f"error {rows['none'][1] / rows['no-pyramid'][1]:.2f}")


if __name__ == "__main__":
    main()
