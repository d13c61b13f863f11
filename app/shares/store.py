"""Shares kept in the database (SQLite or PostgreSQL), one immutable row per content id.

The store turns states into canonical JSON and ids; the `Database` (see `app.storage`)
only keeps text by id (compressed). Nothing is opened until the first call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from app.shares.state import SHARE_ID, canonical_json, share_id
from app.storage import URL_VARIABLE, Database, open_database
from app.storage.sqlite import DEFAULT_FILE, SqliteDatabase, database_path
from app.untrusted_json import DEFAULT_MAX_DEPTH, loads

__all__ = ["DEFAULT_FILE", "URL_VARIABLE", "ShareStore", "database_path"]


class Keeper(Protocol):
    """Stores a share within limits (`app.quota.ShareKeeper`)."""

    def put(self, share_id: str, state: str, source_id: str | None) -> None:
        """Store `state` under `share_id`, or raise to refuse it."""
        ...


class ShareStore:
    """Immutable shares by content id; safe to share between threads and processes."""

    def __init__(self, database: Database | Path, keeper: Keeper | None = None) -> None:
        # A path is a SQLite file: the short form tests and scripts use.
        self.database = SqliteDatabase(database) if isinstance(database, Path) else database
        #: Stores a new share on behalf of a client, within the service's limits (the
        #: per-client allowance, the shares' total cap: `app.quota`); may refuse it.
        #: Without one, shares are stored without limits (scripts, tests).
        self.keeper = keeper

    @classmethod
    def from_url(cls, url: str, default_folder: Path) -> ShareStore:
        """A store in the database a `DATABASE_URL` names (see `open_database`)."""
        return cls(open_database(url, default_folder))

    def put(self, state: dict[str, Any]) -> str:
        """Store `state` under its content id and return the id.

        Insert-or-ignore: the first row written for an id is kept forever, so a link,
        once handed out, always shows what it showed the first time. The source the state
        shows is linked to the share, which keeps that source stored for as long.
        """
        canonical = canonical_json(state)
        new_id = share_id(canonical)
        if self.keeper is not None:
            self.keeper.put(new_id, canonical, _source_id(state))
        else:
            self.database.put_share(new_id, canonical, _source_id(state))
        return new_id

    def get(self, share_id: str, max_depth: int = DEFAULT_MAX_DEPTH) -> dict[str, Any] | None:
        """The stored state, or None for an unknown or malformed id.

        Read like any visitor's JSON: a state stored before the nesting limit existed, or
        under a looser one, raises `JSONRefused` instead of tripping up what renders it.
        """
        if not SHARE_ID.fullmatch(share_id):
            return None
        text = self.database.get_share(share_id)
        return None if text is None else loads(text, max_depth)

    def exists(self, share_id: str) -> bool:
        """Whether a share with this id is stored (without reading its state)."""
        return bool(SHARE_ID.fullmatch(share_id)) and self.database.share_exists(share_id)


def _source_id(state: dict[str, Any]) -> str | None:
    """The id of the source a state shows (`source.id`), if any."""
    source = state.get("source")
    source_id = source.get("id") if isinstance(source, dict) else None
    return source_id if isinstance(source_id, str) else None
