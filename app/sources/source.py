"""A loaded source (a GGUF header or Hugging Face files): what the page and API show of it.

A `Source` is a plain summary: its tokenizer is only described here (`TokenizerInfo`).
The tokenizer itself is built and kept in a source worker (`worker.py`), because
building and running a vocabulary a visitor uploaded costs time and memory that only a
bounded process may spend.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field, is_dataclass
from typing import Any

from app.errors import bounded_text
from app.sources.gguf_model import GGUFSource
from app.sources.hf import HFSource
from app.sources.limits import SourceLimits
from app.sources.modelfile import OllamaModel

MiB = 1 << 20


def content_id(data: bytes) -> str:
    """A source's id: the SHA-256 of the bytes it was built from, so replicas agree on it."""
    return hashlib.sha256(data).hexdigest()


#: Where a source's tokenizer is: built after the source is answered (see `store.py`).
BUILDING, READY, FAILED = "building", "ready", "failed"


@dataclass(frozen=True)
class TokenizerInfo:
    """What is known of a source's tokenizer: from the header or files at first, then
    from building it (`state`: `building`, then `ready` or `failed`).

    `supported` is None while it is building: whether the vocabulary is reproduced
    exactly is known once it is built.
    """

    model: str
    pre: str | None
    vocab_size: int
    supported: bool | None
    reason: str | None
    #: The ids checks need (is the end-of-turn marker an end-of-generation token?).
    bos_id: int | None = None
    eos_id: int | None = None
    #: The limit building it ran into, when that is why it is not supported.
    limit: str | None = None
    state: str = READY

    def __post_init__(self) -> None:
        # A reason may quote the vocabulary (a merge of 200,000 characters): it is cut
        # where it is made, in the source worker.
        if self.reason is not None:
            object.__setattr__(self, "reason", bounded_text(self.reason, "unsupported"))

    def to_json(self) -> dict[str, Any]:
        """What the API says about the tokenizer: model, pre, size, whether it is exact,
        and whether it is built yet."""
        return {
            "state": self.state,
            "model": self.model,
            "pre": self.pre,
            "vocab_size": self.vocab_size,
            "supported": self.supported,
            "reason": self.reason,
            "limit": self.limit,
        }


@dataclass
class Source:
    """Templates, special tokens and a description of the tokenizer of one model."""

    id: str
    kind: str  # "gguf", "hf", "modelfile" or "ollama" (`ollama_source.py`)
    templates: dict[str, str]
    special_tokens: dict[str, str]
    add_bos_token: bool | None
    add_eos_token: bool | None
    tokenizer: TokenizerInfo | None
    metadata: dict[str, Any] = field(default_factory=dict)
    header_bytes: int | None = None
    file_name: str | None = None
    split: dict[str, Any] | None = None
    #: Templates too large to render (over `PLAYGROUND_TEMPLATE_KB`): name -> bytes. They
    #: are left out of `templates`, so a hostile header cannot make every answer huge.
    oversized_templates: dict[str, int] = field(default_factory=dict)
    #: `tokenizer_config.json`'s `response_template` as JSON text (`response_template.py`):
    #: how transformers' `parse_response` reads the model's answers (Hugging Face files
    #: only). Text, parsed only in the sandbox that reads an answer.
    response_template: str | None = None
    #: The language of `templates`: "jinja", or "go" for an Ollama source's Go template.
    template_kind: str = "jinja"
    #: An Ollama source's stop parameters, system message, renderer and parser names.
    ollama: OllamaModel | None = None

    @property
    def can_tokenize(self) -> bool:
        """Whether the source has a vocabulary reproduced exactly (or still building:
        tokenizing waits for it)."""
        return self.tokenizer is not None and self.tokenizer.supported is not False

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
            "tokenizer": self.tokenizer.to_json() if self.tokenizer else None,
            "metadata": self.metadata,
            "oversized_templates": self.oversized_templates,
            "template_kind": self.template_kind,
        }
        if self.ollama is not None:
            answer["ollama"] = self.ollama.to_json()
        if self.kind == "gguf":
            answer["header_bytes"] = self.header_bytes
            answer["split"] = self.split
        return answer


def fitting(templates: dict[str, str], max_bytes: int) -> tuple[dict[str, str], dict[str, int]]:
    """The templates that fit in `max_bytes`, and the bytes of those that do not."""
    kept, oversized = {}, {}
    for name, text in templates.items():
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            oversized[name] = size
        else:
            kept[name] = text
    return kept, oversized


def source_from_gguf(
    source_id: str,
    parsed: GGUFSource,
    tokenizer: TokenizerInfo | None,
    header_bytes: int,
    file_name: str | None,
    template_bytes: int,
) -> Source:
    """The summary of a parsed GGUF header."""
    templates, oversized = fitting(parsed.templates, template_bytes)
    return Source(
        id=source_id,
        kind="gguf",
        templates=templates,
        special_tokens=parsed.special_tokens,
        add_bos_token=parsed.add_bos_token,
        add_eos_token=parsed.add_eos_token,
        tokenizer=tokenizer,
        metadata=parsed.metadata,
        header_bytes=header_bytes,
        file_name=file_name,
        split=parsed.split,
        oversized_templates=oversized,
    )


def source_from_hf(
    source_id: str,
    files: HFSource,
    tokenizer: TokenizerInfo | None,
    template_bytes: int,
    response_template: str | None = None,
) -> Source:
    """The summary of Hugging Face tokenizer files (`response_template`: the config's, as
    kept: `response_template.kept_response_template`)."""
    templates, oversized = fitting(files.templates, template_bytes)
    return Source(
        id=source_id,
        kind="hf",
        templates=templates,
        special_tokens=files.special_tokens,
        add_bos_token=files.add_bos_token,
        add_eos_token=files.add_eos_token,
        tokenizer=tokenizer,
        metadata=_hf_metadata(files.tokenizer_config),
        oversized_templates=oversized,
        response_template=response_template,
    )


def _hf_metadata(config: dict[str, Any]) -> dict[str, Any]:
    """The model's name, when the tokenizer config says it (`name_or_path`, which older
    versions of transformers wrote on saving): the page names the loaded model."""
    name = config.get("name_or_path")
    return {"name": name[:200]} if isinstance(name, str) and name.strip() else {}


def summary_bytes(source: Source) -> int:
    """The bytes a summary takes in the web process, as Python holds it: every object it
    reaches (strings, dicts, lists, the dataclasses). Counting the characters alone missed
    the rest: a hundred thousand one-letter special tokens take 10 MB. A string shared by
    two places counts twice, so this errs on the large side; it sizes the children of a
    container in one `map`, since the web process measures each summary it keeps."""
    total, pending = 0, [source]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            children = [*value.keys(), *value.values()]
        elif isinstance(value, list | tuple):
            children = list(value)
        elif is_dataclass(value):
            children = [value.__dict__]
            total += sys.getsizeof(value)
        else:
            continue
        total += sum(map(sys.getsizeof, children))
        pending += [child for child in children if type(child) not in _LEAVES]
    return total


#: Values without parts of their own to count.
_LEAVES = frozenset({str, int, float, bool, type(None)})


#: What a summary's tokenizer description adds at most (its texts are cut where made).
TOKENIZER_INFO_BYTES = 4096


def summary_over(source: Source, limits: SourceLimits) -> str | None:
    """Why the web process may not keep this source (its summary is over the bound),
    measured in the source worker, so that it never reaches the web process; None when
    it fits."""
    held = summary_bytes(source) + TOKENIZER_INFO_BYTES
    if held <= limits.summary_bytes:
        return None
    return (
        "this source's summary (its templates, special tokens, response template and"
        f" names) would take {held / MiB:,.1f} MiB in the web process; the limit is"
        f" {limits.summary_bytes / MiB:g} MiB (PLAYGROUND_SOURCE_SUMMARY_MB)"
    )


def largest_kept_file(files: dict[str, str]) -> str:
    """The file that most likely made a summary too large: the largest one a summary
    keeps something of (tokenizer.json gives it only a description)."""
    kept = [name for name in files if not name.endswith("tokenizer.json")] or list(files)
    return max(kept, key=lambda name: len(files[name]))
