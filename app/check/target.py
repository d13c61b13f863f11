"""What `./playground check` reads: a template file, a GGUF file, Hugging Face files (a
folder or a `tokenizer_config.json`), or a Hub id, each read as the page reads it.

Files are parsed by the source worker's own `load_source`, in this process: a command
run on the publisher's own files has no visitor to guard against, and the same
`PLAYGROUND_*` source limits apply (the array items, the template size, the JSON depth).
A Hub id is read by `hub.py`, through the page's own Hub client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.sources.gguf import IncompleteHeader
from app.sources.hf import KNOWN_JSON_FILES, canonical_files
from app.sources.limits import SourceLimits
from app.sources.source import Source
from app.sources.worker import Loaded, load_source

#: The first read of a GGUF file; more is read when the header says it goes on.
FIRST_READ = 1 << 20
#: The largest GGUF prefix read (a header holding a 262k-token vocabulary is ~10 MiB).
MAX_GGUF_PREFIX = 1 << 30
GGUF_MAGIC = b"GGUF"


class TargetError(Exception):
    """The target cannot be read: one sentence saying why (exit status 2)."""


@dataclass(frozen=True)
class Target:
    """A template to check, with the source it came from (None: a template file)."""

    name: str
    template: str
    source: Source | None = None

    @property
    def special_tokens(self) -> dict[str, str]:
        """The source's special tokens (none for a template file)."""
        return dict(self.source.special_tokens) if self.source else {}


def read_target(text: str, limits: SourceLimits) -> Target:
    """The target `text` names; raises `TargetError` with a sentence when it cannot."""
    path = Path(text)
    if path.is_dir():
        return from_source(text, _hf_folder(path), limits)
    if path.is_file():
        if _starts_with(path, GGUF_MAGIC):
            return from_source(text, _gguf(path, limits), limits)
        if path.name in KNOWN_JSON_FILES:
            return from_source(text, hf_files({path.name: _text(path)}), limits)
        return Target(text, _text(path))
    if path.exists():
        raise TargetError(f"{text} is neither a file nor a folder.")
    raise TargetError(f"{text} does not exist, and is no Hugging Face Hub id either.")


def _starts_with(path: Path, magic: bytes) -> bool:
    """Whether the file begins with `magic`."""
    with _opened(path) as file:
        return file.read(len(magic)) == magic


def _opened(path: Path) -> BinaryIO:
    """The file opened for reading; TargetError with a sentence when it cannot be."""
    try:
        return path.open("rb")
    except OSError as error:
        raise TargetError(f"{path} cannot be read: {error.strerror}.") from None


def _text(path: Path) -> str:
    """The file as UTF-8 text; TargetError when it is not."""
    with _opened(path) as file:
        data = file.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TargetError(f"{path} is not UTF-8 text (byte {error.start}).") from None


def _hf_folder(path: Path) -> tuple[str, bytes, None]:
    """The Hugging Face files of a folder that the page's upload accepts."""
    names = [*KNOWN_JSON_FILES, "chat_template.jinja"]
    files = {name: _text(path / name) for name in names if (path / name).is_file()}
    extra = path / "additional_chat_templates"
    if extra.is_dir():
        files |= {f"additional_chat_templates/{p.name}": _text(p) for p in extra.glob("*.jinja")}
    if not files:
        raise TargetError(
            f"{path} holds no tokenizer_config.json, chat template or tokenizer.json."
        )
    return hf_files(files)


def hf_files(files: dict[str, str]) -> tuple[str, bytes, None]:
    """Hugging Face files (name -> text) in the form the upload stores and parses."""
    return "hf", canonical_files({k: v.encode("utf-8") for k, v in files.items()}), None


def _gguf(path: Path, limits: SourceLimits) -> tuple[str, bytes, str]:
    """Enough of a GGUF file to hold its header (read again, longer, until it does)."""
    size = FIRST_READ
    while True:
        with _opened(path) as file:
            data = file.read(size)
        answer = load_source("gguf", data, path.name, limits).value
        if not isinstance(answer, IncompleteHeader) or len(data) < size:
            return "gguf", data, path.name
        if size >= MAX_GGUF_PREFIX:
            raise TargetError(f"{path}: its header goes on past {MAX_GGUF_PREFIX >> 20} MiB.")
        size = min(max(size * 4, answer.need_bytes), MAX_GGUF_PREFIX)


def from_source(
    name: str, kind_data: tuple[str, bytes, str | None], limits: SourceLimits
) -> Target:
    """Parse `kind_data` as the upload does and take its default template."""
    kind, data, file_name = kind_data
    answer = load_source(kind, data, file_name, limits).value
    if isinstance(answer, IncompleteHeader):
        raise TargetError(f"{name}: the file ends inside its GGUF header ({answer.message}).")
    if not isinstance(answer, Loaded):
        raise TargetError(f"{name} cannot be read: {answer.message}")
    return target_of_source(name, answer.source)


def target_of_source(name: str, source: Source) -> Target:
    """The source's default template (or its only one) as a target."""
    templates = source.templates
    template = templates.get("default") or next(iter(templates.values()), None)
    if template is None:
        raise TargetError(f"{name} holds no chat template.")
    return Target(name, template, source)
