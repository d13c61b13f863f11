"""How much anonymous visitors may store, and for how long: the policy, without Flask.

Every write request (a share, a source upload) costs its client one token of a request
bucket, and every byte it stores for the first time one token of a byte bucket. The
buckets live in the database (one atomic upsert per write), so every process and every
replica draws on the same allowance; a process also remembers, for a while, the clients
it has just refused, and refuses them again without asking the database (tokens only
come back with time, so a refusal stays true until the moment it named).

Sources take room in the database until nobody uses them: each one's last use is
written (at most once an hour per process), sources unused for the lifetime are deleted
on later writes, and a new source that does not fit under the cap first makes room by
deleting the least recently used of those idle for two hours. A source that some share
shows is never deleted: the share keeps it. Shares themselves are never deleted: their
total (as stored, compressed) has a cap of its own, past which a new share is refused.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cachetools import TLRUCache

from app.budget import OverLimit
from app.storage import BucketRule, Database, Room, StorageFull

MIB = 1024 * 1024
DAY_SECONDS = 86400.0

LOG = logging.getLogger(__name__)

#: A source's last use is written at most this often (seconds) by one process.
TOUCH_SECONDS = 3600.0

#: Sources used more recently than this are never deleted to make room: a use in any
#: process is written within TOUCH_SECONDS, so this is twice that.
IDLE_GRACE_SECONDS = 2 * TOUCH_SECONDS

#: How often one process looks for expired sources and forgotten buckets (seconds), and
#: how many of each it deletes at a time: bounded work, done on write requests.
MAINTENANCE_SECONDS = 300.0
EXPIRE_BATCH = 100
BUCKET_BATCH = 1000

#: Clients refused recently, and sources marked used recently, that one process
#: remembers (the least recently refused or marked are forgotten first).
REMEMBERED = 4096


@dataclass(frozen=True)
class QuotaSettings:
    """The limits, in the units the code uses; 0 switches a limit off."""

    writes_per_minute: float
    write_bytes_per_minute: float
    write_burst_bytes: int
    source_storage_bytes: int
    source_ttl_seconds: float
    share_storage_bytes: int = 0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> QuotaSettings:
        """The settings of a Flask config (`WRITES_PER_MINUTE`, ...)."""
        for key in ("WRITES_PER_MINUTE", "WRITE_MB_PER_MINUTE", "WRITE_BURST_MB"):
            if float(config[key]) < 0:
                raise ValueError(f"PLAYGROUND_{key} must be 0 (no limit) or more.")
        return cls(
            writes_per_minute=float(config["WRITES_PER_MINUTE"]),
            write_bytes_per_minute=float(config["WRITE_MB_PER_MINUTE"]) * MIB,
            write_burst_bytes=int(float(config["WRITE_BURST_MB"]) * MIB),
            source_storage_bytes=max(0, int(float(config["SOURCE_STORAGE_MB"]) * MIB)),
            source_ttl_seconds=max(0.0, float(config["SOURCE_TTL_DAYS"]) * DAY_SECONDS),
            share_storage_bytes=max(0, int(float(config["SHARE_STORAGE_MB"]) * MIB)),
        )

    def rule(self) -> BucketRule:
        """The token buckets: a minute's worth of requests, `write_burst_bytes` of bytes."""
        requests = self.writes_per_minute
        stored = self.write_bytes_per_minute
        return BucketRule(
            requests_per_second=requests / 60,
            max_requests=max(1.0, requests) if requests else 0.0,
            bytes_per_second=stored / 60,
            max_bytes=float(self.write_burst_bytes) if stored else 0.0,
        )


class Quota:
    """The write allowances and the source store's bounds for one process."""

    def __init__(
        self,
        database: Database,
        settings: QuotaSettings,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.database = database
        self.settings = settings
        self.rule = settings.rule()
        #: What time it is (seconds since the epoch); tests set their own.
        self.clock = clock
        #: Refused clients, until the time their refusal names.
        self._refused = self._memory()
        #: Sources marked used, until their next use is to be written again.
        self._touched = self._memory()
        self._lock = threading.Lock()  # cachetools caches are not thread-safe
        self._maintained = -math.inf

    # --- per-client allowances ------------------------------------------------------------

    def admit(self, client: str) -> None:
        """Take one write from the client's allowance; `OverLimit` (429) when it has none."""
        if not self.settings.writes_per_minute:
            return
        now = self.clock()
        with self._lock:
            until = self._refused.get(client)
        if until is not None:
            raise self._too_many_writes(until - now)
        refused = self.database.take_tokens(client, self.rule, now, requests=1, size=0)
        if refused is not None:
            wait = _wait(refused.requests, 1, self.rule.requests_per_second)
            with self._lock:
                self._refused[client] = now + wait
            raise self._too_many_writes(wait)

    def charge(self, client: str | None, size: int) -> None:
        """Take `size` stored bytes from the client's allowance; 429 when it has too few,
        413 when no allowance could ever hold that many. No client: a trusted caller."""
        if client is None or not self.settings.write_bytes_per_minute or size <= 0:
            return
        burst = self.settings.write_burst_bytes
        if size > burst:
            message = (
                f"This would store {size:,} bytes; one client may store at most {burst:,} at"
                " once (PLAYGROUND_WRITE_BURST_MB)."
            )
            fields = {"size_bytes": size, "max_bytes": burst}
            raise OverLimit("write_burst_mb", message, 413, "PayloadTooLarge", fields)
        now = self.clock()
        refused = self.database.take_tokens(client, self.rule, now, requests=0, size=size)
        if refused is not None:
            raise self._too_many_bytes(size, _wait(refused.bytes, size, self.rule.bytes_per_second))

    def refund(self, client: str | None, size: int) -> None:
        """Give back bytes charged for something that was not stored after all."""
        if client is not None and self.settings.write_bytes_per_minute and size > 0:
            self.database.return_tokens(client, self.rule, size)

    # --- shares ----------------------------------------------------------------------------

    def keep_share(
        self, client: str | None, share_id: str, state: str, source_id: str | None
    ) -> None:
        """Store a share for a client: charged (its text's bytes) only when new, refused
        with 507 when the shares' total would pass their cap (and then not charged).
        Shares are never deleted, so a full store stays full until the operator acts."""
        if self.database.share_exists(share_id):
            return
        size = len(state.encode("utf-8"))
        self.charge(client, size)
        cap = self.settings.share_storage_bytes
        try:
            new = self.database.put_share(share_id, state, source_id, cap)
        except StorageFull as full:
            self.refund(client, size)
            raise self._shares_full(full) from None
        except BaseException:
            self.refund(client, size)
            raise
        if not new:  # another process stored it in between
            self.refund(client, size)

    # --- sources ---------------------------------------------------------------------------

    def keep_source(self, client: str | None, source_id: str, kind: str, data: bytes) -> None:
        """Store a source for a client: charged only when new, refused with 507 when
        storage is full of sources that must stay (and then not charged)."""
        now = self.clock()
        if self.database.touch_source(source_id, now, now - TOUCH_SECONDS):
            self._touch(source_id, now)  # stored already: a use
            return
        self.charge(client, len(data))
        try:
            new = self.database.put_source(source_id, kind, data, now, self._room(now))
        except StorageFull as full:
            self.refund(client, len(data))
            raise self._storage_full(full) from None
        except BaseException:
            self.refund(client, len(data))
            raise
        if not new:  # another process stored it in between
            self.refund(client, len(data))
        self._touch(source_id, now)

    def used(self, source_id: str) -> bool:
        """Note a use of a source (written at most once per TOUCH_SECONDS by this process);
        False when the database no longer has it."""
        now = self.clock()
        with self._lock:
            if source_id in self._touched:  # `in` does not reorder: written order is kept
                return True
        try:
            alive = self.database.touch_source(source_id, now, now - TOUCH_SECONDS)
        except Exception:
            # Bookkeeping must not break a read: a database that is down is asked again
            # an hour later, not on every use (each could wait for a connect timeout).
            LOG.exception("Could not mark source %s used", source_id)
            alive = True
        if alive:
            self._touch(source_id, now)
            return True
        with self._lock:
            self._touched.pop(source_id, None)
        return False

    def maintain(self) -> None:
        """Delete expired sources and full buckets, a batch at a time, every few minutes."""
        now = self.clock()
        with self._lock:
            if now - self._maintained < MAINTENANCE_SECONDS:
                return
            self._maintained = now
        if self.settings.source_ttl_seconds:
            self.database.expire_sources(now - self.settings.source_ttl_seconds, EXPIRE_BATCH)
        refill = _refill_seconds(self.rule)
        if refill:
            # A bucket untouched that long is full again: no row means the same.
            self.database.forget_buckets(now - refill, BUCKET_BATCH)

    def _room(self, now: float) -> Room | None:
        """What a new source may displace: sources idle for the grace (or expired)."""
        if not self.settings.source_storage_bytes:
            return None
        idle = IDLE_GRACE_SECONDS
        if self.settings.source_ttl_seconds:
            idle = min(idle, self.settings.source_ttl_seconds)
        return Room(self.settings.source_storage_bytes, idle_before=now - idle)

    def _memory(self) -> TLRUCache[str, float]:
        """Keys each remembered until the time its value names, by this quota's clock
        (looked up on each use: tests replace it), at most REMEMBERED of them."""
        return TLRUCache(
            maxsize=REMEMBERED, ttu=lambda _key, until, _now: until, timer=lambda: self.clock()
        )

    def _touch(self, source_id: str, now: float) -> None:
        """Remember a use written at `now`: the next is written TOUCH_SECONDS later."""
        with self._lock:
            self._touched[source_id] = now + TOUCH_SECONDS

    # --- errors ------------------------------------------------------------------------------

    def _too_many_writes(self, wait: float) -> OverLimit:
        seconds = _retry_after(wait)
        message = (
            f"Too many shares and uploads from your address: {self.settings.writes_per_minute:g}"
            f" a minute are allowed. Try again in {seconds} s."
        )
        return _rate_limited("writes_per_minute", message, seconds)

    def _too_many_bytes(self, size: int, wait: float) -> OverLimit:
        seconds = _retry_after(wait)
        per_minute = self.settings.write_bytes_per_minute / MIB
        burst = self.settings.write_burst_bytes / MIB
        message = (
            f"Your address has stored too much: {per_minute:g} MiB a minute (at most"
            f" {burst:g} MiB at once) may be stored, and this needs {size:,} bytes."
            f" Try again in {seconds} s."
        )
        return _rate_limited("write_mb_per_minute", message, seconds)

    def _storage_full(self, full: StorageFull) -> OverLimit:
        grace_hours = IDLE_GRACE_SECONDS / 3600
        message = (
            f"Source storage is full: {full.used_bytes / MIB:,.1f} of {full.max_bytes / MIB:,.0f}"
            f" MiB are taken by sources that shares keep or that were used in the last"
            f" {grace_hours:g} hours, and this source needs {full.need_bytes / MIB:,.1f} MiB."
            " Try again later; the operator can raise PLAYGROUND_SOURCE_STORAGE_MB."
        )
        return _full("source_storage_mb", message, full)

    def _shares_full(self, full: StorageFull) -> OverLimit:
        message = (
            f"Share storage is full: {full.used_bytes / MIB:,.1f} of {full.max_bytes / MIB:,.1f}"
            f" MiB are taken by shares, which are kept forever, and this one needs"
            f" {full.need_bytes:,} bytes (compressed). Every share made so far still opens;"
            " the operator can raise PLAYGROUND_SHARE_STORAGE_MB."
        )
        return _full("share_storage_mb", message, full)


class ShareKeeper:
    """What the share store calls to store a share, on behalf of the client that
    `client()` names (None outside a request: not charged)."""

    def __init__(self, quota: Quota, client: Callable[[], str | None]) -> None:
        self.quota = quota
        self.client = client

    def put(self, share_id: str, state: str, source_id: str | None) -> None:
        """Store a share's canonical text (see `Quota.keep_share`)."""
        self.quota.keep_share(self.client(), share_id, state, source_id)


class SourceKeeper:
    """What the source store calls to store a source and to say one was used, on behalf
    of the client that `client()` names (None outside a request: not charged)."""

    def __init__(self, quota: Quota, client: Callable[[], str | None]) -> None:
        self.quota = quota
        self.client = client

    def put(self, source_id: str, kind: str, data: bytes) -> None:
        """Store a source's raw material (see `Quota.keep_source`)."""
        self.quota.keep_source(self.client(), source_id, kind, data)

    def used(self, source_id: str) -> bool:
        """Note a use; False when the source is no longer stored."""
        return self.quota.used(source_id)


def _wait(have: float, need: float, rate: float) -> float:
    """Seconds until a bucket refilling at `rate` holds `need` tokens."""
    return max(0.0, need - have) / rate if rate else 0.0


def _retry_after(wait: float) -> int:
    """Whole seconds for `Retry-After`: never less than the wait, at least one."""
    return max(1, math.ceil(wait))


def _refill_seconds(rule: BucketRule) -> float:
    """How long an empty bucket takes to fill again (0: no bucket)."""
    times = [
        size / rate
        for size, rate in (
            (rule.max_requests, rule.requests_per_second),
            (rule.max_bytes, rule.bytes_per_second),
        )
        if rate
    ]
    return max(times, default=0.0)


def _full(limit: str, message: str, full: StorageFull) -> OverLimit:
    """The 507 of a store whose cap `full` says is reached."""
    fields = {"need_bytes": full.need_bytes, "used_bytes": full.used_bytes,
              "max_bytes": full.max_bytes}  # fmt: skip
    return OverLimit(limit, message, 507, "StorageFull", fields)


def _rate_limited(limit: str, message: str, seconds: int) -> OverLimit:
    headers = {"Retry-After": str(seconds)}
    return OverLimit(limit, message, 429, "RateLimited", {"retry_after": seconds}, headers)
