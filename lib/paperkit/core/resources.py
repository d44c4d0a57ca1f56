"""Threads and memory: one ``--jobs`` meaning for every engine, and refusing work that cannot fit.

* :func:`set_threads` is called once per invocation with ``--jobs`` (0 = one per core, or this job's share
  of the cores when it runs under a parallel ``make -jN``: see :func:`resolve_jobs`). It sets the
  thread count of numba and torch (now if they are imported, through their environment variables if
  not yet) and remembers it for process pools (:func:`jobs`). Results never depend on it.
* :func:`check_memory` refuses, before anything is allocated, a request whose estimated size exceeds
  the memory limit, naming the estimate and the flag that raises the limit.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator
from typing import Any

from paperkit.core.errors import UsageError

_jobs: int | None = None

# Engines that size their thread pools from the environment when first imported.
_THREAD_ENV = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_count() -> int:
    """Cores this process may use (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def make_jobs(makeflags: str | None = None) -> int:
    """How many jobs the ``make`` this process runs under may run at once: N for ``make -jN``, 0 for an
    unlimited ``make -j`` (and for make 3.81, which exports a bare -j), 1 outside a parallel make. Read
    from ``MAKEFLAGS``, which make exports to its recipes (" -j2 --jobserver-auth=3,4"; single-letter
    flags come first, without a dash)."""
    flags = os.environ.get("MAKEFLAGS", "") if makeflags is None else makeflags
    for word in flags.split():
        if word.startswith("-j"):
            return int(word[2:]) if word[2:].isdigit() else 0
        if word == "--jobs" or word.startswith("--jobs="):     # not --jobserver-auth
            value = word.partition("=")[2]
            return int(value) if value.isdigit() else 0
    return 1


def resolve_jobs(jobs: int | None) -> int:
    """``--jobs`` as a worker count: N as given; 0 (or None) means one per core, divided among the jobs of
    a parallel ``make -jN`` this runs under (one for an unlimited ``make -j``). Without that division,
    ``make -j2`` over two torch runs puts two threads on every core, and torch's spinning OpenMP threads
    then run each job ~4x slower instead of 2x (measured with sve-encode on 2 cores)."""
    if jobs is not None and int(jobs) > 0:
        return int(jobs)
    share = make_jobs()
    return max(1, cpu_count() // share) if share > 0 else 1


def set_threads(jobs: int | None) -> int:
    """Use ``jobs`` threads in numba and torch (0 = one per core); returns the count."""
    global _jobs
    n = resolve_jobs(jobs)
    _jobs = n
    for var in _THREAD_ENV:
        if var == "NUMBA_NUM_THREADS" and "numba" in sys.modules:
            continue  # read at import only; set_num_threads below
        if var.startswith(("OMP", "MKL")) and "torch" in sys.modules:
            continue
        os.environ[var] = str(n)
    if "numba" in sys.modules:
        import numba

        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(n)
    return n


def jobs() -> int:
    """The worker count set for this invocation (``resolve_jobs(0)`` when none was set)."""
    return _jobs if _jobs is not None else resolve_jobs(0)


def total_memory_bytes() -> int:
    """Physical memory of the machine (what the OOM killer measures against)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def default_memory_limit_gb() -> float:
    """Three quarters of physical memory: leaves room for the OS and the caller's other work."""
    return round(0.75 * total_memory_bytes() / 2**30, 1)


def format_bytes(n: float) -> str:
    if not math.isfinite(n):
        return "an unbounded amount"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            if unit == "B":
                return f"{int(n)} B"
            return f"{n:.1f} {unit}" if abs(n) < 1e4 else f"{n:.2g} {unit}"   # 1.2e+11 PiB, not 12 digits
        n /= 1024
    return f"{n:.1f} PiB"


MEMORY_FLAG = "--max-memory-gb"


def check_memory(nbytes: float, what: str, *, limit_gb: float | None = None, flag: str | None = None) -> None:
    """UsageError (exit 2) when ``what`` needs more than ``limit_gb`` (default: 3/4 of RAM).

    ``nbytes`` is an estimate computed from the options alone, before anything is allocated; pass
    Python ints or floats (numpy ints overflow silently). ``flag``: the command's option that sets the
    limit (``MEMORY_FLAG``), named in the message; leave it out when the command has none.
    """
    limit = default_memory_limit_gb() if limit_gb is None else float(limit_gb)
    if not (nbytes <= limit * 2**30):
        raise UsageError(f"{what} needs about {format_bytes(nbytes)} of memory, over the limit of "
                         f"{limit:g} GiB; use smaller sizes" + (f", or raise the limit with {flag}" if flag else ""))


def check_work(units: float, what: str, *, limit: float, flag: str, unit: str = "operations") -> None:
    """UsageError when a run would take ``units`` of work over ``limit`` (e.g. hours of compute)."""
    if not (units <= limit):
        shown = f"{units:.3g}" if math.isfinite(units) else "an unbounded number of"
        raise UsageError(f"{what} means {shown} {unit}, over the limit of {limit:.3g}; use smaller sizes, "
                         f"or raise the limit with {flag}")


@contextlib.contextmanager
def process_pool(workers: int, start_method: str = "spawn") -> Iterator[Any]:
    """A ``ProcessPoolExecutor`` that an interrupt stops at once. The executor's own exit waits for every
    submitted job, queued ones included, so Ctrl-C (or SIGTERM) during ``-j N`` work used to hang for
    minutes; here queued jobs are dropped and running workers terminated. Save each result as it completes
    (``as_completed``): those stay, the rest is computed again by ``--resume``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if start_method not in multiprocessing.get_all_start_methods():
        start_method = "spawn"
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(start_method))
    try:
        yield pool
    except BaseException:
        running = list((getattr(pool, "_processes", None) or {}).values())   # multiprocessing.Process objects
        pool.shutdown(wait=False, cancel_futures=True)
        for process in running:   # SIGKILL: a forked worker inherits run_cli's SIGTERM handler, and its job is
            with contextlib.suppress(OSError, ValueError):   # discarded anyway
                process.kill()
        for process in running:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                process.join(timeout=10)
        raise
    pool.shutdown(wait=True)
