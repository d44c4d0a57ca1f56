"""sr-apo-search: the numba engine against the paper's scipy engine, side by side.

1. Speed at equal work (h = 3, F = 4, ~500 rows, BFGS vs LM, one seed): expressions fitted per second.
   The scipy engine fits a fixed, evenly spread sample of the expressions (all with --full-scipy);
   the numba engine fits all of them. Per-core rates (jobs = 1) and the 2-core rate.
2. Identical front: both engines over every expression of h = 3, F = 2 (diabetes bmi, s5): best R²
   per length of the numba engine minus scipy BFGS and Powell.
3. Full fronts on 2 cores: h = 3 with F = 6 (make_friedman1, 1,000 rows) and h = 4 with F = 2.
4. The h = 4 front of the same 6-feature set (10.8 million expressions): one shard of --h4-shards
   timed (wall and CPU), scaled to the whole front.
4. JIT: cold compile time (empty numba cache, fresh process) and cached load, reported apart.

Run: python benchmarks/sr_apo_search.py [--reps 3] [--sample 1500] [--full-scipy] [--skip-full] [--h4-shards 20] [--quick]
(--quick: h = 3 with F = 2, a 300-expression scipy sample, one repetition, no JIT subprocesses and no
full fronts; well under 30 s on 2 cores once numba's cache is warm).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "pmlb"


def dataset_f4(n_features: int = 4):
    path = SHARED / "1027_ESL.tsv.gz"
    if path.exists() and n_features == 4:
        from paperkit.core.tables import read_table

        t = read_table(path)
        cols = [c for c in t.columns if c != "target"]
        return "1027_ESL (488 rows, F = 4)", t.numeric(cols), t.numeric(["target"])[:, 0]
    from sklearn.datasets import make_friedman1

    # make_friedman1 needs n_features >= 5 (its target uses the first five); keep the first F columns
    X, y = make_friedman1(n_samples=500, n_features=5, random_state=0)
    return f"make_friedman1 (500 rows, first F = {n_features} of 5 features)", X[:, :n_features], y


def jit_times() -> tuple[float, float]:
    code = ("import time; t=time.perf_counter(); import numpy as np;"
            "from paperkit.methods.sr_apo import fit_expressions, prepare, enumerate_expressions;"
            "e=enumerate_expressions(1,1); X=np.random.default_rng(0).normal(size=(20,1)); y=X[:,0]**2;"
            "fit_expressions(e.tokens, prepare(X,y,1), 'numba', 'LM', 1); print(time.perf_counter()-t)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cold = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                    check=True).stdout.strip().splitlines()[-1])
        warm = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                    check=True).stdout.strip().splitlines()[-1])
    return cold, warm


def timed(fn, reps):
    out, times = None, []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sample", type=int, default=1500)
    ap.add_argument("--full-scipy", action="store_true")
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--h4-shards", type=int, default=20, help="time shard 1/N of the h = 4, F = 6 front")
    ap.add_argument("--quick", action="store_true", help="small sizes, one repetition (a smoke run, <= 30 s)")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.sample, args.skip_full = 1, min(args.sample, 300), True

    from paperkit.methods.sr_apo import FitOptions, enumerate_expressions, fit_expressions, prepare, search
    from paperkit.methods.sr_apo.search import best_by_length

    if not args.quick:
        cold, warm = jit_times()
        print(f"JIT: cold compile + first fit {cold:.1f} s; cached load + first fit {warm:.1f} s (fresh processes)")

    name, X, y = dataset_f4(2 if args.quick else 4)
    d = prepare(X, y, 11284)
    e = enumerate_expressions(3, X.shape[1])
    sample = np.arange(len(e)) if args.full_scipy else np.linspace(0, len(e) - 1, args.sample).astype(int)
    fit_expressions(e.tokens[:50], d, "numba", "LM", 11284)  # load the kernels
    rows = []
    nb1, t_nb1 = timed(lambda: fit_expressions(e.tokens, d, "numba", "LM", 11284, FitOptions(jobs=1)), args.reps)
    _, t_nb2 = timed(lambda: fit_expressions(e.tokens, d, "numba", "LM", 11284, FitOptions(jobs=2)), args.reps)
    sp, t_sp = timed(lambda: fit_expressions(e.tokens[sample], d, "scipy", "BFGS", 11284, FitOptions(jobs=1)),
                     1 if args.full_scipy else args.reps)
    r_sp = len(sample) / t_sp
    r_nb_sample = None
    _, t_nb_sample = timed(lambda: fit_expressions(e.tokens[sample], d, "numba", "LM", 11284, FitOptions(jobs=1)),
                           args.reps)
    r_nb_sample = len(sample) / t_nb_sample
    rows.append(("scipy BFGS, 1 core (sample)", len(sample), t_sp, r_sp, 1.0))
    rows.append(("numba LM, 1 core (same sample)", len(sample), t_nb_sample, r_nb_sample, r_nb_sample / r_sp))
    rows.append(("numba LM, 1 core (all)", len(e), t_nb1, len(e) / t_nb1, len(e) / t_nb1 / r_sp))
    rows.append(("numba LM, 2 threads (all)", len(e), t_nb2, len(e) / t_nb2, len(e) / t_nb2 / r_sp))
    print(f"\n1. {name}, h = 3, {len(e):,} expressions, seed 11284 (median of {args.reps})")
    print(f"{'engine':34s} {'exprs':>7s} {'time s':>9s} {'expr/s':>10s} {'vs scipy':>9s}")
    for r in rows:
        print(f"{r[0]:34s} {r[1]:7d} {r[2]:9.2f} {r[3]:10.1f} {r[4]:8.1f}x")
    r2_sp = np.where(sp["ok"], 1 - sp["ssr"] / d.sst, np.nan)
    r2_nb = np.where(nb1["ok"], 1 - nb1["ssr"] / d.sst, np.nan)[sample]
    both = np.isfinite(r2_sp) & np.isfinite(r2_nb)
    print(f"   per expression (sample): numba >= scipy - 1e-6 on {np.mean(r2_nb[both] >= r2_sp[both] - 1e-6):.1%}; "
          f"best per length: " + ", ".join(
              f"L{L} {v['R2']:.6f} vs {best_by_length(e.tokens[sample], sp, d).get(L, {'R2': np.nan})['R2']:.6f}"
              for L, v in best_by_length(e.tokens[sample], {k: v[sample] for k, v in nb1.items()}, d).items()))

    from sklearn.datasets import load_diabetes

    dia = load_diabetes()
    cols = [list(dia.feature_names).index(c) for c in ("bmi", "s5")]
    Xd = dia.data[:, cols]
    head2 = 2 if args.quick else 3
    t = time.perf_counter()
    fast_result = search(Xd, dia.target, head=head2, options=FitOptions(jobs=2))
    fast = fast_result.runs[0].summary
    t_fast = time.perf_counter() - t
    t = time.perf_counter()
    slow = search(Xd, dia.target, head=head2, engine="scipy", methods=["BFGS", "Powell"],
                  options=FitOptions(jobs=2)).runs
    t_slow = time.perf_counter() - t
    print(f"\n2. diabetes (bmi, s5), h = {head2}, {len(fast_result.expressions):,} expressions, seed 11284, 2 cores: "
          f"numba {t_fast:.1f} s, scipy BFGS + Powell {t_slow:.1f} s (ratio {t_slow / t_fast:.1f}x)")
    print(f"{'length':>6s} {'numba LM':>12s} " + " ".join(f"{r.method:>12s}" for r in slow) + "   numba - best scipy")
    for L in sorted(fast):
        best = max(r.summary[L]["R2"] for r in slow if L in r.summary)
        print(f"{L:6d} {fast[L]['R2']:12.8f} " + " ".join(f"{r.summary[L]['R2']:12.8f}" for r in slow)
              + f"   {fast[L]['R2'] - best:+.2e}")

    if args.skip_full:
        return
    from sklearn.datasets import make_friedman1

    print("\n3. full fronts, numba engine, 2 threads, one seed")
    for head, F, n in ((3, 6, 1000), (4, 2, 1000)):
        Xf, yf = make_friedman1(n_samples=n, n_features=max(F, 5), random_state=0)
        Xf = Xf[:, :F]
        t = time.perf_counter()
        res = search(Xf, yf, head=head, options=FitOptions(jobs=2))
        dt = time.perf_counter() - t
        front = {L: round(r["R2"], 4) for L, r in res.runs[0].summary.items()}
        print(f"   h = {head}, F = {F}, {n} rows: {len(res.expressions):,} expressions in {dt:.1f} s "
              f"({len(res.expressions) / dt:,.0f} expr/s); best per length {front}")
    h4_front(args.h4_shards)


def h4_front(n_shards: int) -> None:
    """h = 4 over the same 6-feature, 1,000-row set: one shard of ``n_shards`` (every n-th expression, so
    a fixed, evenly spread fraction) timed by wall clock and by CPU time, then scaled to the whole front.
    On a busy machine the wall time says little; CPU time / 2 is the wall time on 2 calm cores."""
    from sklearn.datasets import make_friedman1

    from paperkit.methods.sr_apo import FitOptions, enumerate_expressions, search

    X, y = make_friedman1(n_samples=1000, n_features=6, random_state=0)
    enum_wall, enum_cpu = time.perf_counter(), time.process_time()
    exprs = enumerate_expressions(4, 6)
    enum_wall, enum_cpu = time.perf_counter() - enum_wall, time.process_time() - enum_cpu
    wall, cpu = time.perf_counter(), time.process_time()
    res = search(X, y, head=4, shard=(1, n_shards), options=FitOptions(jobs=2), expressions=exprs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"\n4. h = 4, F = 6, 1000 rows: {len(exprs):,} expressions enumerated in {enum_wall:.1f} s "
          f"({enum_cpu:.1f} s CPU); shard 1/{n_shards} ({len(res.index):,}) fitted in {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU on 2 threads")
    calm = enum_cpu + cpu * n_shards / 2
    print(f"   whole front, fits scaled x{n_shards}: {calm / 60:.1f} min on 2 calm cores (CPU time / 2; "
          f"target < 30 min), {(enum_wall + wall * n_shards) / 60:.1f} min at this machine's load")


if __name__ == "__main__":
    main()
