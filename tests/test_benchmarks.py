"""Every benchmark still runs: each script's --quick mode, as a subprocess, on the installed package.

Marked slow (a few minutes in all): they are smoke runs of the side-by-side comparisons, so a
benchmark broken by a library upgrade or a refactor fails CI instead of rotting unseen. Nothing here
asserts a timing, so the scripts run two at a time with one thread each: on CI's two cores that
halves the wall time of this file.
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from .conftest import ROOT

SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py"))
TIMEOUT_S = 240
ENV = {**os.environ, "PAPERKIT_PROGRESS": "never", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _run_quick(script, cwd):
    try:
        return subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True,
                              timeout=TIMEOUT_S, cwd=cwd, env=ENV)
    except subprocess.TimeoutExpired as e:
        return e


@pytest.fixture(scope="module")
def quick_runs(request, tmp_path_factory):
    """Start the selected scripts' quick runs at once (two at a time); each test then waits for its own."""
    selected = [item.callspec.params["script"] for item in request.session.items
                if item.originalname == "test_benchmark_quick_mode_runs"]
    pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
    runs = {p.stem: pool.submit(_run_quick, p, tmp_path_factory.mktemp(p.stem)) for p in selected}
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_quick_mode_runs(script, quick_runs):
    assert "--quick" in script.read_text(), f"{script.name} has no --quick mode"
    proc = quick_runs[script.stem].result()
    assert not isinstance(proc, subprocess.TimeoutExpired), f"{script.name} --quick took over {TIMEOUT_S} s"
    assert proc.returncode == 0, f"{script.name} --quick failed:\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"
