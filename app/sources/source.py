"""A loaded source (a GGUF header or Hugging Face files): what the page and API show of it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from app.sources.gguf import GGUFHeader
from app.sources.gguf_model import source_from_header
from app.sources.hf import HFSource
from app.tokens.vocab import VocabTokenizer


def content_id(data: bytes) -> str:
    """A source's id: the SHA-256 of the bytes it was built from, so replicas agree on it."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class Source:
    """Templates, special tokens and the tokenizer of one model, with its metadata."""

    id: str
    kind: str  # "gguf" or "hf"
    templates: dict[str, str]
    special_tokens: dict[str, str]
    add_bos_token: bool | None
    add_eos_token: bool | None
    tokenizer: VocabTokenizer | None
    metadata: dict[str, Any] = field(default_factory=dict)
    header_bytes: int | None = None
    file_name: str | None = None
    split: dict[str, Any] | None = None

    def tokenizer_info(self) -> dict[str, Any] | None:
        """What the API says about the tokenizer: model, pre, size, and whether it is exact."""
        tok = self.tokenizer
        if tok is None:
            return None
        return {
            "model": tok.model,
            "pre": tok.pre,
            "vocab_size": tok.vocab_size,
            "supported": tok.support.supported,
            "reason": tok.support.reason,
        }

    def to_json(self) -> dict[str, Any]:
        """The API's answer for a loaded source."""
        answer: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "file_name": self.file_name,
            "templates": self.templates,
            "special_tokens": self.special_tokens,
            "add_bos_token": self.add_bos_token,
            "add_eos_token": self.add_eos_token,
            "tokenizer": self.tokenizer_info(),
            "metadata": self.metadata,
        }
        if self.kind == "gguf":
            answer["header_bytes"] = self.header_bytes
            answer["split"] = self.split
        return answer


def source_from_gguf(source_id: str, header: GGUFHeader, file_name: str | None = None) -> Source:
    """A source built from a parsed GGUF header, with its vocabulary's tokenizer."""
    parsed = source_from_header(header, file_name)
    tokenizer = VocabTokenizer.from_gguf_fields(header.fields) if parsed.vocab_size else None
    return Source(
        id=source_id,
        kind="gguf",
        templates=parsed.templates,
        special_tokens=parsed.special_tokens,
        add_bos_token=parsed.add_bos_token,
        add_eos_token=parsed.add_eos_token,
        tokenizer=tokenizer,
        metadata=parsed.metadata,
        header_bytes=header.kv_bytes,
        file_name=file_name,
        split=parsed.split,
    )


def source_from_hf(source_id: str, files: HFSource) -> Source:
    """A source built from Hugging Face tokenizer files."""
    tokenizer = None
    if files.tokenizer_json is not None:
        tokenizer = VocabTokenizer.from_tokenizer_json(files.tokenizer_json, files.tokenizer_config)
    return Source(
        id=source_id,
        kind="hf",
        templates=files.templates,
        special_tokens=files.special_tokens,
        add_bos_token=files.add_bos_token,
        add_eos_token=files.add_eos_token,
        tokenizer=tokenizer,
    )
