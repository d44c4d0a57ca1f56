"""bandit-sim benchmark: numba kernels vs their plain-Python references, vs the official C++ code, and the
full official experiment (16 arms, T = 200,000, 100 runs, the six runs of the paper's four algorithms).

    python benchmarks/bandit_sim.py [--cxx PATH_TO_OFFICIAL_DRIVER] [--cxx-rounds 10] [--quick]

The official code (github.com/qirunzeng/Fusing-Reward-and-Dueling, MIT) has no command line, so the
comparison needs a small driver built outside this repository against its headers, with
``g++ -O2 -std=c++17 -include algorithm -include iomanip -include limits -I<repo>/include``. Protocol:
``PATH T ROUNDS SEED`` runs, per round, RewardElim, DuelingElim, elimination, then decomposition at
alpha = 0, 1 and 0.5 (exactly what its ``RUN_WITH_T`` block runs per round, without writing the
200,000-line per-round table), and prints one line per round,
``ROUND <seconds> <R^R R^D of each of the six runs in that order>``. Without ``--cxx`` that part is
skipped. Times are CPU seconds (user + sys) of one thread on both sides, plus wall clock; medians over
repetitions; the machine may be shared, so ratios measured side by side are what to quote.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli")]

PAPER = ("decofusion", "elimfusion", "elim-nofusion", "med-nofusion")


def cpu() -> float:
    return time.process_time()


def jit_times(cold: bool = True) -> tuple[float | None, float]:
    """Wall seconds of import + first simulate() call in a fresh process: cold cache, then warm cache.

    Without ``cold`` only the warm time is measured, with the usual cache (compiling every kernel from
    scratch takes about a minute on a busy 2-core machine)."""
    code = ("import time; t=time.perf_counter(); from paperkit.methods.bandit import official16, simulate; "
            "simulate(official16(), 'decofusion', 500, 2); print(time.perf_counter()-t)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), str(ROOT / "cli")])}
    if not cold:
        runs = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                     check=True).stdout.strip()) for _ in range(2)]
        return None, runs[-1]
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        out = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                    check=True).stdout.strip()) for _ in range(2)]
    return out[0], out[1]


def bench_reference(horizon: int, reps: int) -> list[tuple[str, float, float]]:
    from paperkit.methods.bandit import kernels, official16
    from paperkit.methods.bandit.reference import run_reference

    inst = official16()
    rows = []
    for name in (*PAPER, "ucb", "klucb", "rucb"):
        ck = [horizon]
        ref_t, jit_t = [], []
        run_reference(name, inst.means, inst.preference, inst.best, 300, seed=0, ckpts=[300])  # warm caches
        for r in range(reps):
            t0 = cpu()
            rr, rd, _ = run_reference(name, inst.means, inst.preference, inst.best, horizon, seed=r, ckpts=ck)
            ref_t.append(cpu() - t0)
            kernels.trace_run(kernels.ALGORITHMS[name], inst.means, inst.preference, inst.best, horizon, 0.5, 1 / horizon,
                        0.05, r, ck)  # compiled / loaded from cache before timing
            t0 = cpu()
            n_inner = 20
            for _ in range(n_inner):
                jr, jd, _ = kernels.trace_run(kernels.ALGORITHMS[name], inst.means, inst.preference, inst.best, horizon, 0.5,
                                        1 / horizon, 0.05, r, ck)
            jit_t.append((cpu() - t0) / n_inner)
            assert jr[-1] == rr[-1] and jd[-1] == rd[-1], f"{name}: jitted and reference runs differ"
        rows.append((name, statistics.median(ref_t), statistics.median(jit_t)))
    return rows


def ours_six(horizon: int, runs: int, seed: int) -> tuple[float, float, dict]:
    """CPU and wall seconds per run of the paper's four algorithms (six runs), one thread; final regrets."""
    import numba

    from paperkit.methods.bandit import official16, simulate

    numba.set_num_threads(1)
    inst = official16()
    simulate(inst, "decofusion", 300, 1)  # load the compiled kernels
    c0, w0 = cpu(), time.perf_counter()
    res = {a: simulate(inst, a, horizon, runs, seed=seed, checkpoints=[horizon]) for a in PAPER}
    c1, w1 = cpu(), time.perf_counter()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return (c1 - c0) / runs, (w1 - w0) / runs, res


def run_cxx(path: str, horizon: int, rounds: int, seed: int) -> tuple[float, float, np.ndarray]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    out = subprocess.run([path, str(horizon), str(rounds), str(seed)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    vals = np.array([[float(x) for x in line.split()[2:]] for line in out.stdout.splitlines()
                     if line.startswith("ROUND")])
    if vals.shape != (rounds, 12):
        raise SystemExit(f"{path}: expected {rounds} 'ROUND' lines with 12 numbers, got shape {vals.shape}")
    return cpu_s / rounds, wall / rounds, vals


def cxx_regrets(vals: np.ndarray, alpha: float = 0.5) -> dict:
    """The official aggregation (main.cpp output_data): per algorithm, the aggregated final regret per round."""
    a, b = alpha, 1 - alpha
    return {"elim-nofusion": a * vals[:, 0] + b * vals[:, 3],   # RewardElim's R^R, DuelingElim's R^D
            "elimfusion": a * vals[:, 4] + b * vals[:, 5],
            "med-nofusion": a * vals[:, 6] + b * vals[:, 9],    # decomposition α=0's R^R, α=1's R^D
            "decofusion": a * vals[:, 10] + b * vals[:, 11]}


def full_experiment(horizon: int, runs: int) -> tuple[float, float, float]:
    import numba

    from paperkit.methods.bandit import official16, simulate

    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    inst = official16()
    w0, c0 = time.perf_counter(), cpu()
    for a in PAPER:
        simulate(inst, a, horizon, runs, seed=1)
    wall, cpu_s = time.perf_counter() - w0, cpu() - c0
    kernel_runs = runs * 6  # MED-NoFusion is two DecoFusion runs, as in the official code
    return wall, cpu_s, kernel_runs * horizon / wall


def numba_threads() -> int:
    import numba

    return numba.config.NUMBA_NUM_THREADS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", default=None, help="path of the built official-code driver (see the docstring)")
    ap.add_argument("--cxx-rounds", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = ap.parse_args()
    horizon = 20_000 if args.quick else 200_000
    full_runs = 10 if args.quick else 100

    cold, warm = jit_times(cold=not args.quick)
    shown = "not measured (--quick)" if cold is None else f"{cold:.1f} s"
    print(f"JIT: import + first call: cold cache {shown}, warm cache {warm:.1f} s\n")

    t_ref = 1000 if args.quick else 3000
    print(f"1) jitted kernel vs plain-Python reference (official16, T = {t_ref}, same seed, same actions; CPU s/run)")
    print(f"{'algorithm':<14}{'python':>10}{'numba':>11}{'speed-up':>10}")
    for name, ref, jit in bench_reference(t_ref, 1 if args.quick else 3):
        print(f"{name:<14}{ref:>10.3f}{jit:>11.5f}{ref / jit:>9.0f}×")

    print(f"\n2) the paper's four algorithms (six runs) per run, T = {horizon}, one thread")
    runs_ours = 10 if args.quick else 20
    c_ours, w_ours, res = ours_six(horizon, runs_ours, seed=3)
    print(f"   paperkit: {c_ours:.3f} CPU s/run ({w_ours:.3f} s wall/run, {runs_ours} runs)")
    if args.cxx:
        c_cxx, w_cxx, vals = run_cxx(args.cxx, horizon, args.cxx_rounds, seed=3)
        print(f"   official C++: {c_cxx:.3f} CPU s/run ({w_cxx:.3f} s wall/run, {args.cxx_rounds} rounds)")
        print(f"   ratio C++/paperkit: {c_cxx / c_ours:.1f}× (CPU), {w_cxx / w_ours:.1f}× (wall)")
        print("\n   final aggregated regret (alpha 0.5), mean ± standard error; z = difference / joint s.e.")
        cx = cxx_regrets(vals)
        print(f"   {'algorithm':<14}{'paperkit':>20}{'official C++':>22}{'z':>7}")
        for a in PAPER:
            ours = res[a].regret(0.5)[:, -1]
            se_o = ours.std(ddof=1) / math.sqrt(ours.size)
            se_c = cx[a].std(ddof=1) / math.sqrt(cx[a].size)
            z = (ours.mean() - cx[a].mean()) / math.hypot(se_o, se_c)
            print(f"   {a:<14}{ours.mean():>12.1f} ± {se_o:<6.1f}{cx[a].mean():>14.1f} ± {se_c:<6.1f}{z:>6.1f}")
    else:
        print("   official C++: skipped (no --cxx driver given)")

    print(f"\n3) full official experiment: 16 arms, T = {horizon}, {full_runs} runs, four algorithms (six runs "
          f"each), {os.cpu_count()} cores")
    wall, cpu_s, rate = full_experiment(horizon, full_runs)
    n = numba_threads()
    print(f"   wall {wall:.1f} s ({rate / 1e6:.1f} M run·steps/s); CPU {cpu_s:.1f} s over {n} threads, i.e. "
          f"{cpu_s / n:.1f} s of wall on {n} otherwise idle cores")


if __name__ == "__main__":
    main()
