"""The storage contract for bounded storage, on SQLite and on PostgreSQL: sizes, last use,
shares that keep their source, the cap, expiry, rate buckets, and the migration of a
database that an earlier version made."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from app.storage import (
    Bucket,
    BucketRule,
    Database,
    Room,
    ShareUsage,
    SourceUsage,
    StorageFull,
)
from app.storage.postgres import PostgresDatabase
from app.storage.sqlite import SqliteDatabase
from tests.support.postgres import fresh_postgres_url, postgres_url  # noqa: F401 (pytest fixtures)

#: What the version before this bookkeeping created, statement for statement.
OLD_SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS shares (id TEXT PRIMARY KEY, state TEXT NOT NULL,"
    " created_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sources (id TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    " data BLOB NOT NULL, created_at TEXT NOT NULL)",
)
OLD_POSTGRES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS shares (id TEXT PRIMARY KEY, state TEXT NOT NULL,"
    " created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    "CREATE TABLE IF NOT EXISTS sources (id TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    " data BYTEA NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
)

DAY = 86400.0
RULE = BucketRule(requests_per_second=0.5, max_requests=3, bytes_per_second=100, max_bytes=1000)


def source_id() -> str:
    return uuid.uuid4().hex * 2


def share_state(source: str | None) -> str:
    summary = "" if source is None else f',"source":{{"file_name":null,"id":"{source}"}}'
    return f'{{"messages":[],"template":"{uuid.uuid4().hex}"{summary}}}'


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path) -> str:
    """Where a fresh, empty database lives: a SQLite path or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "bookkeeping.db")
    return request.getfixturevalue("fresh_postgres_url")


def open_db(where: str) -> Database:
    if where.startswith("postgresql://"):
        return PostgresDatabase(where)
    return SqliteDatabase(Path(where))


@pytest.fixture()
def db(backend) -> Iterator[Database]:
    database = open_db(backend)
    yield database
    database.close()


# --- sizes, uses and links ---------------------------------------------------------------


def test_sizes_and_the_sources_shares_keep_are_counted(db):
    kept, loose = source_id(), source_id()
    assert db.put_source(kept, "gguf", b"k" * 300, now=1.0)
    assert db.put_source(loose, "hf", b"l" * 200, now=1.0)
    assert not db.put_source(loose, "hf", b"l" * 200, now=2.0)  # stored already
    assert db.put_share(uuid.uuid4().hex[:24], share_state(kept), kept)
    assert db.source_usage() == SourceUsage(count=2, total_bytes=500, pinned_bytes=300)


def test_a_use_is_written_only_when_the_last_one_is_old_and_a_gone_source_says_so(db):
    source = source_id()
    db.put_source(source, "gguf", b"x" * 10, now=100.0)
    assert db.touch_source(source, now=150.0, older_than=50.0)  # exists; 100 is recent
    assert db.expire_sources(unused_before=120.0, limit=10) == [source]  # 150 not written
    assert not db.touch_source(source, now=200.0, older_than=150.0)
    assert not db.source_exists(source) and db.get_source(source) is None


def test_a_use_moves_the_last_use(db):
    source = source_id()
    db.put_source(source, "gguf", b"x", now=100.0)
    assert db.touch_source(source, now=500.0, older_than=400.0)
    assert db.expire_sources(unused_before=499.0, limit=10) == []
    assert db.expire_sources(unused_before=501.0, limit=10) == [source]


def test_storing_a_known_source_again_is_a_use(db):
    source = source_id()
    db.put_source(source, "gguf", b"x", now=100.0)
    db.put_source(source, "gguf", b"x", now=900.0)
    assert db.expire_sources(unused_before=800.0, limit=10) == []


# --- expiry --------------------------------------------------------------------------------


def test_expiry_deletes_unused_sources_but_never_one_a_share_shows(db):
    old, pinned, recent = source_id(), source_id(), source_id()
    for source in (old, pinned):
        db.put_source(source, "gguf", b"o" * 50, now=0.0)
    db.put_source(recent, "gguf", b"r" * 50, now=40 * DAY)
    share, state = uuid.uuid4().hex[:24], share_state(pinned)
    db.put_share(share, state, pinned)
    assert db.expire_sources(unused_before=30 * DAY, limit=10) == [old]
    assert db.get_source(old) is None
    assert db.get_source(pinned).data == b"o" * 50 and db.get_source(recent) is not None
    assert db.expire_sources(unused_before=100 * DAY, limit=10) == [recent]
    assert db.source_usage() == SourceUsage(1, 50, 50)
    assert db.get_share(share) == state


def test_expiry_is_bounded_and_oldest_first(db):
    sources = [source_id() for _ in range(5)]
    for age, source in enumerate(sources):
        db.put_source(source, "gguf", b"x", now=float(age))
    assert db.expire_sources(unused_before=10.0, limit=2) == sources[:2]
    assert sorted(db.expire_sources(unused_before=10.0, limit=10)) == sorted(sources[2:])


def test_a_share_made_before_its_source_is_stored_still_keeps_it(db):
    source = source_id()
    db.put_share(uuid.uuid4().hex[:24], share_state(source), source)
    db.put_source(source, "gguf", b"late", now=0.0)
    assert db.expire_sources(unused_before=DAY, limit=10) == []


# --- the cap ------------------------------------------------------------------------------


def test_a_full_store_deletes_the_least_recently_used_idle_sources(db):
    a, b, c, d = (source_id() for _ in range(4))
    for when, source in ((0.0, a), (10.0, b), (20.0, c)):
        db.put_source(source, "gguf", b"s" * 1000, now=when)
    db.touch_source(a, now=30.0, older_than=30.0)
    room = Room(max_bytes=3500, idle_before=50.0)
    assert db.put_source(d, "gguf", b"d" * 1000, now=100.0, room=room)
    assert db.get_source(b) is None  # the least recently used: last used at 10
    assert all(db.source_exists(s) for s in (a, c, d))
    assert db.source_usage().total_bytes == 3000


def test_sources_that_must_stay_are_never_deleted_and_the_new_one_is_refused(db):
    pinned, recent, idle = source_id(), source_id(), source_id()
    db.put_source(pinned, "gguf", b"p" * 1500, now=0.0)
    db.put_source(idle, "gguf", b"i" * 300, now=0.0)
    db.put_source(recent, "gguf", b"r" * 1000, now=90.0)
    db.put_share(uuid.uuid4().hex[:24], share_state(pinned), pinned)
    room = Room(max_bytes=3000, idle_before=50.0)
    with pytest.raises(StorageFull) as full:
        db.put_source(source_id(), "gguf", b"n" * 1000, now=100.0, room=room)
    assert (full.value.need_bytes, full.value.used_bytes, full.value.max_bytes) == (
        1000,
        2800,
        3000,
    )
    # Deleting the idle one would not have been enough, so it is still there too.
    assert all(db.source_exists(s) for s in (pinned, recent, idle))
    assert db.source_usage().count == 3


def test_a_source_larger_than_the_cap_is_refused(db):
    with pytest.raises(StorageFull):
        db.put_source(source_id(), "gguf", b"x" * 101, now=0.0, room=Room(100, idle_before=1.0))
    assert db.source_usage() == SourceUsage(0, 0, 0)


def test_the_cap_holds_with_many_writers_at_once(backend):
    """Eight connections (as eight processes would) store at once: never over the cap."""
    start = threading.Barrier(8)
    room = Room(max_bytes=20 * 1000, idle_before=-1.0)  # nothing may be deleted

    def writer(_: int) -> tuple[int, int]:
        database = open_db(backend)
        start.wait()
        stored = refused = 0
        for _ in range(5):
            try:
                stored += database.put_source(source_id(), "gguf", b"x" * 1000, room=room)
            except StorageFull:
                refused += 1
        database.close()
        return stored, refused

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(writer, range(8)))
    assert sum(stored for stored, _ in results) == 20
    assert sum(refused for _, refused in results) == 20
    check = open_db(backend)
    assert check.source_usage() == SourceUsage(20, 20 * 1000, 0)
    check.close()


# --- shares: compressed, counted, capped --------------------------------------------------


def long_state(tag: str, messages: int = 2000) -> str:
    turns = ",".join(f'{{"role":"user","content":"Hello {n}, ü!"}}' for n in range(messages))
    return f'{{"messages":[{turns}],"template":"{tag}"}}'


def test_a_share_is_stored_compressed_and_read_back_exactly(db):
    state = long_state("compressed")
    assert db.put_share("d" * 24, state)
    assert db.get_share("d" * 24) == state
    [(stored,)] = raw(db, "SELECT length(packed) FROM shares WHERE id = ?", ("d" * 24,))
    assert stored < len(state.encode()) / 10
    assert db.share_usage() == ShareUsage(count=1, total_bytes=stored)


def test_a_new_share_over_the_cap_is_refused_and_every_stored_one_kept(db):
    first, second = long_state("first"), long_state("second")
    assert db.put_share("e" * 24, first, max_bytes=10_000)
    used = db.share_usage().total_bytes
    with pytest.raises(StorageFull) as full:
        db.put_share("f" * 24, second, max_bytes=used + 10)
    assert (full.value.what, full.value.used_bytes, full.value.max_bytes) == (
        "share",
        used,
        used + 10,
    )
    assert full.value.need_bytes > 10
    assert db.get_share("f" * 24) is None  # nothing of it stored
    assert db.get_share("e" * 24) == first  # and nothing else deleted to make room
    assert db.share_usage() == ShareUsage(count=1, total_bytes=used)
    # A share already stored is stored: never refused, never counted twice.
    assert db.put_share("e" * 24, first, max_bytes=1) is False
    assert db.share_usage() == ShareUsage(count=1, total_bytes=used)


def test_shares_are_counted_even_if_their_count_was_lost(db):
    db.share_usage()  # prepared (migrated) now
    raw(db, "DELETE FROM share_usage")  # by hand, say
    assert db.put_share("a" * 24, long_state("counted again"))  # not refused as full
    assert db.share_usage().count == 1
    with pytest.raises(StorageFull):
        db.put_share("b" * 24, long_state("too big"), max_bytes=10)


def test_the_share_cap_holds_with_many_writers_at_once(backend):
    """Eight connections store shares at once: never over the cap, never miscounted."""
    probe = open_db(backend)
    probe.put_share("0" * 24, long_state("probe"))
    size = probe.share_usage().total_bytes  # what one such share takes, compressed
    probe.close()
    start = threading.Barrier(8)
    cap = size * 21 + size // 2  # room for 20 more

    def writer(n: int) -> tuple[int, int]:
        database = open_db(backend)
        start.wait()
        stored = refused = 0
        for k in range(5):
            try:
                stored += database.put_share(f"{n:012x}{k:012x}", long_state("probe"), None, cap)
            except StorageFull:
                refused += 1
        database.close()
        return stored, refused

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(writer, range(1, 9)))
    assert sum(stored for stored, _ in results) == 20
    assert sum(refused for _, refused in results) == 20
    check = open_db(backend)
    assert check.share_usage() == ShareUsage(21, 21 * size)
    check.close()


# --- rate buckets --------------------------------------------------------------------------


def test_a_bucket_pays_until_empty_then_says_how_full_it_is(db):
    for _ in range(3):
        assert db.take_tokens("a", RULE, now=10.0, requests=1, size=0) is None
    refused = db.take_tokens("a", RULE, now=10.0, requests=1, size=0)
    assert refused == Bucket(requests=0.0, bytes=1000.0, updated_at=10.0)
    # Half a request a second: one more after two seconds, not before.
    assert db.take_tokens("a", RULE, now=11.9, requests=1, size=0) is not None
    assert db.take_tokens("a", RULE, now=12.0, requests=1, size=0) is None
    assert db.take_tokens("b", RULE, now=12.0, requests=1, size=0) is None  # its own


def test_bytes_are_paid_all_or_nothing_and_can_be_given_back(db):
    assert db.take_tokens("c", RULE, now=0.0, requests=0, size=800) is None
    refused = db.take_tokens("c", RULE, now=1.0, requests=1, size=400)
    assert refused == Bucket(requests=3.0, bytes=300.0, updated_at=1.0)  # nothing taken
    db.return_tokens("c", RULE, 800)
    assert db.take_tokens("c", RULE, now=1.0, requests=1, size=1000) is None


def test_full_buckets_are_forgotten_a_few_at_a_time(db):
    for client in ("x", "y", "z"):
        db.take_tokens(client, RULE, now=5.0, requests=1, size=0)
    db.take_tokens("w", RULE, now=50.0, requests=1, size=0)
    assert db.forget_buckets(updated_before=10.0, limit=2) == 2
    assert db.forget_buckets(updated_before=10.0, limit=10) == 1
    assert db.forget_buckets(updated_before=10.0, limit=10) == 0
    # "w" was not forgotten: it still owes its request.
    assert db.take_tokens("w", RULE, now=50.0, requests=3, size=0) is not None


# --- migration -----------------------------------------------------------------------------


def make_old_database(where: str, rows: list[tuple[str, str]], sources: dict[str, bytes]) -> None:
    """A database as the version before this bookkeeping left it."""
    if where.startswith("postgresql://"):
        with psycopg.connect(where, autocommit=True) as old:
            for statement in OLD_POSTGRES_SCHEMA:
                old.execute(statement)
            for share, state in rows:
                old.execute("INSERT INTO shares (id, state) VALUES (%s, %s)", (share, state))
            for source, data in sources.items():
                old.execute(
                    "INSERT INTO sources (id, kind, data) VALUES (%s, 'gguf', %s)", (source, data)
                )
        return
    with sqlite3.connect(where) as old:
        old.execute("PRAGMA journal_mode=WAL")
        for statement in OLD_SQLITE_SCHEMA:
            old.execute(statement)
        old.executemany("INSERT INTO shares VALUES (?, ?, '2024-01-01T00:00:00.000Z')", rows)
        old.executemany(
            "INSERT INTO sources VALUES (?, 'gguf', ?, '2024-01-01T00:00:00.000Z')",
            sources.items(),
        )
    old.close()


def test_a_database_from_the_previous_version_is_migrated_on_first_use(backend):
    kept, loose, nested = source_id(), source_id(), source_id()
    deep = "[" * 3000 + "]" * 3000  # stored before the depth limit: too deep for json
    rows = [
        ("a" * 24, share_state(kept)),
        ("b" * 24, share_state(None)),
        ("c" * 24, f'{{"kwargs":{{"x":{deep}}},"source":{{"file_name":null,"id":"{nested}"}}}}'),
    ]
    rows += [(f"{n:024x}", share_state(None)) for n in range(1200)]  # several batches
    sources = {kept: b"k" * 700, loose: b"l" * 300, nested: b"n" * 100}
    make_old_database(backend, rows, sources)

    db = open_db(backend)
    assert db.get_share("a" * 24) == rows[0][1]  # the old rows read as before
    # They count, uncompressed, towards the shares' cap (in characters: ASCII here).
    old_bytes = sum(len(state) for _, state in rows)
    assert db.share_usage() == ShareUsage(count=len(rows), total_bytes=old_bytes)
    assert db.get_source(kept).data == b"k" * 700
    assert db.source_usage() == SourceUsage(count=3, total_bytes=1100, pinned_bytes=800)
    # Existing sources count as used at the upgrade: a full lifetime from now on.
    assert db.expire_sources(unused_before=0.0, limit=10) == []
    assert db.expire_sources(unused_before=4e9, limit=10) == [loose]
    db.close()

    again = open_db(backend)  # a second start migrates nothing twice
    assert again.source_usage() == SourceUsage(count=2, total_bytes=800, pinned_bytes=800)
    assert migrations(again) == [1, 2]
    again.close()


def test_sources_stored_by_an_older_version_are_counted_when_used(db):
    db.source_usage()  # prepared (migrated) now
    late = source_id()
    # An older replica, still running during an upgrade, stores without bookkeeping.
    raw(db, "INSERT INTO sources (id, kind, data, created_at) VALUES (?, 'gguf', ?, ?)",
        (late, b"z" * 64, "2024-01-01T00:00:00.000Z"))  # fmt: skip
    assert db.source_usage().count == 0
    assert db.touch_source(late, now=10.0, older_than=10.0)
    assert db.source_usage() == SourceUsage(1, 64, 0)


def migrations(db: Database) -> list[int]:
    return [row[0] for row in raw(db, "SELECT version FROM schema_migrations")]


def raw(db: Database, sql: str, params: tuple = ()) -> list[tuple]:
    """A statement outside the interface, as another program would run it."""
    return db._execute(sql, params).rows
