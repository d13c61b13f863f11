"""The bookkeeping tables, and the migrations that add them to an older database.

The `shares` and `sources` tables are created as the first version made them (each
backend creates them), so old files and databases still open. Everything added since is
a numbered migration, applied once, on first use, inside the transaction (and lock) in
which a process prepares the database; `schema_migrations` records what was applied.
The DDL is the same on both backends: SQLite reads `BIGINT` and `DOUBLE PRECISION` by
type affinity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol


class Result(NamedTuple):
    """What a statement gave back: the rows it affected and the rows it returned."""

    rowcount: int
    rows: list[tuple]


class Transaction(Protocol):
    """Statements run inside one transaction (`?` or `:name` placeholders)."""

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Result:
        """Run one statement."""
        ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each row of parameters."""
        ...


#: Shares read per statement while linking existing shares to their sources.
BACKFILL_BATCH = 500

_CREATE_MIGRATIONS = """
    CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        applied_at DOUBLE PRECISION NOT NULL
    )
"""

_BOOKKEEPING = (
    # Apart from `sources`, whose rows hold the bytes: summing sizes or finding the least
    # recently used must not read (or, in SQLite, walk the overflow pages of) the blobs.
    """
    CREATE TABLE source_usage (
        id TEXT PRIMARY KEY,
        size_bytes BIGINT NOT NULL,
        last_used DOUBLE PRECISION NOT NULL
    )
    """,
    "CREATE INDEX source_usage_last_used ON source_usage (last_used)",
    """
    CREATE TABLE share_sources (
        share_id TEXT PRIMARY KEY,
        source_id TEXT NOT NULL
    )
    """,
    "CREATE INDEX share_sources_source_id ON share_sources (source_id)",
    """
    CREATE TABLE rate_buckets (
        client TEXT PRIMARY KEY,
        requests DOUBLE PRECISION NOT NULL,
        bytes DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    )
    """,
    "CREATE INDEX rate_buckets_updated_at ON rate_buckets (updated_at)",
)

# The fallback for a state json refuses (nested too deep for Python's parser): keys are
# sorted, so a source summary reads {"file_name":...,"id":"..."}. Matching a "source"
# object at any depth can only pin too much, never too little.
_SOURCE_ID = re.compile(r'"source":\{(?:"file_name":(?:null|"(?:[^"\\]|\\.)*"),)?"id":"([^"\\]*)"')


def source_of_share(state: str) -> str | None:
    """The id of the source a share's canonical JSON shows, or None."""
    try:
        parsed = json.loads(state)
    except (ValueError, RecursionError):
        found = _SOURCE_ID.search(state)
        return found.group(1) if found else None
    source = parsed.get("source") if isinstance(parsed, dict) else None
    source_id = source.get("id") if isinstance(source, dict) else None
    return source_id if isinstance(source_id, str) else None


def _track_existing(tx: Transaction, now: float) -> None:
    """Sizes of the sources already stored, and links of the shares already made.

    Existing sources count as used now: nobody knows when they were, so each gets a full
    lifetime from the upgrade on.
    """
    tx.execute(
        "INSERT INTO source_usage (id, size_bytes, last_used) SELECT id, length(data), ?"
        " FROM sources",
        (now,),
    )
    last = ""
    while rows := tx.execute(
        "SELECT id, state FROM shares WHERE id > ? ORDER BY id LIMIT ?", (last, BACKFILL_BATCH)
    ).rows:
        links = [(share, source) for share, state in rows if (source := source_of_share(state))]
        tx.executemany("INSERT INTO share_sources (share_id, source_id) VALUES (?, ?)", links)
        last = rows[-1][0]


_COMPRESSED_SHARES = (
    # `state` stays as it is (NOT NULL): new rows leave it empty and hold `packed`.
    "ALTER TABLE shares ADD COLUMN packed {blob}",
    """
    CREATE TABLE share_usage (
        id INTEGER PRIMARY KEY,
        count BIGINT NOT NULL,
        size_bytes BIGINT NOT NULL
    )
    """,
)


def _count_existing_shares(tx: Transaction, now: float) -> None:
    """The shares already stored, uncompressed, counted towards the shares' cap at their
    length in characters (what both backends' `length` gives, summed in the database)."""
    tx.execute(
        "INSERT INTO share_usage (id, count, size_bytes)"
        " SELECT 1, COUNT(*), COALESCE(SUM(length(state)), 0) FROM shares"
    )


class Migration(NamedTuple):
    """One step: its number, its DDL (`{blob}` is the backend's type for bytes), then what
    fills the new tables from the old ones."""

    version: int
    statements: tuple[str, ...]
    backfill: Callable[[Transaction, float], None]


MIGRATIONS = (
    Migration(1, _BOOKKEEPING, _track_existing),
    Migration(2, _COMPRESSED_SHARES, _count_existing_shares),
)


def migrate(tx: Transaction, now: float, blob: str) -> list[int]:
    """Apply the migrations this database lacks, in order; the versions applied. `blob`
    is the backend's column type for bytes (SQLite `BLOB`, PostgreSQL `BYTEA`).

    Run inside the transaction that prepares the database, under its lock, so that two
    processes (or replicas) starting together apply each step once.
    """
    tx.execute(_CREATE_MIGRATIONS)
    done = {row[0] for row in tx.execute("SELECT version FROM schema_migrations").rows}
    applied = []
    for migration in MIGRATIONS:
        if migration.version in done:
            continue
        for statement in migration.statements:
            tx.execute(statement.replace("{blob}", blob))
        migration.backfill(tx, now)
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
            (migration.version, now),
        )
        applied.append(migration.version)
    return applied
