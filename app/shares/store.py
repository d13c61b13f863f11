"""Shares kept in SQLite, one immutable row per content id.

The interface is deliberately small (`put`, `get`, `exists`) so that another backend
(PostgreSQL is planned) can stand in for this one. Nothing touches the disk until the
first call: the folder, the file, WAL mode and the table are all made on first use.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from app.shares.state import SHARE_ID, canonical_json, share_id

#: The file name of the default database, inside the data folder.
DEFAULT_FILE = "playground.db"

#: The setting that holds the database location, named in configuration errors.
URL_VARIABLE = "PLAYGROUND_DATABASE_URL"

#: How long a writer waits for another process's write lock before failing (seconds).
#: A share insert holds the lock for one fsync, so this is generous.
BUSY_TIMEOUT_SECONDS = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS shares (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


def database_path(url: str, default_folder: Path) -> Path:
    """The SQLite file a `DATABASE_URL` names; raises `ValueError` naming the variable.

    Empty means `playground.db` in `default_folder`. As in SQLAlchemy, `sqlite:///a.db`
    is relative (to the working directory at start-up) and `sqlite:////srv/a.db` is
    absolute. Only files are accepted: an in-memory database would be a different,
    empty database for every connection, so shares would vanish.
    """
    if not url:
        return default_folder / DEFAULT_FILE
    scheme, separator, rest = url.partition("://")
    if not separator or scheme.lower() != "sqlite":
        raise ValueError(
            f"{URL_VARIABLE}={url!r}: only sqlite:///path/to/file.db is supported "
            "(or leave it empty for playground.db in the data folder)."
        )
    path = rest[1:] if rest.startswith("/") else None
    if not path or path == ":memory:" or "?" in path:
        raise ValueError(
            f"{URL_VARIABLE}={url!r}: give a database file, as sqlite:///relative/path.db "
            "or sqlite:////absolute/path.db (no in-memory database, no query options)."
        )
    # Resolve now so a later change of working directory cannot move the database.
    return Path(path).resolve()


class ShareStore:
    """Immutable shares by content id; safe to share between threads and processes.

    Each thread gets its own connection (sqlite3 connections must not cross threads),
    opened on first use. WAL lets readers proceed while one writer commits, which is
    what several gunicorn workers and threads on one file need.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._ready = False
        self._ready_lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, default_folder: Path) -> ShareStore:
        """A store at the location a `DATABASE_URL` names (see `database_path`)."""
        return cls(database_path(url, default_folder))

    def put(self, state: dict[str, Any]) -> str:
        """Store `state` under its content id and return the id.

        INSERT OR IGNORE: the first row written for an id is kept forever, so a link,
        once handed out, always shows what it showed the first time.
        """
        canonical = canonical_json(state)
        new_id = share_id(canonical)
        self._connection().execute(
            "INSERT OR IGNORE INTO shares (id, state, created_at)"
            " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            (new_id, canonical),
        )
        return new_id

    def get(self, share_id: str) -> dict[str, Any] | None:
        """The stored state, or None for an unknown or malformed id."""
        if not SHARE_ID.fullmatch(share_id):
            return None
        row = (
            self._connection()
            .execute("SELECT state FROM shares WHERE id = ?", (share_id,))
            .fetchone()
        )
        return None if row is None else json.loads(row[0])

    def exists(self, share_id: str) -> bool:
        """Whether a share with this id is stored (without reading its state)."""
        if not SHARE_ID.fullmatch(share_id):
            return False
        row = self._connection().execute("SELECT 1 FROM shares WHERE id = ?", (share_id,))
        return row.fetchone() is not None

    def _connection(self) -> sqlite3.Connection:
        local = self._local
        # A connection must not be used across fork(): after one, open a fresh one.
        if getattr(local, "pid", None) != os.getpid():
            local.connection = self._connect()
            local.pid = os.getpid()
        return local.connection

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self._prepare()
        # isolation_level=None: autocommit. Every write is one statement, and Python's
        # implicit transactions would only hold locks longer.
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        # FULL, not NORMAL: in WAL mode NORMAL skips the fsync at commit, so a power cut
        # can lose the last commits. A share's URL is handed out as soon as the insert
        # returns; it must survive. The price is one fsync per new share, which is rare.
        # synchronous is per connection, so it is set on every one.
        connection.execute("PRAGMA synchronous=FULL")
        return connection

    def _prepare(self) -> None:
        """Make the folder, switch the file to WAL and create the table, once per process."""
        with self._ready_lock:
            if self._ready:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
            )
            try:
                # WAL is a property of the file: set once, every later connection has it.
                mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if mode != "wal":
                    raise RuntimeError(
                        f"SQLite refused WAL mode for {self.path} (got {mode!r}); "
                        "put the database on a local filesystem."
                    )
                connection.execute(_SCHEMA)
            finally:
                connection.close()
            self._ready = True
