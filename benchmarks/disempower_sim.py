"""disempower-sim: Monte Carlo over the priors, vectorised over draws vs looping the scalar simulator.

Prints medians and the speed ratio; the scalar loop runs a subset of the draws and is scaled up (it is
the same per-draw work). Also times each built-in scenario, and the agent-based mode (10^5 households and
10^5 firms per system over 50 years) side by side with the ODE run of the same scenario, with the largest
HII gap between them. ``--quick`` uses fewer draws and one repetition.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from paperkit.methods.disempower import compile_model, load_scenario, simulate
from paperkit.methods.disempower import sensitivity as sens
from paperkit.methods.disempower.abm import Population, simulate_abm
from paperkit.methods.disempower.registry import set_path, stack
from paperkit.methods.disempower.scenario import builtin_names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer draws and repetitions (~20 s)")
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--years", type=int, default=50)
    ap.add_argument("--agents", type=int, default=100_000, help="households, and firms per system, in the ABM run")
    args = ap.parse_args()
    draws, reps, scalar_n = (2_000, 1, 20) if args.quick else (args.draws, 3, 100)
    sc = load_scenario("baseline_incremental")
    paths = sens.prior_paths(sc)
    X = sens.mc_design(paths, draws, seed=0)
    values = []
    for row in X:
        v = {k: a.copy() for k, a in sc.values.items()}
        for (p, _), x in zip(paths, row, strict=True):
            set_path(v, p, float(x))
        values.append(v)
    stacked = stack(values)
    vec_t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        res = simulate(compile_model(sc, draws, stacked), args.years, 0.25, record=False)
        vec_t.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(scalar_n):
        one = simulate(compile_model(sc, 1, {k: a[i:i + 1] for k, a in stacked.items()}), args.years, 0.25,
                       record=False)
        assert abs(one.summary["hii_final"][0] - res.summary["hii_final"][i]) < 1e-9
    loop_t = (time.perf_counter() - t0) / scalar_n * draws
    vec = statistics.median(vec_t)
    print(f"Monte Carlo, {draws} draws x {args.years} years (dt 0.25), {len(paths)} uncertain parameters")
    print(f"  vectorised         {vec:8.2f} s")
    print(f"  scalar loop        {loop_t:8.2f} s  (from {scalar_n} draws, scaled)")
    print(f"  ratio              {loop_t / vec:8.1f}x   P(irreversible) = {res.summary['irreversible'].mean():.3f}")
    times = {}
    for name in builtin_names():
        t0 = time.perf_counter()
        simulate(compile_model(load_scenario(name)), args.years, 0.25)
        times[name] = time.perf_counter() - t0
    print(f"scenarios: slowest {max(times, key=times.get)} {max(times.values()):.3f} s, "
          f"median {np.median(list(times.values())):.3f} s")
    model = compile_model(sc)
    pop = Population(households=args.agents, firms=args.agents, parties=5)
    abm_t, ode_t = [], []
    for rep in range(1 if args.quick else 3):
        t0 = time.perf_counter()
        abm = simulate_abm(model, args.years, 0.25, population=pop, seed=rep)
        abm_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ode = simulate(model, args.years, 0.25)
        ode_t.append(time.perf_counter() - t0)
    gap = float(np.abs(abm.traj["HII"][0] - ode.traj["HII"][0]).max())
    abm_s, ode_s = statistics.median(abm_t), statistics.median(ode_t)
    print(f"ABM, {args.agents} households + {args.agents} firms/system, {args.years} years (+30 frozen), dt 0.25")
    print(f"  agent-based        {abm_s:8.2f} s")
    print(f"  ODE                {ode_s:8.2f} s")
    print(f"  ratio              {abm_s / ode_s:8.1f}x   max |HII_abm - HII_ode| = {gap:.4f}")


if __name__ == "__main__":
    main()
