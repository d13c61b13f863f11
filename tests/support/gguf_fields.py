"""GGUF metadata as the plain dict `app.tokens` takes, read with the reference gguf-py reader."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from gguf import GGUFReader


@cache
def load_fields(path: Path) -> dict[str, Any]:
    """Every metadata key of the GGUF file at `path` -> its decoded value (lists for arrays)."""
    reader = GGUFReader(path)
    return {name: field.contents() for name, field in reader.fields.items()}
