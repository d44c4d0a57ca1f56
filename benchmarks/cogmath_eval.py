"""cogmath-eval throughput: concurrent HTTP calls and replay from the response cache.

Side by side, same process, same inquiries, against a loopback OpenAI-compatible server that adds a
fixed latency per request (a test double of the HTTP path whose replies come from the rule solver,
not a model):

* ``--jobs 1`` vs ``--jobs 8`` on the same prompts (target: >= 5x the throughput);
* a live run of 1,000 inquiries vs replaying it from the cache (target: >= 50x faster).

Each timing covers the whole evaluation (prompts, backend, extraction, scoring, summary). Medians of
several repetitions; run with ``python benchmarks/cogmath_eval.py [--latency 0.05] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "lib")]

from paperkit.methods.cogmath import backends  # noqa: E402
from paperkit.methods.cogmath.prompts import load_prompts  # noqa: E402
from paperkit.methods.cogmath.run import evaluate  # noqa: E402
from paperkit.methods.cogmath.synthetic import generate  # noqa: E402
from paperkit.methods.cogmath.testing import ChatServer  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def live(rows, url, jobs, cache):
    inner = backends.OpenAIBackend("bench", base_url=url, jobs=jobs, retries=0, timeout=30)
    b = backends.with_cache(inner, cache)
    try:
        return evaluate(rows, b, load_prompts())
    finally:
        b.cache.compact()
        b.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the server waits per request")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--small", type=int, default=20, help="problems (x10 prompts) for the jobs comparison")
    ap.add_argument("--large", type=int, default=100, help="problems (x10 prompts) for the replay comparison")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 repetition, 5 and 20 problems")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.small, a.large = 1, 5, 20
    small = generate(a.small, seed=0)[1]
    large = generate(a.large, seed=1)[1]
    n_small = sum(1 for r in small if r["inquiry"])
    n_large = sum(1 for r in large if r["inquiry"])
    results = {}
    with tempfile.TemporaryDirectory() as d, ChatServer(latency=a.latency) as server:
        for jobs in (1, 8):
            ts = []
            for rep in range(a.reps):
                t, res = timed(lambda jobs=jobs, rep=rep: live(small, server.base_url, jobs, Path(d) / f"s{jobs}-{rep}.sqlite"))
                assert res.summary["n_errors"] == 0
                ts.append(t)
            results[f"live --jobs {jobs} ({n_small} prompts)"] = statistics.median(ts)
        t_live, res_live = timed(lambda: live(large, server.base_url, 8, Path(d) / "large.sqlite"))
        results[f"live --jobs 8 ({n_large} prompts)"] = t_live
        ts = []
        for _ in range(a.reps):
            t, res = timed(lambda: evaluate(large, backends.with_cache(None, Path(d) / "large.sqlite"), load_prompts()))
            assert res.summary == res_live.summary
            ts.append(t)
        results[f"replay ({n_large} prompts)"] = statistics.median(ts)
    print(f"loopback latency {a.latency * 1000:.0f} ms per request; medians of {a.reps} runs (live large: 1 run)")
    width = max(map(len, results))
    for k, v in results.items():
        print(f"  {k.ljust(width)}  {v:8.3f} s")
    j1, j8 = list(results.values())[:2]
    lv, rp = list(results.values())[2:]
    print(f"  throughput --jobs 8 / --jobs 1 : {j1 / j8:6.1f}x   (target >= 5x)")
    print(f"  live / replay ({n_large} prompts)  : {lv / rp:6.1f}x   (target >= 50x)")
    print(f"  live --jobs 1 / replay (est.)  : {j1 * n_large / n_small / rp:6.1f}x")


if __name__ == "__main__":
    main()
