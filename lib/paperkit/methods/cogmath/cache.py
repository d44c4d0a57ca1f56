"""The response cache: every answer obtained is kept, so reruns are free and give the same outputs.

A SQLite database (stdlib :mod:`sqlite3`, WAL mode), one row per response:
``(key, model, settings, prompt, response)``, where ``key = sha256(model, settings, prompt)`` and
``settings`` are the generation parameters that change the output (temperature, max tokens, dtype, …;
never credentials). The server address is not in the key on purpose: the same model behind another
address reuses the answers (a run may resume elsewhere).

Each answer is committed as it arrives, so an interrupted or failed run loses nothing already paid
for, and several runs (processes) may share one cache file at once: SQLite serialises their writes,
and nothing is ever rewritten, so no run can drop another's answers. Failed calls are not cached:
rerunning retries them. The file is created with the first answer (a run that obtains nothing leaves
no cache behind).

Older paperkit versions kept the cache as JSONL (one JSON object per line); such a file is converted
in place (atomically) the first time it is opened. A file that is neither is refused
(:class:`~paperkit.core.errors.InputError`, exit 3), never silently replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from paperkit.core.errors import InputError

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
APPLICATION_ID = 0x706B636D  # "pkcm": marks the database as a paperkit cogmath response cache
SCHEMA_VERSION = 1
_SCHEMA = ("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, settings TEXT NOT NULL,"
           " prompt TEXT NOT NULL, response TEXT NOT NULL) WITHOUT ROWID")
_BUSY_TIMEOUT_S = 60.0
_FIELDS = ("key", "model", "settings", "prompt", "response")


def cache_key(model: str, settings: str, prompt: str) -> str:
    h = hashlib.sha256()
    for part in (model, settings, prompt):
        b = part.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _while_locked(step):
    """Run ``step`` again while SQLite answers "database is locked" without waiting, for up to the busy timeout.

    Switching a new file to WAL and the first schema write can fail that way at once, without the busy handler,
    when another process is creating the same cache (seen in test_two_processes_share_one_cache)."""
    deadline, pause = time.monotonic() + _BUSY_TIMEOUT_S, 0.005
    while True:
        try:
            return step()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.2)


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=_BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None)
    try:
        _while_locked(lambda: con.execute("PRAGMA journal_mode=WAL"))
        con.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a crash of the process
    except BaseException:
        con.close()
        raise
    return con


def _init_schema(con: sqlite3.Connection) -> None:
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute(_SCHEMA)
        con.execute(f"PRAGMA application_id={APPLICATION_ID}")
        con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _read_jsonl(path: Path, data: bytes) -> list[dict[str, str]]:
    """The rows of a JSONL cache of older versions (a torn final line from a crash is dropped)."""
    name = str(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not a paperkit response cache (neither SQLite nor UTF-8 JSONL; byte "
                         f"{e.start} is not UTF-8)") from None
    lines = text.split("\n")
    rows = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if n >= len(lines) - 1:  # a torn final line from an interrupted run
                log.warning("%s: dropping an incomplete last line (interrupted run)", name)
                continue
            raise InputError(f"{name}: line {n} is not valid JSON; expected a paperkit response cache "
                             "(SQLite, or the JSONL of older versions)") from None
        if not isinstance(row, dict) or not {"key", "model", "settings", "response"} <= set(row) or not all(
                isinstance(row.get(k, ""), str) for k in _FIELDS):
            raise InputError(f"{name}: line {n} lacks key/model/settings/response; expected a paperkit response cache")
        rows.append({k: row.get(k, "") for k in _FIELDS})
    return rows


def _migrate_jsonl(path: Path, data: bytes) -> None:
    """Convert an old JSONL cache to SQLite in place (a new database renamed over it)."""
    rows = _read_jsonl(path, data)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.migrating")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    try:
        con = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            con.execute(_SCHEMA)
            con.execute(f"PRAGMA application_id={APPLICATION_ID}")
            con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            con.execute("BEGIN")
            con.executemany("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?)",
                            [tuple(r[k] for k in _FIELDS) for r in rows])
            con.execute("COMMIT")
        finally:
            con.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    log.warning("%s: converted an old JSONL response cache (%d answers) to SQLite", path, len(rows))


class ResponseCache:
    def __init__(self, path: str | os.PathLike | None, *, must_exist: bool = False):
        """``path=None`` keeps the answers in memory only (nothing is written)."""
        self.path = None if path is None else Path(path)
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None
        self.hits = 0
        self.added = 0
        if self.path is None:
            self._con = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            self._con.execute(_SCHEMA)
        elif self.path.exists():
            self._open_existing()
        elif must_exist:
            raise InputError(f"{path}: no such cache file; replay needs the cache of an earlier run")

    # ------------------------------------------------------------------------------------------ opening
    def _open_existing(self) -> None:
        assert self.path is not None
        name = str(self.path)
        if self.path.is_dir():
            raise InputError(f"{name}: is a directory; expected a response cache file")
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except OSError as e:
            raise InputError(f"{name}: cannot read the response cache ({e.strerror})") from None
        if not head:  # an empty file: a cache with no answers yet (initialised by the first answer)
            return
        if head != SQLITE_MAGIC:  # an old JSONL cache (or something else: refused there)
            _migrate_jsonl(self.path, self.path.read_bytes())
        self._con = self._checked(name)

    def _reader(self) -> sqlite3.Connection | None:
        """The connection, reopened after :meth:`close` when the database exists."""
        if self._con is None and self.path is not None:
            try:
                with open(self.path, "rb") as f:
                    is_db = f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
            except OSError:
                is_db = False
            if is_db:
                self._con = self._checked(str(self.path))
        return self._con

    def _checked(self, name: str) -> sqlite3.Connection:
        assert self.path is not None
        try:
            con = _connect(self.path)
        except sqlite3.OperationalError as e:  # locked, no permission, ...
            raise InputError(f"{name}: cannot open the response cache ({e})") from None
        except sqlite3.DatabaseError as e:
            raise InputError(f"{name}: corrupt response cache ({e})") from None
        try:
            app, version = con.execute("PRAGMA application_id").fetchone()[0], con.execute(
                "PRAGMA user_version").fetchone()[0]
            cols = [r[1] for r in con.execute("PRAGMA table_info(responses)")]
            if (app, version, cols) == (0, 0, []) and not con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                # An empty database: another run created the file and is initialising it right now.
                _init_schema(con)
                app, version = APPLICATION_ID, SCHEMA_VERSION
                cols = [r[1] for r in con.execute("PRAGMA table_info(responses)")]
            if app != APPLICATION_ID or version != SCHEMA_VERSION or cols != list(_FIELDS):
                raise InputError(f"{name}: a SQLite database but not a paperkit response cache (version "
                                 f"{SCHEMA_VERSION}); expected the cache of a cogmath run")
            con.execute("SELECT count(*) FROM responses").fetchone()
        except sqlite3.Error as e:
            con.close()
            raise InputError(f"{name}: corrupt response cache ({e})") from None
        except InputError:
            con.close()
            raise
        return con

    def _writable(self) -> sqlite3.Connection:
        if self._reader() is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                con = _connect(self.path)
                _while_locked(lambda: _init_schema(con))
            except sqlite3.Error as e:
                raise InputError(f"{self.path}: cannot create the response cache ({e})") from None
            self._con = con
        assert self._con is not None
        return self._con

    # --------------------------------------------------------------------------------------------- rows
    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        con = self._reader()
        if con is None:
            return []
        try:
            return con.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            raise InputError(f"{self.path}: corrupt response cache ({e})") from None

    def __len__(self) -> int:
        with self._lock:
            rows = self._query("SELECT count(*) FROM responses")
        return rows[0][0] if rows else 0

    def models(self) -> list[tuple[str, str]]:
        with self._lock:
            return sorted(self._query("SELECT DISTINCT model, settings FROM responses"))

    def rows(self) -> list[dict[str, str]]:
        """Every cached response, sorted by key."""
        with self._lock:
            got = self._query("SELECT key, model, settings, prompt, response FROM responses ORDER BY key")
        return [dict(zip(_FIELDS, r, strict=True)) for r in got]

    def get(self, key: str) -> str | None:
        with self._lock:
            got = self._query("SELECT response FROM responses WHERE key = ?", (key,))
            if not got:
                return None
            self.hits += 1
        return got[0][0]

    def put(self, key: str, model: str, settings: str, prompt: str, response: str) -> None:
        with self._lock:
            con = self._writable()
            try:
                cur = con.execute("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?)",
                                  (key, model, settings, prompt, response))
            except sqlite3.DatabaseError as e:
                raise InputError(f"{self.path}: cannot write to the response cache ({e})") from None
            self.added += cur.rowcount

    def sync(self) -> None:
        """Answers are committed as they are put; nothing to do (kept for callers of older versions)."""

    def close(self) -> None:
        with self._lock:
            if self._con is not None and self.path is not None:  # (an in-memory cache keeps its answers)
                try:  # fold the write-ahead log back into the file, so it travels as one file
                    self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error:
                    pass  # another process is using it; SQLite checkpoints later
                self._con.close()
                self._con = None

    def compact(self) -> None:
        """End of a run: checkpoint and close (the database is never rewritten, so runs sharing it keep
        every answer)."""
        self.close()
