"""Per-round checkpoints of a federated run: what they hold, and writing them so Ctrl-C cannot break them.

A checkpoint holds only what decides the rest of the run (global weights, momentum, round, the last
round's messages and the deterministic history rows), so the same seed gives the same checkpoint
bytes. Seconds live in ``timing.csv`` beside the results.

``interrupt_safe()`` defers SIGINT while a checkpoint is written: torch's zip writer turns a
KeyboardInterrupt raised inside its write callback into a RuntimeError ("unexpected pos"), which
would surface as a crash instead of an interruption. The interrupt is re-raised once the file has been
renamed into place, so the run stops with the checkpoint of the last finished round intact.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

TIMING_KEYS = ("local_s", "proj_s", "aggr_s", "wall_s")


@contextlib.contextmanager
def interrupt_safe() -> Iterator[None]:
    """Hold back SIGINT for the duration of the block and re-raise it as KeyboardInterrupt afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    except ValueError:  # not the main interpreter
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


class DeferredInterrupt:
    """Like :func:`interrupt_safe`, but SIGINT is held back only from :meth:`hold` on (say, once a round is
    computed and its stage is about to be written) to the end of the ``with`` block, where a held-back
    interrupt is re-raised as KeyboardInterrupt. Ctrl-C before :meth:`hold` interrupts at once."""

    def __enter__(self) -> DeferredInterrupt:
        self.pending: list[int] = []
        self.previous = None
        self.holding = False
        return self

    def hold(self, value=None):
        """Start holding SIGINT back (idempotent); returns ``value`` unchanged."""
        if self.holding or threading.current_thread() is not threading.main_thread():
            return value
        try:
            self.previous = signal.signal(signal.SIGINT, lambda signum, frame: self.pending.append(signum))
            self.holding = True
        except ValueError:  # not the main interpreter
            pass
        return value

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.holding:
            signal.signal(signal.SIGINT, self.previous)
            self.holding = False
        if self.pending and exc_type is None:
            raise KeyboardInterrupt


def split_timings(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """History rows without seconds, and the seconds as their own rows (``round`` + TIMING_KEYS)."""
    data = [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows]
    timing = [{"round": r["round"], **{k: r[k] for k in TIMING_KEYS if k in r}} for r in rows]
    return data, timing


def join_timings(rows: list[dict], timing: list[dict]) -> list[dict]:
    """Inverse of :func:`split_timings` (rounds without a timing row get none)."""
    by_round = {int(t["round"]): t for t in timing}
    return [{**r, **{k: v for k, v in by_round.get(int(r["round"]), {}).items() if k != "round"}} for r in rows]
