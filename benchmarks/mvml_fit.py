"""mvml-fit benchmark: the numba ADMM kernel against the plain NumPy reference, side by side.

1. Same problem, same iterations (tol = 0): median per-iteration time of each solver and the ratio
   (target: numba >= 1.5x faster), on the digits-mvml problem and on larger label/view counts.
2. Whole fit (mapping + ADMM) for both solvers on digits-mvml.
3. Fit time against n (1k, 4k, 16k samples of the synthetic generator): growth should be linear in n
   (the ADMM iterations do not depend on n; the mapping and the Gram matrices do).
First-call time (numba compile, or loading its cache) is reported separately.

Run: python benchmarks/mvml_fit.py [--reps 5] [--quick]  (--quick: fewer repetitions, iterations and cases)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from paperkit.methods.mvml import TMvML, data, solver


def timed(f, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def problem(V, m, q, n, seed=0):
    rng = np.random.default_rng(seed)
    views = [rng.normal(size=(n, m)) for _ in range(V)]
    Y = (rng.normal(size=(n, q)) > 0).astype(float)
    return solver.Problem.from_views(views, Y)


def main() -> None:
    import logging

    logging.disable(logging.WARNING)  # fixed-iteration runs stop "unconverged" on purpose
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 repetition, 10 iterations, small cases")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.iters = 1, 10

    t = time.perf_counter()
    solver.solve(problem(2, 4, 3, 20), solver.Settings(max_iter=2, tol=0.0))
    print(f"numba first call (compile or cache load): {time.perf_counter() - t:.2f} s\n")

    d = data.digits_mvml()
    digits = TMvML()
    digits.fit(d.views, d.Y)
    mapped = [X - digits.feature_means_[v] for v, X in enumerate(digits.view_map_.transform(d.views))]
    cases = [("digits-mvml (V=3, m=64, q=6)", solver.Problem.from_views(mapped, d.Y - d.Y.mean(0)))]
    shapes = [(3, 64, 14)] if args.quick else [(3, 64, 14), (6, 64, 40), (6, 64, 260)]
    cases += [(f"random (V={V}, m={m}, q={q})", problem(V, m, q, 2000)) for V, m, q in shapes]
    print(f"{'ADMM, same iterations':34s} {'numba ms/it':>12s} {'numpy ms/it':>12s} {'speed-up':>9s}")
    for name, P in cases:
        st = solver.Settings(lam=1.0, delta=10.0, max_iter=args.iters, tol=0.0)
        tn = timed(lambda P=P, st=st: solver.solve(P, st, solver="numba"), args.reps) / args.iters * 1e3
        tr = timed(lambda P=P, st=st: solver.solve(P, st, solver="numpy"), args.reps) / args.iters * 1e3
        print(f"{name:34s} {tn:12.3f} {tr:12.3f} {tr / tn:8.1f}x")

    print(f"\n{'whole fit on digits-mvml':34s} {'numba s':>12s} {'numpy s':>12s} {'speed-up':>9s}")
    fn = timed(lambda: TMvML(solver="numba").fit(d.views, d.Y), args.reps)
    fr = timed(lambda: TMvML(solver="numpy").fit(d.views, d.Y), args.reps)
    print(f"{'map rbf m=64 + ADMM (defaults)':34s} {fn:12.3f} {fr:12.3f} {fr / fn:8.1f}x")

    print(f"\n{'fit time vs n (synthetic, q=8)':34s} {'seconds':>12s} {'us/sample':>12s}")
    for n in (1000, 2000) if args.quick else (1000, 4000, 16000):
        s = data.synthetic(np.random.default_rng(0), n=n)
        tt = timed(lambda s=s: TMvML(max_iter=50, tol=0.0).fit(s.views, s.Y), max(1, args.reps // 2))
        print(f"{'n = ' + str(n):34s} {tt:12.3f} {tt / n * 1e6:12.1f}")


if __name__ == "__main__":
    main()
