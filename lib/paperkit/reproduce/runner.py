"""Run claims: each claim's steps in subprocesses, once per seed, checkpointed as one ``run.cached`` stage.

A claim that fails (a command exits non-zero, a file is missing) is recorded as ``error`` with the tail
of its stderr and is not checkpointed, so ``--resume`` retries it; finished claims are loaded from their
checkpoints. Claims are independent: ``jobs`` > 1 runs several at once (each in its own processes).
Claims with the same steps and seeds (two measurements of one experiment) share one folder: the first
runs the steps, the others measure its outputs (the commands are deterministic, so a rerun would write
the same files).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from paperkit.core import io
from paperkit.reproduce import criteria
from paperkit.reproduce.registry import Claim, available, expand

TIMINGS = "step_seconds.json"
FINISHED = "steps.json"  # the argv of every step, written once they have all finished in that folder


class ClaimFailed(Exception):
    def __init__(self, result: dict[str, Any]):
        super().__init__(result.get("reason", ""))
        self.result = result


def slug(claim_id: str) -> str:
    return claim_id.replace("/", "--")


def _base(claim: Claim, mode: str) -> dict[str, Any]:
    return {"id": claim.id, "paper": claim.paper, "claim": claim.claim, "where": claim.where,
            "paper_value": claim.paper_value, "metric": claim.shown_metric, "mode": mode}


def _argv(step: list[str]) -> list[str]:
    if step[0].endswith(".py"):
        return [sys.executable, *step]
    return [sys.executable, "-m", "paperkit_cli", *step]


def _tail(text: str, n: int = 800) -> str:
    text = text.strip()
    return text[-n:]


def _finished(d: Path, argvs: list[list[str]]) -> bool:
    if not ((d / FINISHED).is_file() and (d / TIMINGS).is_file()):
        return False
    try:
        return io.read_json(d / FINISHED) == argvs
    except Exception:  # an unreadable marker: run the steps again
        return False


def _measure(claim: Claim, d: Path, seed: int, res: dict[str, Any], t0: float) -> dict[str, float]:
    try:
        return {k: float(v) for k, v in claim.measure(d).items()}
    except Exception as e:  # a missing file or key is the claim's error, not the harness's
        res.update(verdict=criteria.ERROR, reason=f"seed {seed}: measuring failed: {type(e).__name__}: {e}",
                   seconds=round(time.perf_counter() - t0, 1))
        raise ClaimFailed(res) from e


def execute(claim: Claim, folder: Path, mode: str, *, timeout: float | None = None) -> dict[str, Any]:
    """Run one claim now (no checkpoint): every seed's steps, the measurement, the verdict."""
    steps, seeds = claim.plan(mode)
    res = _base(claim, mode)
    t0 = time.perf_counter()
    measurements = []
    for seed in seeds:
        # absolute: the steps run with the seed's folder as their working directory, where a relative
        # --run-dir (reproduce --run-dir out/quick) would have nested their outputs one level too deep
        d = (folder / f"seed{seed}").absolute()
        argvs = [expand(step, dir=d, seed=seed) for step in steps]
        if _finished(d, argvs):  # a claim with the same steps already ran them here
            measurements.append(_measure(claim, d, seed, res, t0))
            continue
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        timings = []
        for argv in argvs:
            t_step = time.perf_counter()
            try:
                p = subprocess.run(_argv(argv), capture_output=True, text=True, timeout=timeout, cwd=d)
            except subprocess.TimeoutExpired:
                res.update(verdict=criteria.ERROR, reason=f"seed {seed}: '{argv[0]}' ran past {timeout:.0f} s",
                           seconds=round(time.perf_counter() - t0, 1))
                raise ClaimFailed(res) from None
            if p.returncode != 0:
                res.update(verdict=criteria.ERROR,
                           reason=f"seed {seed}: '{argv[0]}' exited {p.returncode}: {_tail(p.stderr, 300)}",
                           stderr_tail=_tail(p.stderr), seconds=round(time.perf_counter() - t0, 1))
                raise ClaimFailed(res)
            timings.append(round(time.perf_counter() - t_step, 3))
        # wall seconds of each step (process start included): what speed claims that time a command read
        io.write_json(d / TIMINGS, timings)
        io.write_json(d / FINISHED, argvs)
        measurements.append(_measure(claim, d, seed, res, t0))
    try:
        v = claim.criterion.verdict(measurements)
    except Exception as e:
        res.update(verdict=criteria.ERROR, reason=f"criterion failed: {type(e).__name__}: {e}",
                   measurements=measurements, seconds=round(time.perf_counter() - t0, 1))
        raise ClaimFailed(res) from e
    shown = [m.get(claim.shown_metric, math.nan) for m in measurements]
    mean, se = criteria.mean_se(shown)
    if claim.figure and (folder / f"seed{seeds[0]}" / claim.figure).exists():
        fig = folder.parent.parent / "figures" / f"{slug(claim.id)}.png"
        fig.parent.mkdir(exist_ok=True)
        shutil.copyfile(folder / f"seed{seeds[0]}" / claim.figure, fig)
        res["figure"] = f"figures/{fig.name}"
    res.update(verdict=v.verdict, reason=v.reason, seeds=list(seeds), measurements=measurements,
               ours_mean=mean, ours_se=None if math.isnan(se) else se,
               seconds=round(time.perf_counter() - t0, 1))
    return res


def run_claims(claims: list[Claim], run: Any, mode: str, *, jobs: int = 1,
               on_done: Callable[[dict[str, Any]], None] | None = None,
               is_command: Callable[[str], bool] | None = None,
               timeout: float | None = None) -> list[dict[str, Any]]:
    """Results in the order of ``claims``. ``run`` is a :class:`paperkit.core.runs.RunDir`."""

    owner: dict[str, str] = {}  # an experiment (steps and seeds) -> the first claim that runs it
    locks: dict[str, threading.Lock] = {}
    for c in claims:
        key = repr(c.plan(mode))
        owner.setdefault(key, c.id)
        locks.setdefault(key, threading.Lock())

    def one(claim: Claim) -> dict[str, Any]:
        why = available(claim, is_command)
        if why:
            res = _base(claim, mode) | {"verdict": criteria.NOT_RUN, "reason": why, "seconds": 0.0}
        else:
            key = repr(claim.plan(mode))
            folder = run.path / "claims" / slug(owner[key])
            try:
                with locks[key]:  # claims sharing an experiment wait for the one that runs it
                    res = run.cached(f"claim-{slug(claim.id)}",
                                     lambda: execute(claim, folder, mode, timeout=timeout))
            except ClaimFailed as e:
                res = e.result
        if on_done:
            on_done(res)
        return res

    if jobs <= 1:
        return [one(c) for c in claims]
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # the work itself runs in child processes
        return list(pool.map(one, claims))


def unbuilt_papers(claims: list[Claim], is_command: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
    """Rows for papers that have no registered claim: not run, tool not built (or no claims yet)."""
    from paperkit_cli.registry import PAPERS, is_available

    check = is_command or is_available
    have = {c.paper for c in claims}
    rows = []
    for p in PAPERS:
        if p.key in have:
            continue
        built = any(check(c) for c in p.commands)
        rows.append({"id": p.key, "paper": p.key, "claim": p.title, "where": "", "paper_value": "",
                     "metric": "", "verdict": criteria.NOT_RUN,
                     "reason": "no claims registered yet" if built else "tool not built", "seconds": 0.0})
    return rows


# ------------------------------------------------------------------------------------------ report
def fmt_ours(r: dict[str, Any]) -> str:
    m = r.get("ours_mean")
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return "-"
    se = r.get("ours_se")
    text = f"{m:.4g}" + (f" ± {se:.2g}" if se is not None else "")
    return f"{text} (n={len(r.get('seeds', []))})"


def fmt_verdict(r: dict[str, Any]) -> str:
    v = r["verdict"]
    if v in (criteria.NOT_RUN, criteria.ERROR):
        return f"{v} ({r.get('reason', '')})" if v == criteria.NOT_RUN else "error"
    return v


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(results: list[dict[str, Any]], *, mode: str, total_s: float | None = None) -> str:
    lines = ["| claim | where in the paper | paper value | ours (mean ± s.e.) | verdict | time |",
             "|---|---|---|---|---|---|"]
    for r in results:
        ours = fmt_ours(r)
        if r.get("metric") and ours != "-":
            ours = f"{r['metric']} = {ours}"
        lines.append("| " + " | ".join(_cell(x) for x in (
            r["id"], r.get("where", ""), r.get("paper_value", ""), ours, fmt_verdict(r),
            f"{r.get('seconds', 0):.0f} s")) + " |")
    notes = [f"- **{r['id']}** ({r['verdict']}): {r.get('reason', '')}" for r in results
             if r["verdict"] in (criteria.ERROR, criteria.PARTLY, criteria.FAILS, criteria.HOLDS)]
    claims_s = sum(float(r.get("seconds", 0)) for r in results)  # resumed claims keep their first run's time
    head = f"Generated by `paperkit reproduce` in {mode} mode; the claims took {claims_s:.0f} s" + (
        f" (this invocation's wall time: {total_s:.0f} s)" if total_s is not None else "")
    return "\n".join([head + ".", "", *lines, "", "Why each verdict (computed from the numbers):", "", *notes]) + "\n"
