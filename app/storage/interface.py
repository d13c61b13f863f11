"""The storage interface (`Database`), the rows it returns and the database URL's rules.

Below the package (`app.storage`, which opens a database and hands these out) and both
backends (`sqlite`, `postgres`, through `sql`), which implement it.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
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


class SourceUsage(NamedTuple):
    """What stored sources take: how many, their bytes, and the bytes shares keep."""

    count: int
    total_bytes: int
    pinned_bytes: int


class ShareUsage(NamedTuple):
    """What stored shares take: how many, and their bytes as stored."""

    count: int
    total_bytes: int


@dataclass(frozen=True)
class Room:
    """How much room sources may take, and which may be deleted to make room.

    `max_bytes` caps the total size of stored sources (0: no cap). To make room for a new
    one, sources that no share points at and that nobody used since `idle_before` (a
    time as `time.time()` gives it) may be deleted, least recently used first, at most
    `batch` of them.
    """

    max_bytes: int
    idle_before: float
    batch: int = 100


@dataclass
class StorageFull(Exception):
    """A new source or share (`what`) does not fit under its cap, even after deleting what
    may go (shares never go)."""

    need_bytes: int
    used_bytes: int
    max_bytes: int
    what: str = "source"

    def __str__(self) -> str:
        return (
            f"A new {self.what} of {self.need_bytes:,} bytes does not fit: {self.used_bytes:,}"
            f" of {self.max_bytes:,} bytes are taken by {self.what}s that may not be deleted."
        )


@dataclass(frozen=True)
class BucketRule:
    """Two token buckets per client: requests and stored bytes, each refilling steadily.

    A rate of 0 switches that bucket off (its costs are then ignored).
    """

    requests_per_second: float
    max_requests: float
    bytes_per_second: float
    max_bytes: float


class Bucket(NamedTuple):
    """A client's buckets as stored: tokens left when last updated, and when."""

    requests: float
    bytes: float
    updated_at: float

    def refilled(self, rule: BucketRule, now: float) -> Bucket:
        """The tokens at `now`: refilled at the rule's rates, up to its maxima."""
        elapsed = max(0.0, now - self.updated_at)
        return Bucket(
            min(rule.max_requests, self.requests + elapsed * rule.requests_per_second),
            min(rule.max_bytes, self.bytes + elapsed * rule.bytes_per_second),
            max(self.updated_at, now),
        )


class Database(ABC):
    """Shares, sources and their bookkeeping; safe to use from many threads and processes.

    Times (`now`, `idle_before`, ...) are seconds since the epoch as the caller's clock
    gives them, so that the caller (and a test) decides what time it is.
    """

    @abstractmethod
    def put_share(
        self, share_id: str, state: str, source_id: str | None = None, max_bytes: int = 0
    ) -> bool:
        """Store a share's canonical JSON (compressed) under its id, unless that id is
        already stored, with the id of the source it shows (which is then never deleted).
        True if new. With `max_bytes`, a new share that would take the shares past it is
        refused with `StorageFull` and nothing is stored; shares are never deleted."""

    @abstractmethod
    def get_share(self, share_id: str) -> str | None:
        """The canonical JSON stored under this id, or None."""

    @abstractmethod
    def share_exists(self, share_id: str) -> bool:
        """Whether a share is stored under this id (without reading its state)."""

    @abstractmethod
    def share_usage(self) -> ShareUsage:
        """How many shares are stored and how many bytes they take."""

    @abstractmethod
    def put_source(
        self,
        source_id: str,
        kind: str,
        data: bytes,
        now: float | None = None,
        room: Room | None = None,
    ) -> bool:
        """Store a source's raw material under its id, unless that id is already stored.

        True if it was new; storing it again marks it used at `now` (default: the
        clock). With a `room`, deletes what may go to fit the cap first, or raises
        `StorageFull` (and deletes nothing) when even that is not enough.
        """

    @abstractmethod
    def get_source(self, source_id: str) -> StoredSource | None:
        """The raw material stored under this id, or None."""

    @abstractmethod
    def source_exists(self, source_id: str) -> bool:
        """Whether a source is stored under this id (without reading its bytes)."""

    @abstractmethod
    def touch_source(self, source_id: str, now: float, older_than: float) -> bool:
        """Mark a source used at `now` (only if its mark is older than `older_than`, to
        spare the write); whether the source is still stored."""

    @abstractmethod
    def expire_sources(self, unused_before: float, limit: int) -> list[str]:
        """Delete up to `limit` sources unused since `unused_before` that no share shows."""

    @abstractmethod
    def source_usage(self) -> SourceUsage:
        """How many sources are stored and how many bytes they take."""

    @abstractmethod
    def take_tokens(
        self, client: str, rule: BucketRule, now: float, requests: float, size: float
    ) -> Bucket | None:
        """Take `requests` and `size` tokens from a client's buckets, in one atomic step.

        None when taken; otherwise (nothing taken) the buckets as they stand at `now`.
        A cost must not exceed its bucket's maximum.
        """

    @abstractmethod
    def return_tokens(self, client: str, rule: BucketRule, size: float) -> None:
        """Give back byte tokens taken for a write that did not happen."""

    @abstractmethod
    def forget_buckets(self, updated_before: float, limit: int) -> int:
        """Delete up to `limit` buckets untouched since then (full again: no row is the same)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connections this object opened (the next call opens new ones)."""


def redact(url: str) -> str:
    """The URL with its password replaced by `***`, fit for an error message or a log."""
    return _PASSWORD.sub(r"\1***@", url)
