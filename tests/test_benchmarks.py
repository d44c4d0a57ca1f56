"""Every benchmark still runs: each script's --quick mode, as a subprocess, on the installed package.

Marked slow (a few minutes in all): they are smoke runs of the side-by-side comparisons, so a
benchmark broken by a library upgrade or a refactor fails CI instead of rotting unseen.
"""

import subprocess
import sys

import pytest

from .conftest import ROOT

SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_quick_mode_runs(script, tmp_path):
    assert "--quick" in script.read_text(), f"{script.name} has no --quick mode"
    proc = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=240,
                          cwd=tmp_path, env={**__import__("os").environ, "PAPERKIT_PROGRESS": "never"})
    assert proc.returncode == 0, f"{script.name} --quick failed:\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"
