"""Small readers that claims' ``measure`` functions share (stdlib only, so --list stays light)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def json_file(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def step_seconds(folder: Path) -> list[float]:
    """Wall seconds of each step of the claim in ``folder`` (written by the runner)."""
    from paperkit.reproduce.runner import TIMINGS

    return [float(x) for x in json_file(folder / TIMINGS)]
