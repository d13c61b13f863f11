"""The SQLite database: one file on a local disk, shared by the processes of one machine.

Nothing touches the disk until the first call: the folder, the file, WAL mode and the
tables are all made on first use.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from app.storage.interface import URL_VARIABLE, redact
from app.storage.schema import Result, Transaction, migrate
from app.storage.sql import SqlDatabase

T = TypeVar("T")

#: The file name of the default database, inside the data folder.
DEFAULT_FILE = "playground.db"

#: How long a writer waits for another process's write lock before failing (seconds).
#: An insert holds the lock for one fsync, so this is generous.
BUSY_TIMEOUT_SECONDS = 10.0

#: How long a process starting up waits for another that is migrating the file.
MIGRATION_TIMEOUT_SECONDS = 300.0

#: The current time as stored in `created_at` (ISO 8601, UTC, milliseconds).
_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

# The shares table is exactly the one earlier versions made, so their files still open.
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS shares (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS sources (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        data BLOB NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
)


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
            f"{URL_VARIABLE}={redact(url)!r}: use sqlite:///path/to/file.db or "
            "postgresql://user:password@host:port/database "
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


class SqliteDatabase(SqlDatabase):
    """Shares and sources in one SQLite file; thread- and process-safe.

    Each thread gets its own connection (sqlite3 connections must not cross threads),
    opened on first use. WAL lets readers proceed while one writer commits, which is
    what several gunicorn workers and threads on one file need. SQLite has one writer at
    a time, so a write transaction (`BEGIN IMMEDIATE`) is the sources lock.
    """

    least = "MIN"
    greatest = "MAX"
    now_sql = _NOW

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._ready = False
        self._ready_lock = threading.Lock()
        self._opened: list[sqlite3.Connection] = []

    def close(self) -> None:
        with self._ready_lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, opened (and the file prepared) on first use."""
        local = self._local
        # A connection must not be used across fork(): after one, open a fresh one.
        if getattr(local, "pid", None) != os.getpid():
            local.connection = self._connect()
            local.pid = os.getpid()
        return local.connection

    def _execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Result:
        return _run(self.connection(), sql, params)

    def _atomically(self, work: Callable[[Transaction], T], exclusive: bool = True) -> T:
        # IMMEDIATE: take the write lock now, not at the first write, so that what the
        # transaction reads (the total size, the candidates) cannot change under it.
        return _in_transaction(self.connection(), work)

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self._prepare()
        # isolation_level=None: autocommit. Every write is one statement or an explicit
        # transaction, and Python's implicit transactions would only hold locks longer.
        # check_same_thread=False only so that close() may close every thread's
        # connection at shutdown.
        connection = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_SECONDS,
            isolation_level=None,
            check_same_thread=False,
        )
        # FULL, not NORMAL: in WAL mode NORMAL skips the fsync at commit, so a power cut
        # can lose the last commits. A share's URL is handed out as soon as the insert
        # returns; it must survive. The price is one fsync per new row, which is rare.
        # synchronous is per connection, so it is set on every one.
        connection.execute("PRAGMA synchronous=FULL")
        with self._ready_lock:
            self._opened.append(connection)
        return connection

    def _prepare(self) -> None:
        """Make the folder, switch the file to WAL, create and migrate the tables, once
        per process."""
        with self._ready_lock:
            if self._ready:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A long timeout: another process may be migrating a large file right now.
            connection = sqlite3.connect(
                self.path, timeout=MIGRATION_TIMEOUT_SECONDS, isolation_level=None
            )
            try:
                # WAL is a property of the file: set once, every later connection has it.
                mode = _switch_to_wal(connection)
                if mode != "wal":
                    raise RuntimeError(
                        f"SQLite refused WAL mode for {self.path} (got {mode!r}); "
                        "put the database on a local filesystem."
                    )
                _in_transaction(connection, _create_tables)
            finally:
                connection.close()
            self._ready = True


def _switch_to_wal(connection: sqlite3.Connection) -> str:
    """`PRAGMA journal_mode=WAL`, asked again while another process holds the new file.

    SQLite answers "database is locked" at once, without waiting its busy timeout, when
    several processes open a new file together and one is still switching it (seen about
    once in 30 starts of 8 at once), so the wait is ours, as long as a migration's.
    """
    deadline = time.monotonic() + MIGRATION_TIMEOUT_SECONDS
    while True:
        try:
            return str(connection.execute("PRAGMA journal_mode=WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _create_tables(tx: Transaction) -> None:
    for statement in _SCHEMA:
        tx.execute(statement)
    migrate(tx, time.time(), "BLOB")


class _Transaction:
    """Statements on a connection inside `BEGIN IMMEDIATE` ... `COMMIT`."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Result:
        return _run(self.connection, sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.connection.executemany(sql, rows)


def _run(
    connection: sqlite3.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any]
) -> Result:
    cursor = connection.execute(sql, params)
    rows = cursor.fetchall()  # first: with RETURNING, rowcount counts the rows fetched
    return Result(cursor.rowcount, rows)


def _in_transaction(connection: sqlite3.Connection, work: Callable[[Transaction], T]) -> T:
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = work(_Transaction(connection))
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return result
