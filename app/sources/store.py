"""Parsed sources kept by content id: a bounded in-memory LRU in front of files on disk.

Building a tokenizer from a 150k-token vocabulary takes a second, so a source is built
once and kept. What is stored on disk is only what it was built from (the GGUF bytes up
to the end of the KV section, or the uploaded files), so any process that shares the
folder can rebuild a source it has not seen.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

from app.sources.gguf import IncompleteHeader, read_header
from app.sources.hf import read_hf_files
from app.sources.source import Source, content_id, source_from_gguf, source_from_hf

_ID = re.compile(r"[0-9a-f]{64}")


class SourceStore:
    """Sources by id; thread-safe; at most `capacity` kept in memory."""

    def __init__(self, folder: Path, capacity: int = 8) -> None:
        self.folder = folder
        self.capacity = capacity
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
            self._write(f"{source_id}.gguf", kv_section)
            return self._remember(source_from_gguf(source_id, header, file_name))
        # The same header under another file name: same source, the name as given now.
        return replace(known, file_name=file_name or known.file_name)

    def load_hf(self, files: dict[str, str]) -> Source:
        """Read Hugging Face files; raises `HFFileError` naming a malformed one."""
        parsed = read_hf_files(files)
        canonical = json.dumps(files, sort_keys=True, ensure_ascii=False).encode()
        source_id = content_id(canonical)
        if (known := self._remembered(source_id)) is None:
            self._write(f"{source_id}.hf.json", canonical)
            known = self._remember(source_from_hf(source_id, parsed))
        return known

    def get(self, source_id: str) -> Source | None:
        """The source with this id, rebuilt from disk if this process has not kept it."""
        if not _ID.fullmatch(source_id):
            return None
        if (known := self._remembered(source_id)) is not None:
            return known
        return self._rebuild(source_id)

    def _rebuild(self, source_id: str) -> Source | None:
        gguf_path = self.folder / f"{source_id}.gguf"
        hf_path = self.folder / f"{source_id}.hf.json"
        if gguf_path.exists():
            header = read_header(gguf_path.read_bytes(), want_tensors=False)
            if isinstance(header, IncompleteHeader):
                return None
            return self._remember(source_from_gguf(source_id, header))
        if hf_path.exists():
            files = json.loads(hf_path.read_text(encoding="utf-8"))
            return self._remember(source_from_hf(source_id, read_hf_files(files)))
        return None

    def _remembered(self, source_id: str) -> Source | None:
        with self._lock:
            source = self._memory.get(source_id)
            if source is not None:
                self._memory.move_to_end(source_id)
            return source

    def _remember(self, source: Source) -> Source:
        with self._lock:
            self._memory[source.id] = source
            self._memory.move_to_end(source.id)
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)
        return source

    def _write(self, name: str, data: bytes) -> None:
        """Write atomically: a reader never sees half a file."""
        path = self.folder / name
        if path.exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
