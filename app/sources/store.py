"""Parsed sources kept by content id: a bounded in-memory LRU in front of the database.

Building a tokenizer from a 150k-token vocabulary takes a second, so a source is built
once and kept. What the database keeps is only what it was built from (the GGUF bytes
up to the end of the KV section, or the uploaded files as JSON), so any replica that
shares the database can rebuild a source it has not seen.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from app.sources.gguf import IncompleteHeader, read_header
from app.sources.hf import read_hf_files
from app.sources.source import Source, content_id, source_from_gguf, source_from_hf
from app.storage import Database

_ID = re.compile(r"[0-9a-f]{64}")

#: The `kind` column of the two kinds of stored source.
GGUF, HF = "gguf", "hf"


class Keeper(Protocol):
    """Who stores sources and hears of their uses (`app.quota.SourceKeeper`)."""

    def put(self, source_id: str, kind: str, data: bytes) -> None:
        """Store a source's raw material; may raise to refuse it (a limit)."""
        ...

    def used(self, source_id: str) -> bool:
        """Note a use of a source; False when it is no longer stored."""
        ...


class SourceStore:
    """Sources by id; thread-safe; at most `capacity` kept in memory."""

    def __init__(
        self,
        database: Database,
        capacity: int = 8,
        on_lookup: Callable[[bool], None] | None = None,
        keeper: Keeper | None = None,
    ) -> None:
        self.database = database
        self.capacity = capacity
        #: Told of each in-memory lookup: True for a hit, False for a miss (for metrics).
        self.on_lookup = on_lookup
        #: Stores sources within the storage limits and keeps their last use, so that
        #: unused ones can expire (None: stored directly, kept forever).
        self.keeper = keeper
        self._memory: OrderedDict[str, Source] = OrderedDict()
        self._lock = threading.Lock()

    def load_gguf(self, prefix: bytes, file_name: str | None = None) -> Source | IncompleteHeader:
        """Parse a GGUF prefix; raises `GGUFError` when the bytes are not a GGUF header."""
        header = read_header(prefix, want_tensors=False)
        if isinstance(header, IncompleteHeader):
            return header
        kv_section = prefix[: header.kv_bytes]
        source_id = content_id(kv_section)
        if (known := self._remembered(source_id)) is None:
            return self._keep(source_from_gguf(source_id, header, file_name), GGUF, kv_section)
        self._store_again(known, GGUF, kv_section)
        # The same header under another file name: same source, the name as given now.
        return replace(known, file_name=file_name or known.file_name)

    def load_hf(self, files: dict[str, str]) -> Source:
        """Read Hugging Face files; raises `HFFileError` naming a malformed one."""
        parsed = read_hf_files(files)
        canonical = json.dumps(files, sort_keys=True, ensure_ascii=False).encode()
        source_id = content_id(canonical)
        if (known := self._remembered(source_id)) is None:
            return self._keep(source_from_hf(source_id, parsed), HF, canonical)
        self._store_again(known, HF, canonical)
        return known

    def get(self, source_id: str) -> Source | None:
        """The source with this id, rebuilt from the database if not kept in memory."""
        if not _ID.fullmatch(source_id):
            return None
        if (known := self._remembered(source_id)) is not None:
            if self._used(source_id):
                return known
            # Expired from the database: gone for this process too, as for every replica.
            with self._lock:
                self._memory.pop(source_id, None)
            return None
        return self._rebuild(source_id)

    def _keep(self, source: Source, kind: str, data: bytes) -> Source:
        """Store a newly built source's raw material, then keep the source in memory.

        Built first, so that bytes that do not build are never stored; stored before it
        is remembered, so that a failed write is not hidden by the memory on a retry.
        """
        self._put(source.id, kind, data)
        return self._remember(source)

    def _store_again(self, known: Source, kind: str, data: bytes) -> None:
        """A source loaded again is a use; stored again if it expired meanwhile."""
        if not self._used(known.id):
            self._put(known.id, kind, data)

    def _put(self, source_id: str, kind: str, data: bytes) -> None:
        if self.keeper is None:
            self.database.put_source(source_id, kind, data)
        else:
            self.keeper.put(source_id, kind, data)

    def _used(self, source_id: str) -> bool:
        return self.keeper is None or self.keeper.used(source_id)

    def _rebuild(self, source_id: str) -> Source | None:
        stored = self.database.get_source(source_id)
        if stored is None:
            return None
        self._used(source_id)
        if stored.kind == GGUF:
            header = read_header(stored.data, want_tensors=False)
            if isinstance(header, IncompleteHeader):
                return None
            return self._remember(source_from_gguf(source_id, header))
        if stored.kind == HF:
            files = json.loads(stored.data.decode("utf-8"))
            return self._remember(source_from_hf(source_id, read_hf_files(files)))
        return None

    def _remembered(self, source_id: str) -> Source | None:
        with self._lock:
            source = self._memory.get(source_id)
            if source is not None:
                self._memory.move_to_end(source_id)
        if self.on_lookup is not None:
            self.on_lookup(source is not None)
        return source

    def _remember(self, source: Source) -> Source:
        with self._lock:
            self._memory[source.id] = source
            self._memory.move_to_end(source.id)
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)
        return source
