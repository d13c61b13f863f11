"""The PostgreSQL database: what replicas on different machines share.

psycopg 3, one autocommit connection per thread (gunicorn's gthread workers keep their
threads, so that is at most WORKERS x THREADS connections per replica), opened on first
use. The tables are created on first use too, under an advisory lock, because two
replicas starting together would otherwise race in CREATE TABLE IF NOT EXISTS.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from app.storage import URL_VARIABLE, Database, StoredSource, redact

#: Seconds to wait for the server when connecting, so a down database fails a request
#: instead of hanging it.
CONNECT_TIMEOUT_SECONDS = 10

#: The advisory lock key that serialises table creation (any constant will do).
_SCHEMA_LOCK = 0x706C6179  # "play"

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


class PostgresDatabase(Database):
    """Shares and sources in PostgreSQL; thread-safe, one connection per thread."""

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

    def put_share(self, share_id: str, state: str) -> None:
        self._run(
            "INSERT INTO shares (id, state) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
            (share_id, state),
        )

    def get_share(self, share_id: str) -> str | None:
        row = self._run("SELECT state FROM shares WHERE id = %s", (share_id,))
        return None if row is None else row[0]

    def share_exists(self, share_id: str) -> bool:
        return self._run("SELECT 1 FROM shares WHERE id = %s", (share_id,)) is not None

    def put_source(self, source_id: str, kind: str, data: bytes) -> None:
        self._run(
            "INSERT INTO sources (id, kind, data) VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
            (source_id, kind, data),
        )

    def get_source(self, source_id: str) -> StoredSource | None:
        row = self._run("SELECT kind, data FROM sources WHERE id = %s", (source_id,))
        return None if row is None else StoredSource(row[0], bytes(row[1]))

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    def _run(self, sql: str, params: Sequence[Any]) -> tuple | None:
        """Execute one statement; the first row, if it returns rows.

        A connection the server dropped (a restart, a failover, an idle timeout) is
        replaced once and the statement run again: every statement here is a read or an
        insert-or-ignore, so running it twice does no harm.
        """
        for attempt in range(2):
            connection = self._connection()
            try:
                cursor = connection.execute(sql, params)
                return cursor.fetchone() if cursor.description else None
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
        self._ready = True
