"""kd-rank benchmark: the Kendall rank loss against KD's KL, and its overhead in a whole training step.

    python benchmarks/kd_rank.py [--reps 20] [--quick]

1. Loss forward + backward at batch 256 for C = 10, 100, 1,000: KL (T = 4) vs the rank loss through the
   numba kernel (CPU default) and through the chunked torch path (the GPU path).
2. One synth100 training step (C = 100, batch 128, Adam): student forward + KD loss + backward + update,
   with and without γ·L_rank, for a tiny student (1×32 MLP, the tests' student) and wider MLPs.

One thread everywhere (torch and numba); medians of per-call CPU time of that thread over repetitions,
measured side by side in one process; the machine may be shared, so quote the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli")]


def median_time(fn, reps: int) -> float:
    """Median CPU seconds of this thread per call: everything runs on one thread, and CPU time is not
    inflated by other processes competing for the cores (wall time on a shared machine is)."""
    fn()  # warm-up (and numba JIT)
    times = []
    for _ in range(reps):
        t0 = time.thread_time()
        fn()
        times.append(time.thread_time() - t0)
    return statistics.median(times)


def _loss_row(C: int, reps: int) -> tuple[float, float, float]:
    import torch

    from paperkit.methods.kd_rank import kd_loss, kendall_rank_loss

    g = torch.Generator().manual_seed(C)
    s = torch.randn(256, C, generator=g, requires_grad=True)
    t = torch.randn(256, C, generator=g)

    def step(loss):
        s.grad = None
        loss().backward()

    kl = median_time(lambda: step(lambda: kd_loss(s, t, 4.0)), reps)
    r = min(reps, 5) if C >= 1000 else reps
    nb = median_time(lambda: step(lambda: kendall_rank_loss(s, t, backend="numba")), r)
    tc = median_time(lambda: step(lambda: kendall_rank_loss(s, t, backend="torch")), r)
    return kl, nb, tc


def bench_losses(reps: int, classes: list[int]) -> None:
    print(f"\n== loss forward+backward, batch 256 (ms; ratio = rank / KL), {reps} reps")
    print(f"{'C':>6} {'KL':>9} {'rank numba':>11} {'ratio':>7} {'rank torch':>11} {'ratio':>7}")
    for C in classes:
        kl, nb, tc = _loss_row(C, reps)
        print(f"{C:>6} {kl * 1e3:>9.3f} {nb * 1e3:>11.2f} {nb / kl:>7.0f} {tc * 1e3:>11.2f} {tc / kl:>7.0f}")


def bench_kernel(reps: int) -> None:
    import numpy as np

    from paperkit.methods.kd_rank.kernels import soft_tau_numba

    rng = np.random.default_rng(0)
    s, t = rng.normal(size=(128, 100)), rng.normal(size=(128, 100))
    old = median_time(lambda: soft_tau_numba(s, t, want_grad=True, fused=False), reps)
    new = median_time(lambda: soft_tau_numba(s, t, want_grad=True), reps)
    print(f"\n== numba kernel only (τ and gradient), batch 128, C = 100, {reps} reps")
    print(f"pair by pair (before issue 27) {old * 1e3:.3f} ms; teacher-sorted, vectorised {new * 1e3:.3f} ms; "
          f"{old / new:.1f}x faster")


def _step_row(hidden: tuple[int, ...], reps: int) -> tuple[int, float, float]:
    import torch

    from paperkit.methods.kd_rank import DistillConfig, distill_loss, make_mlp, teacher_order

    g = torch.Generator().manual_seed(0)
    x = torch.randn(128, 64, generator=g)  # synth100: 64 features, 100 classes
    y = torch.randint(0, 100, (128,), generator=g)
    teacher = torch.randn(128, 100, generator=g) * 3
    torch.manual_seed(0)
    model = make_mlp(64, hidden, 100)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    order = teacher_order(teacher)  # as train_student: once, the teacher being fixed

    def step(cfg):
        loss, _ = distill_loss(cfg, model(x), teacher, y, log_rank=False, teacher_order=order)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    kd, kdr = DistillConfig(base="kd"), DistillConfig(base="kd", rank_weight=1.0)
    a = median_time(lambda: step(kd), reps)
    b = median_time(lambda: step(kdr), reps)
    return sum(p.numel() for p in model.parameters()), a, b


def bench_steps(reps: int, students: list[tuple[int, ...]]) -> None:
    print(f"\n== whole training step on synth100 (C = 100, batch 128): KD vs KD + rank, {reps} reps")
    print(f"{'student':>16} {'params':>9} {'KD ms':>8} {'KD+rank ms':>11} {'overhead':>9}")
    for hidden in students:
        n, a, b = _step_row(hidden, reps)
        name = "x".join(map(str, hidden)) or "linear"
        ok = "met" if (b - a) / a <= 0.10 else "missed"
        print(f"{name:>16} {n:>9} {a * 1e3:>8.2f} {b * 1e3:>11.2f} {100 * (b - a) / a:>8.0f}%   (<= 10%: {ok})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="C = 10, 100 and two students only")
    a = ap.parse_args()
    import numba
    import torch

    torch.set_num_threads(1)
    numba.set_num_threads(1)
    bench_kernel(a.reps)
    bench_losses(a.reps, [10, 100] if a.quick else [10, 100, 1000])
    bench_steps(a.reps, [(32,), (512, 512)] if a.quick else [(32,), (512, 512), (2048, 2048), (4096, 4096)])


if __name__ == "__main__":
    main()
