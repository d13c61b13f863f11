"""Where shares and sources are kept: one small interface, SQLite or PostgreSQL behind it.

Everything stored is immutable and addressed by content id, so the interface is only
"write once" and "read by id" for two tables:

- `shares(id, state, created_at)`: a share's canonical JSON text;
- `sources(id, kind, data, created_at)`: what a source was built from (the GGUF bytes up
  to the end of the KV section, or the Hugging Face files as JSON), so that any replica
  can rebuild a source it has never seen.

Writes are insert-or-ignore: the first row written for an id is kept forever. Nothing
is opened at import or construction; tables are created on first use.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import NamedTuple

#: The setting that holds the database location, named in configuration errors.
URL_VARIABLE = "PLAYGROUND_DATABASE_URL"

#: The URL schemes that mean PostgreSQL (libpq accepts both).
POSTGRES_SCHEMES = ("postgresql", "postgres")

_PASSWORD = re.compile(r"(://[^:/@]*:)[^@/]*@")


class StoredSource(NamedTuple):
    """The raw material of a source: its kind (`gguf` or `hf`) and its bytes."""

    kind: str
    data: bytes


class Database(ABC):
    """Immutable shares and sources by id; safe to use from many threads and processes."""

    @abstractmethod
    def put_share(self, share_id: str, state: str) -> None:
        """Store a share's canonical JSON under its id, unless that id is already stored."""

    @abstractmethod
    def get_share(self, share_id: str) -> str | None:
        """The canonical JSON stored under this id, or None."""

    @abstractmethod
    def share_exists(self, share_id: str) -> bool:
        """Whether a share is stored under this id (without reading its state)."""

    @abstractmethod
    def put_source(self, source_id: str, kind: str, data: bytes) -> None:
        """Store a source's raw material under its id, unless that id is already stored."""

    @abstractmethod
    def get_source(self, source_id: str) -> StoredSource | None:
        """The raw material stored under this id, or None."""

    @abstractmethod
    def close(self) -> None:
        """Close the connections this object opened (the next call opens new ones)."""


def redact(url: str) -> str:
    """The URL with its password replaced by `***`, fit for an error message or a log."""
    return _PASSWORD.sub(r"\1***@", url)


def open_database(url: str, default_folder: Path) -> Database:
    """The database a `DATABASE_URL` names; raises `ValueError` naming the variable.

    Empty or `sqlite:///...` is SQLite (empty: `playground.db` in `default_folder`);
    `postgresql://user:password@host:port/database` is PostgreSQL. The URL is checked
    here, so a bad one fails start-up, but no connection is made yet.
    """
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme in POSTGRES_SCHEMES:
        # Imported only when asked for, so a SQLite deployment never loads libpq.
        from app.storage.postgres import PostgresDatabase

        return PostgresDatabase.from_url(url)
    from app.storage.sqlite import SqliteDatabase, database_path

    return SqliteDatabase(database_path(url, default_folder))
