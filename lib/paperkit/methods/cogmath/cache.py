"""The response cache: every answer obtained is kept, so reruns are free and byte-identical.

A JSONL file, one line per response: ``{"key", "model", "settings", "prompt", "response"}``, where
``key = sha256(model, settings, prompt)`` and ``settings`` are the generation parameters that change
the output (temperature, max tokens, …; never credentials). The server address is not in the key on
purpose: the same model behind another address reuses the answers (a run may resume elsewhere).
Lines are appended (and flushed to disk) as answers arrive, so an interrupted or failed run loses
nothing already paid for; a torn last line from a crash is dropped when the file is opened (the file
is rewritten atomically without it, so later answers are not glued to it). At the end of a run the
file is rewritten atomically, sorted by key and deduplicated, so the same set of answers always gives
the same bytes. Failed calls are not cached: rerunning retries them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from paperkit.core import io
from paperkit.core.errors import InputError

log = logging.getLogger(__name__)


def cache_key(model: str, settings: str, prompt: str) -> str:
    h = hashlib.sha256()
    for part in (model, settings, prompt):
        b = part.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


class ResponseCache:
    def __init__(self, path: str | os.PathLike | None, *, must_exist: bool = False):
        """``path=None`` keeps the answers in memory only (nothing is written)."""
        self.path = None if path is None else Path(path)
        self._rows: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._fh = None
        self.hits = 0
        self.added = 0
        if self.path is not None and self.path.exists():
            self._load()
        elif must_exist:
            raise InputError(f"{path}: no such cache file; replay needs the cache of an earlier run")

    def _load(self) -> None:
        name = str(self.path)
        with open(self.path, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        torn = False
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if n >= len(lines) - 1:  # a torn final line from an interrupted run
                    torn = True
                    continue
                raise InputError(f"{name}: line {n} is not valid JSON; expected a paperkit response cache") from None
            if not isinstance(row, dict) or not {"key", "model", "settings", "response"} <= set(row):
                raise InputError(f"{name}: line {n} lacks key/model/settings/response; expected a paperkit response cache")
            self._rows[row["key"]] = row
        if torn or (text and not text.endswith("\n")):
            # repair before anything is appended, or the next answer would be glued to the broken tail
            if torn:
                log.warning("%s: dropping an incomplete last line (interrupted run)", name)
            io.write_jsonl(self.path, list(self._rows.values()))

    def __len__(self) -> int:
        return len(self._rows)

    def models(self) -> list[tuple[str, str]]:
        return sorted({(r["model"], r["settings"]) for r in self._rows.values()})

    def get(self, key: str) -> str | None:
        row = self._rows.get(key)
        if row is None:
            return None
        with self._lock:
            self.hits += 1
        return row["response"]

    def put(self, key: str, model: str, settings: str, prompt: str, response: str) -> None:
        row = {"key": key, "model": model, "settings": settings, "prompt": prompt, "response": response}
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with self._lock:
            if key in self._rows:
                return
            self._rows[key] = row
            self.added += 1
            if self.path is None:
                return
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(line)
            self._fh.flush()

    def sync(self) -> None:
        with self._lock:
            if self._fh is not None:
                os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()
                self._fh = None

    def compact(self) -> None:
        """Rewrite the file atomically: one line per key, sorted (deterministic bytes)."""
        self.close()
        if not self._rows or self.path is None:
            return
        io.write_jsonl(self.path, (self._rows[k] for k in sorted(self._rows)))
