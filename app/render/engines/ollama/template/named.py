"""`template.Named`: the Go template `ollama create` adopts for a GGUF's chat template.

Facts (ollama/ollama `template/template.go` and `server/model.go` at
fb30760996871fa9460115c753afd2c60d4ab0f7):

- `template/index.json` lists `{"name", "template"}` pairs: a Jinja chat template and the
  name of the Go template (`<name>.gotmpl`, CRLF read as LF) standing for it, with its
  parameters in `<name>.json`, of which only `stop` is kept (a missing `.json` is none).
- `Named(s)` computes the Levenshtein distance (agnivade/levenshtein, over Unicode code
  points) from `s` to every entry's Jinja in file order and keeps the first strictly
  smallest; the entry is adopted when that distance is under 100, else there is none.
  (How far the nearest entry is beyond 100 is not used, so it is not measured here.)
- `ollama create` from a GGUF (`detectChatTemplate`) then writes the entry's Go template
  as the model's TEMPLATE layer and its stop list as its params layer.

Ollama embeds these files in its binary; no registry package carries them (searched:
PyPI, npm and Debian; `@huggingface/ollama-utils` maps library models instead, not this
index). So the folder comes from the operator: `PLAYGROUND_OLLAMA_TEMPLATES`, laid out
as Ollama's `template/`. It is read from the environment here because the render
workers, not the web process, run this; unset, `unavailable()` says why the pick cannot
be shown.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rapidfuzz.distance import Levenshtein

#: The setting naming the folder laid out as Ollama's `template/`.
SETTING = "PLAYGROUND_OLLAMA_TEMPLATES"
#: `Named` adopts an entry whose distance is under this.
ADOPTED_UNDER = 100


class TemplatesFolderError(ValueError):
    """The templates folder is there but cannot be read as Ollama's index."""


@dataclass(frozen=True)
class Entry:
    """One entry of the index: its name, the Jinja it stands for, its Go template and the
    stop strings its parameters carry."""

    name: str
    jinja: str
    go_template: str
    stop: tuple[str, ...]


@dataclass(frozen=True)
class Match:
    """The entry `ollama create` adopts and its distance from the chat template."""

    entry: Entry
    distance: int


def templates_folder() -> Path | None:
    """The folder `PLAYGROUND_OLLAMA_TEMPLATES` names, or None when it is unset."""
    value = os.environ.get(SETTING, "").strip()
    return Path(value) if value else None


def unavailable() -> str | None:
    """Why `ollama create`'s pick cannot be shown here, or None when it can."""
    folder = templates_folder()
    if folder is None:
        return (
            "Which Go template `ollama create` would adopt cannot be shown: Ollama keeps its "
            "37 templates inside its own program, no package carries them, and this "
            f"playground was not given a copy ({SETTING} is not set)."
        )
    if not (folder / "index.json").is_file():
        return (
            f"Which Go template `ollama create` would adopt cannot be shown: {SETTING} names "
            "a folder without Ollama's index.json."
        )
    return None


def load_index(folder: Path) -> tuple[Entry, ...]:
    """The index in `folder`, in file order (read once per folder)."""
    return _load_index(str(folder.resolve()))


@lru_cache(maxsize=4)
def _load_index(folder: str) -> tuple[Entry, ...]:
    root = Path(folder)
    try:
        raw = json.loads((root / "index.json").read_text(encoding="utf-8"))
        return tuple(_entry(root, item["name"], item["template"]) for item in raw)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise TemplatesFolderError(f"{SETTING}: cannot read Ollama's index: {error}") from error


def _entry(root: Path, name: str, jinja: str) -> Entry:
    """One index entry with its Go template and stop strings read from the folder."""
    go_template = (root / f"{name}.gotmpl").read_text(encoding="utf-8").replace("\r\n", "\n")
    params = root / f"{name}.json"
    stop = json.loads(params.read_text(encoding="utf-8")).get("stop") if params.is_file() else None
    return Entry(name=name, jinja=jinja, go_template=go_template, stop=tuple(stop or ()))


def named(template: str, index: tuple[Entry, ...]) -> Match | None:
    """`template.Named`: the first entry at the strictly smallest distance from
    `template`, when that distance is under 100; None when no entry is.

    rapidfuzz's Levenshtein (bit-parallel, in C++) counts code points as Go's does over
    runes. Each entry is measured with a cutoff one below the best so far (99 at first):
    a larger distance is cut short (at once when the lengths alone tell), and only a
    strictly smaller one replaces the best, which keeps the first of equals as Ollama's
    loop does. The result is Ollama's: its smallest distance is either under 100, and
    then found here at the same first entry, or not, and then neither adopts one. So a
    256 KiB template costs milliseconds, where measuring every distance in full took a
    second.
    """
    if not index:
        raise TemplatesFolderError(f"{SETTING}: Ollama's index has no entries")
    best, distance = None, ADOPTED_UNDER
    for entry in index:
        found = Levenshtein.distance(template, entry.jinja, score_cutoff=distance - 1)
        if found < distance:
            best, distance = entry, found
            if distance == 0:
                break
    return Match(best, distance) if best else None
