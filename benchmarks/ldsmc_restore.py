"""ldsmc-restore benchmark: LD-SMC (N = 1, 4, 8), PFLD (N = 8) and LatentDAPS against latent DPS at equal DDIM
steps, side by side.

    python benchmarks/ldsmc_restore.py [--model DIR] [--images 64] [--steps S] [--reps 3] [-j 2] [--quick]

Without --model a tiny digits prior is trained first (as the tests do; its time is reported apart).
Prints seconds per image of each method (median over repetitions, on the same 64 box-inpainting
problems), the ratio to LDPS and the ratio N=8 / N=1 (batched particles: at most linear in N), then
the time of the whole 64-image comparison (LD-SMC N = 8 and LDPS, 3 seeds) that the acceptance test
runs. The paper's Table 4 (A100, 1000 steps, FFHQ) has LD-SMC N=1 / LDPS ≈ 1.3 and N=5 / LDPS ≈ 5.1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli"), str(ROOT)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--steps", type=int, default=None, help="DDIM steps [default: the library's]")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=2, help="torch threads")
    ap.add_argument("--quick", action="store_true", help="8 images, a smaller prior, 1 repetition, no full comparison")
    a = ap.parse_args()
    import torch

    from paperkit.methods.ldsmc.data import load_digits16
    from paperkit.methods.ldsmc.operators import make_operator, measure
    from paperkit.methods.ldsmc.restore import RestoreParams, restore
    from paperkit.methods.ldsmc.train import load_prior

    torch.set_num_threads(a.jobs)
    a.steps = a.steps or RestoreParams().steps
    if a.quick:
        a.images, a.reps = 8, 1
    model = a.model
    if model is None:
        from tests.ldsmc_helpers import build_tiny_model

        t0 = time.perf_counter()
        # --quick: a smaller prior (timings, not quality, are what this benchmark compares)
        sizes = {"vae_iters": 60, "ldm_iters": 150, "ldm_width": 64} if a.quick else None
        model = build_tiny_model(Path(tempfile.mkdtemp(prefix="ldsmc_model")), sizes)
        print(f"trained a tiny prior in {time.perf_counter() - t0:.1f} s")
    prior = load_prior(model)
    x, _ = load_digits16("test")
    x = torch.from_numpy(x[: a.images])
    tau = 0.05
    op = make_operator("box", len(x), (1, 16, 16))
    y = measure(op, x, tau, seed=0)
    rows = []
    for name, method, n in [("LDPS", "ldps", 1), ("LD-SMC N=1", "ldsmc", 1), ("LD-SMC N=4", "ldsmc", 4),
                            ("LD-SMC N=8", "ldsmc", 8), ("PFLD N=8", "pfld", 8), ("LatentDAPS", "latentdaps", 1)]:
        p = RestoreParams(particles=n, steps=a.steps)
        times = [restore(method, prior, op, y, tau, p, seed=r).seconds / len(x) for r in range(a.reps)]
        rows.append((name, statistics.median(times)))
    base = rows[0][1]
    print(f"\n{len(x)} images, box inpainting, {a.steps} DDIM steps, {a.jobs} thread(s), median of {a.reps}")
    print(f"{'method':<12} {'s/image':>9} {'× LDPS':>8}")
    for name, t in rows:
        print(f"{name:<12} {t:>9.4f} {t / base:>8.2f}")
    print(f"N=8 / N=1 time ratio: {rows[3][1] / rows[1][1]:.2f} (linear scaling would be 8.00)")
    print("paper (A100, FFHQ, 1000 steps): N=1 / LDPS ≈ 1.29, N=5 / LDPS ≈ 5.09")
    if not a.quick:
        start = time.perf_counter()
        for seed in range(3):
            op_s = make_operator("box", 64, (1, 16, 16), seed=seed)
            x64 = torch.from_numpy(load_digits16("test")[0][:64])
            y_s = measure(op_s, x64, tau, seed=seed)
            for method in ("ldsmc", "ldps"):
                restore(method, prior, op_s, y_s, tau, RestoreParams(particles=8, steps=a.steps), seed=seed)
        print(f"whole comparison (64 images × 3 seeds, LD-SMC N=8 + LDPS): {time.perf_counter() - start:.1f} s "
              "(target < 180 s on 2 cores)")


if __name__ == "__main__":
    main()
