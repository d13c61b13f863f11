"""Where shares and sources are kept: one small interface, SQLite or PostgreSQL behind it.

Shares and sources are immutable and addressed by content id:

- `shares(id, state, packed, created_at)`: a share's canonical JSON text, kept forever,
  compressed (`packed`, zlib; rows stored before compression keep their text in `state`);
- `sources(id, kind, data, created_at)`: what a source was built from (the GGUF bytes up
  to the end of the KV section, or the Hugging Face files as JSON), so that any replica
  can rebuild a source it has never seen.

Writes are insert-or-ignore: the first row written for an id is kept. Beside them,
bookkeeping tables (`app.storage.schema`) let the service bound what visitors store:

- `source_usage(id, size_bytes, last_used)`: each source's size and when it was last used,
  so that sources nobody uses can be deleted and the total can be capped;
- `share_sources(share_id, source_id)`: which source a share shows; such a source is
  never deleted, so a link keeps working forever;
- `share_usage(id, count, size_bytes)`: one row, how many shares are stored and the bytes
  they take, so that their total can be capped without summing every row;
- `rate_buckets(client, requests, bytes, updated_at)`: per-client token buckets, kept in
  the database so that every process and replica draws on the same allowance.

Nothing is opened at import or construction; tables are created (and older databases
migrated) on first use.
"""

from __future__ import annotations

from pathlib import Path

from app.storage.interface import (
    POSTGRES_SCHEMES,
    URL_VARIABLE,
    Bucket,
    BucketRule,
    Database,
    Room,
    ShareUsage,
    SourceUsage,
    StorageFull,
    StoredSource,
    redact,
)

#: The interface is read from here (`interface` holds it).
__all__ = [
    "POSTGRES_SCHEMES",
    "URL_VARIABLE",
    "Bucket",
    "BucketRule",
    "Database",
    "Room",
    "ShareUsage",
    "SourceUsage",
    "StorageFull",
    "StoredSource",
    "open_database",
    "redact",
]


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
