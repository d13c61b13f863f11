"""GGUF metadata as the plain dict `app.tokens` takes, read with the reference gguf-py reader.

gguf-py takes seconds on a 100k-token vocabulary (an object per array item), so each file
is read once per test process, for every module that needs it: the parser's tests compare
against these fields and offsets, the tokenizer's tests build from the fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gguf import GGUFReader


@dataclass(frozen=True)
class GGUFReference:
    """What gguf-py reads in a GGUF file's metadata."""

    #: Every metadata key -> its decoded value (lists for arrays), in file order; the
    #: header's own counts appear as `GGUF.*` keys.
    fields: dict[str, Any]
    #: Where each KV pair starts, in file order.
    kv_offsets: list[int]


@cache
def reference(path: Path) -> GGUFReference:
    reader = GGUFReader(path)
    kvs = [f for name, f in reader.fields.items() if not name.startswith("GGUF.")]
    fields = {name: field.contents() for name, field in reader.fields.items()}
    return GGUFReference(fields, sorted(f.offset for f in kvs))


def load_fields(path: Path) -> dict[str, Any]:
    """Every metadata key of the GGUF file at `path` -> its decoded value (lists for arrays)."""
    return reference(path).fields
