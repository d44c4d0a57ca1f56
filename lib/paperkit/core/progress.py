"""Progress bars: tqdm on stderr, shown only when stderr is a terminal and not quieted.

``PAPERKIT_PROGRESS=always|never|auto`` overrides the terminal test (``always`` is handy in CI logs).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = bool(quiet)


def enabled() -> bool:
    mode = os.environ.get("PAPERKIT_PROGRESS", "auto").lower()
    if _quiet or mode == "never":
        return False
    if mode == "always":
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(iterable: Iterable[Any] | None = None, *, total: int | None = None, desc: str | None = None,
             unit: str = "it", **kwargs: Any) -> Any:
    """A tqdm bar (or a silent one) writing to stderr; use like ``tqdm``."""
    from tqdm import tqdm

    kwargs.setdefault("leave", False)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled(), **kwargs)
