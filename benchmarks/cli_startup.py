"""Start-up cost of the CLI: `paperkit --help` against bare Python + click, and the lazy group
against importing every command module eagerly (what a non-lazy group would do)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

REPEATS = 15


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True)
    return time.perf_counter() - t0


def median_time(argv: list[str], repeats: int) -> float:
    timed(argv)  # warm the file cache
    return statistics.median(timed(argv) for _ in range(repeats))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 repetitions instead of 15 (a smoke run)")
    repeats = 3 if ap.parse_args().quick else REPEATS
    py = sys.executable
    eager = ("import importlib\nfrom paperkit_cli import registry\n"
             "for n in registry.available_commands():\n    importlib.import_module(registry.module_name(n))\n"
             "import numpy, scipy, sklearn, torch  # what command modules would pull in if not lazy\n")
    rows = [
        ("python -c 'import click' (floor)", [py, "-c", "import click"]),
        ("paperkit --help", [py, "-m", "paperkit_cli", "--help"]),
        ("paperkit papers", [py, "-m", "paperkit_cli", "papers"]),
        ("eager: all commands + numpy/scipy/sklearn/torch", [py, "-c", eager]),
    ]
    times = {name: median_time(argv, repeats) for name, argv in rows}
    floor = times[rows[0][0]]
    help_t = times["paperkit --help"]
    print(f"{'what':52s} {'median s':>9s} {'vs floor':>9s}")
    for name, t in times.items():
        print(f"{name:52s} {t:9.3f} {t / floor:8.2f}x")
    print(f"\npaperkit --help: {help_t:.3f} s (target < 0.3 s); the eager alternative is "
          f"{times[rows[3][0]] / help_t:.1f}x slower")


if __name__ == "__main__":
    main()
