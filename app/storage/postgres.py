"""The PostgreSQL database: what replicas on different machines share.

psycopg 3, one autocommit connection per thread (gunicorn's gthread workers keep their
threads, so that is at most WORKERS x THREADS connections per replica), opened on first
use. The tables are created (and migrated) on first use too, under an advisory lock,
because two replicas starting together would otherwise race in CREATE TABLE IF NOT EXISTS.
Writes that must not interleave across replicas (storing a source under the cap, deleting
sources, linking a share to its source) take a second advisory lock for their transaction.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict

from app.storage.interface import URL_VARIABLE, redact
from app.storage.schema import Result, Transaction, migrate
from app.storage.sql import SqlDatabase

T = TypeVar("T")

#: Seconds to wait for the server when connecting, so a down database fails a request
#: instead of hanging it.
CONNECT_TIMEOUT_SECONDS = 10

#: The advisory lock key that serialises table creation (any constant will do).
_SCHEMA_LOCK = 0x706C6179  # "play"

#: The advisory lock key of source writes: exclusive to store or delete sources, shared
#: to link a share to its source (so that a deletion sees every link made before it).
_SOURCES_LOCK = 0x736F7572  # "sour"

_NAMED = re.compile(r"(?<![:\w]):([a-z_]+)")

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS shares (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS sources (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        data BYTEA NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
)

#: Connections inherited across fork(). They are never used again, but they are kept
#: referenced: finalising one would close the socket the parent is still using.
_INHERITED: list[psycopg.Connection] = []


class PostgresDatabase(SqlDatabase):
    """Shares and sources in PostgreSQL; thread-safe, one connection per thread."""

    least = "LEAST"
    greatest = "GREATEST"
    now_sql = "now()"

    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo
        self._local = threading.local()
        self._ready = False
        self._lock = threading.Lock()
        self._opened: list[psycopg.Connection] = []

    @classmethod
    def from_url(cls, url: str) -> PostgresDatabase:
        """Check a `postgresql://` URL without connecting; `ValueError` names the variable."""
        try:
            conninfo_to_dict(url)
        except psycopg.Error as error:
            raise ValueError(f"{URL_VARIABLE}={redact(url)!r}: {error}") from None
        return cls(url)

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    def _execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Result:
        """Execute one statement.

        A connection the server dropped (a restart, a failover, an idle timeout) is
        replaced once and the statement run again: every statement here is a read, an
        insert-or-ignore or an update whose repetition costs at most a token, so running
        it twice does no harm.
        """
        return self._retrying(lambda connection: _run(connection, sql, params))

    def _atomically(self, work: Callable[[Transaction], T], exclusive: bool = True) -> T:
        lock = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"

        def transaction(connection: psycopg.Connection) -> T:
            with connection.transaction():
                connection.execute(f"SELECT {lock}(%s)", (_SOURCES_LOCK,))
                return work(_Transaction(connection))

        return self._retrying(transaction)

    def _retrying(self, action: Callable[[psycopg.Connection], T]) -> T:
        """Run `action` on this thread's connection, again on a new one if it was dropped."""
        for attempt in range(2):
            connection = self._connection()
            try:
                return action(connection)
            except psycopg.OperationalError:
                if attempt or not connection.broken:
                    raise
                self._forget(connection)
        raise AssertionError("unreachable")

    def _connection(self) -> psycopg.Connection:
        local = self._local
        connection = getattr(local, "connection", None)
        if connection is not None and local.pid != os.getpid():
            _INHERITED.append(connection)  # see _INHERITED
            connection = None
        if connection is None or connection.closed:
            if not self._ready:
                self._prepare()
            connection = self._connect()
            local.connection, local.pid = connection, os.getpid()
        return connection

    def _connect(self) -> psycopg.Connection:
        connection = psycopg.connect(
            self.conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
        )
        with self._lock:
            self._opened.append(connection)
        return connection

    def _forget(self, connection: psycopg.Connection) -> None:
        connection.close()
        with self._lock:
            if connection in self._opened:
                self._opened.remove(connection)
        self._local.connection = None

    def _prepare(self) -> None:
        """Create the tables, once per process.

        Threads that get here together all run it; the advisory lock makes them (and
        other replicas) take turns, and IF NOT EXISTS makes the later turns no-ops.
        """
        with psycopg.connect(self.conninfo, connect_timeout=CONNECT_TIMEOUT_SECONDS) as setup:
            # One transaction; the lock is released at its end.
            setup.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                setup.execute(statement)
            migrate(_Transaction(setup), time.time(), "BYTEA")
        self._ready = True


class _Transaction:
    """Statements on a connection inside a transaction, with SQLite's placeholders."""

    def __init__(self, connection: psycopg.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Result:
        return _run(self.connection, sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.connection.cursor() as cursor:
            cursor.executemany(_placeholders(sql), rows)


def _run(
    connection: psycopg.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any]
) -> Result:
    cursor = connection.execute(_placeholders(sql), params)
    rows = cursor.fetchall() if cursor.description else []
    return Result(cursor.rowcount, rows)


@functools.cache
def _placeholders(sql: str) -> str:
    """The statement with `?` and `:name` written as psycopg's `%s` and `%(name)s`."""
    return _NAMED.sub(r"%(\1)s", sql.replace("?", "%s"))
