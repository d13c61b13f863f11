"""The template library: well-known chat templates with notes, listed in a manifest."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The library shipped beside the application code.
DEFAULT_LIBRARY = Path(__file__).resolve().parents[2] / "templates_lib"


@dataclass(frozen=True)
class LibraryEntry:
    """One template of the library and what is worth knowing about it."""

    name: str
    title: str
    family: str
    file: str
    upstream: str | None
    end_of_turn: tuple[str, ...]
    stop_token: str | None
    llama_cpp_builtin: str | None
    notes: tuple[str, ...]
    #: The model's special tokens as its tokenizer names them (`bos_token`, `eos_token`,
    #: ...), in the manifest's order: what the template gets when no vocabulary is loaded.
    special_tokens: tuple[tuple[str, str], ...] = ()

    @property
    def tokens(self) -> dict[str, str]:
        """The special tokens as the `special_tokens` of a state."""
        return dict(self.special_tokens)

    def to_json(self) -> dict[str, Any]:
        """The API's description of the entry (without the template text)."""
        return {
            "name": self.name,
            "title": self.title,
            "family": self.family,
            "upstream": self.upstream,
            "end_of_turn": list(self.end_of_turn),
            "stop_token": self.stop_token,
            "llama_cpp_builtin": self.llama_cpp_builtin,
            "special_tokens": self.tokens,
            "notes": list(self.notes),
        }


class Library:
    """Entries read from `manifest.json` in a folder; template files read on demand."""

    def __init__(self, folder: Path = DEFAULT_LIBRARY) -> None:
        self.folder = folder

    @property
    def entries(self) -> list[LibraryEntry]:
        return list(_read_manifest(self.folder))

    def entry(self, name: str) -> LibraryEntry | None:
        return next((e for e in self.entries if e.name == name), None)

    def template(self, name: str) -> str | None:
        """The Jinja source of an entry, or None for an unknown name."""
        entry = self.entry(name)
        if entry is None:
            return None
        return _read_template(self.folder / entry.file)

    def matching(self, text: str) -> LibraryEntry | None:
        """The first entry whose template is exactly `text`, if any (an uploaded
        template that is a library one gets its notes)."""
        name = _names_by_text(self.folder).get(text)
        return None if name is None else self.entry(name)


@lru_cache(maxsize=256)
def _read_template(path: Path) -> str:
    # The page compares the editor's text with its library template on every render.
    return path.read_text(encoding="utf-8")


@lru_cache(maxsize=4)
def _names_by_text(folder: Path) -> dict[str, str]:
    names: dict[str, str] = {}
    for entry in _read_manifest(folder):
        names.setdefault(_read_template(folder / entry.file), entry.name)
    return names


@lru_cache(maxsize=4)
def _read_manifest(folder: Path) -> tuple[LibraryEntry, ...]:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return tuple(
        LibraryEntry(
            name=item["name"],
            title=item["title"],
            family=item["family"],
            file=item["file"],
            upstream=item.get("upstream"),
            end_of_turn=tuple(item.get("end_of_turn", ())),
            stop_token=item.get("stop_token"),
            llama_cpp_builtin=item.get("llama_cpp_builtin"),
            notes=tuple(item.get("notes", ())),
            special_tokens=tuple(item.get("special_tokens", {}).items()),
        )
        for item in manifest["templates"]
    )
