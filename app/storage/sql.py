"""The statements both backends share: one implementation of `Database` over plain SQL.

A backend supplies how to run one statement, how to run a function inside a transaction
that holds the sources lock, and its names for two-argument minimum and maximum. The
statements use `?` and `:name` placeholders (PostgreSQL's driver converts them), and
only SQL that SQLite and PostgreSQL both accept (`ON CONFLICT`, `RETURNING`).
"""

from __future__ import annotations

import time
import zlib
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from app.storage.interface import (
    Bucket,
    BucketRule,
    Database,
    Room,
    ShareUsage,
    SourceUsage,
    StorageFull,
    StoredSource,
)
from app.storage.schema import Result, Transaction

T = TypeVar("T")

#: How far short of a cost a bucket may be and still pay it, in seconds of refill: the
#: rounding of times as floats (about 0.2 microseconds in this century), with margin.
CLOCK_SLACK_SECONDS = 0.001

_UNPINNED = "NOT EXISTS (SELECT 1 FROM share_sources p WHERE p.source_id = u.id)"

_INSERT_SHARE = (
    "INSERT INTO shares (id, state, packed, created_at) VALUES (?, '', ?, {now})"
    " ON CONFLICT (id) DO NOTHING"
)
#: One more share of `:size` bytes, unless the total would pass `:cap` (0: no cap). An
#: upsert, so that a lost count row starts again rather than refuse every share.
_COUNT_SHARE = """
    INSERT INTO share_usage (id, count, size_bytes)
    SELECT 1, 1, :size WHERE :cap = 0 OR :size <= :cap
    ON CONFLICT (id) DO UPDATE SET
        count = share_usage.count + 1,
        size_bytes = share_usage.size_bytes + excluded.size_bytes
    WHERE :cap = 0 OR share_usage.size_bytes + excluded.size_bytes <= :cap
"""

_SHARE_USAGE = "SELECT count, size_bytes FROM share_usage WHERE id = 1"


def _share_usage(rows: list[tuple]) -> ShareUsage:
    return ShareUsage(*(int(value) for value in rows[0])) if rows else ShareUsage(0, 0)


#: zlib's level for shares: states are JSON text, which it shrinks five to twenty times;
#: higher levels gain little and cost more time.
_ZLIB_LEVEL = 6


def pack_text(text: str) -> bytes:
    """A share's canonical text as stored: UTF-8, zlib-compressed."""
    return zlib.compress(text.encode("utf-8"), _ZLIB_LEVEL)


def unpack_text(packed: bytes) -> str:
    """The text `pack_text` stored."""
    return zlib.decompress(packed).decode("utf-8")


_CANDIDATES = f"""
    SELECT id, size_bytes FROM source_usage u
    WHERE last_used < ? AND {_UNPINNED}
    ORDER BY last_used, id LIMIT ?
"""

# Adopts a source without bookkeeping (stored by an older version) as it marks it used.
_TOUCH = """
    INSERT INTO source_usage (id, size_bytes, last_used)
    SELECT id, length(data), ? FROM sources WHERE id = ?
    ON CONFLICT (id) DO UPDATE SET last_used = excluded.last_used
    WHERE source_usage.last_used < ?
"""


class SqlDatabase(Database):
    """`Database` for a backend that runs statements and transactions."""

    #: The backend's two-argument minimum and maximum (SQLite: MIN/MAX, PostgreSQL:
    #: LEAST/GREATEST).
    least = "MIN"
    greatest = "MAX"
    #: The backend's SQL for the current time as `created_at` holds it.
    now_sql = "now()"

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Result:
        """Run one statement on its own (autocommit)."""

    @abstractmethod
    def _atomically(self, work: Callable[[Transaction], T], exclusive: bool = True) -> T:
        """Run `work` in one transaction holding the sources lock (shared or exclusive);
        an exception rolls it back. `work` may run twice after a dropped connection."""

    # --- shares -----------------------------------------------------------------------

    def put_share(
        self, share_id: str, state: str, source_id: str | None = None, max_bytes: int = 0
    ) -> bool:
        packed = pack_text(state)

        def work(tx: Transaction) -> bool:
            new = tx.execute(_INSERT_SHARE.format(now=self.now_sql), (share_id, packed)).rowcount
            if new:
                # The count and the cap in the same statement: concurrent writers each see
                # the total the one before them left (a row lock, or SQLite's one writer).
                size = len(packed)
                if not tx.execute(_COUNT_SHARE, {"size": size, "cap": max_bytes}).rowcount:
                    used = _share_usage(tx.execute(_SHARE_USAGE).rows).total_bytes
                    raise StorageFull(size, used, max_bytes, what="share")  # rolls back
            if source_id is not None:
                # The link in the same transaction: a share never exists without it. The
                # lock (shared) waits for a deletion that may have just chosen this source.
                tx.execute(
                    "INSERT INTO share_sources (share_id, source_id) VALUES (?, ?)"
                    " ON CONFLICT (share_id) DO NOTHING",
                    (share_id, source_id),
                )
            return bool(new)

        return self._atomically(work, exclusive=False)

    def get_share(self, share_id: str) -> str | None:
        rows = self._execute("SELECT state, packed FROM shares WHERE id = ?", (share_id,)).rows
        if not rows:
            return None
        state, packed = rows[0]
        return state if packed is None else unpack_text(bytes(packed))

    def share_exists(self, share_id: str) -> bool:
        return bool(self._execute("SELECT 1 FROM shares WHERE id = ?", (share_id,)).rows)

    def share_usage(self) -> ShareUsage:
        return _share_usage(self._execute(_SHARE_USAGE).rows)

    # --- sources ----------------------------------------------------------------------

    def put_source(
        self,
        source_id: str,
        kind: str,
        data: bytes,
        now: float | None = None,
        room: Room | None = None,
    ) -> bool:
        when = time.time() if now is None else now

        def work(tx: Transaction) -> bool:
            if tx.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).rows:
                tx.execute(_TOUCH, (when, source_id, when))  # loaded again: a use
                return False
            if room is not None and room.max_bytes > 0:
                self._make_room(tx, len(data), room)
            tx.execute(
                "INSERT INTO sources (id, kind, data, created_at)"
                f" VALUES (?, ?, ?, {self.now_sql}) ON CONFLICT (id) DO NOTHING",
                (source_id, kind, data),
            )
            tx.execute(
                "INSERT INTO source_usage (id, size_bytes, last_used) VALUES (?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET last_used = excluded.last_used",
                (source_id, len(data), when),
            )
            return True

        # Exclusive: the total is summed and compared with the cap by one writer at a time.
        return self._atomically(work)

    def get_source(self, source_id: str) -> StoredSource | None:
        rows = self._execute("SELECT kind, data FROM sources WHERE id = ?", (source_id,)).rows
        return StoredSource(rows[0][0], bytes(rows[0][1])) if rows else None

    def source_exists(self, source_id: str) -> bool:
        return bool(self._execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).rows)

    def touch_source(self, source_id: str, now: float, older_than: float) -> bool:
        if self._execute(_TOUCH, (now, source_id, older_than)).rowcount:
            return True
        return self.source_exists(source_id)  # marked recently, or gone

    def expire_sources(self, unused_before: float, limit: int) -> list[str]:
        def work(tx: Transaction) -> list[str]:
            chosen = tx.execute(_CANDIDATES, (unused_before, limit)).rows
            return self._delete_sources(tx, [row[0] for row in chosen], unused_before)

        return self._atomically(work)

    def source_usage(self) -> SourceUsage:
        row = self._execute(
            "SELECT COUNT(*), COALESCE(SUM(size_bytes), 0),"
            f" COALESCE(SUM(CASE WHEN {_UNPINNED} THEN 0 ELSE size_bytes END), 0)"
            " FROM source_usage u"
        ).rows[0]
        return SourceUsage(*(int(value) for value in row))

    def _make_room(self, tx: Transaction, need: int, room: Room) -> None:
        """Delete the least recently used deletable sources until `need` bytes fit."""
        used = int(tx.execute("SELECT COALESCE(SUM(size_bytes), 0) FROM source_usage").rows[0][0])
        over = used + need - room.max_bytes
        if over <= 0:
            return
        chosen, freed = [], 0
        for source_id, size in tx.execute(_CANDIDATES, (room.idle_before, room.batch)).rows:
            if freed >= over:
                break
            chosen.append(source_id)
            freed += int(size)
        if freed >= over:
            deleted = self._delete_sources(tx, chosen, room.idle_before)
            if len(deleted) == len(chosen):
                return
        # Nothing is deleted for a source that would not fit anyway: the caller's exception
        # rolls the transaction back.
        raise StorageFull(need_bytes=need, used_bytes=used, max_bytes=room.max_bytes)

    def _delete_sources(self, tx: Transaction, ids: list[str], unused_before: float) -> list[str]:
        """Delete these sources if still unused since then (a use may have come between)."""
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        deleted = tx.execute(
            f"DELETE FROM source_usage WHERE id IN ({marks}) AND last_used < ? RETURNING id",
            (*ids, unused_before),
        ).rows
        gone = [row[0] for row in deleted]
        if gone:
            tx.execute(f"DELETE FROM sources WHERE id IN ({', '.join('?' * len(gone))})", gone)
        return gone

    # --- rate buckets -------------------------------------------------------------------

    def take_tokens(
        self, client: str, rule: BucketRule, now: float, requests: float, size: float
    ) -> Bucket | None:
        params = {
            "client": client,
            "now": float(now),
            "requests": float(requests),
            "size": float(size),
            "first_requests": rule.max_requests - requests,
            "first_bytes": rule.max_bytes - size,
            "max_requests": float(rule.max_requests),
            "max_bytes": float(rule.max_bytes),
            "requests_rate": float(rule.requests_per_second),
            "bytes_rate": float(rule.bytes_per_second),
            "requests_slack": rule.requests_per_second * CLOCK_SLACK_SECONDS,
            "bytes_slack": rule.bytes_per_second * CLOCK_SLACK_SECONDS,
        }
        if self._execute(self._take_sql(), params).rowcount:
            return None
        rows = self._execute(
            "SELECT requests, bytes, updated_at FROM rate_buckets WHERE client = ?", (client,)
        ).rows
        if not rows:  # forgotten in between: full again
            return Bucket(rule.max_requests, rule.max_bytes, now)
        return Bucket(*(float(value) for value in rows[0])).refilled(rule, now)

    def return_tokens(self, client: str, rule: BucketRule, size: float) -> None:
        self._execute(
            f"UPDATE rate_buckets SET bytes = {self.least}(?, bytes + ?) WHERE client = ?",
            (float(rule.max_bytes), float(size), client),
        )

    def forget_buckets(self, updated_before: float, limit: int) -> int:
        return self._execute(
            "DELETE FROM rate_buckets WHERE client IN"
            " (SELECT client FROM rate_buckets WHERE updated_at < ? LIMIT ?)",
            (updated_before, limit),
        ).rowcount

    def _take_sql(self) -> str:
        """The atomic take: refill both buckets, then pay both costs or change nothing."""

        def refilled(column: str) -> str:
            return (
                f"{self.least}(:max_{column}, rate_buckets.{column}"
                f" + {self.greatest}(0, :now - rate_buckets.updated_at) * :{column}_rate)"
            )

        requests, stored = refilled("requests"), refilled("bytes")
        return f"""
            INSERT INTO rate_buckets (client, requests, bytes, updated_at)
            VALUES (:client, :first_requests, :first_bytes, :now)
            ON CONFLICT (client) DO UPDATE SET
                requests = {requests} - :requests,
                bytes = {stored} - :size,
                updated_at = {self.greatest}(rate_buckets.updated_at, :now)
            WHERE {requests} + :requests_slack >= :requests
              AND {stored} + :bytes_slack >= :size
        """
