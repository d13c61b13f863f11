"""Where the editor's template came from, for the box above it: a library entry, a
template of the loaded file, or typed here; and whether it was edited since.

Worked out from the state on every render, so the box can never name a template that is
not the one in the editor.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.sources.library import Library, LibraryEntry
from app.sources.source import Source
from app.state import PlaygroundState


@dataclass(frozen=True)
class Origin:
    """The template's origin as the page names it."""

    #: "library", "source" (a template of the loaded file) or "typed".
    kind: str
    #: The library entry's title, or the source's template name.
    title: str | None = None
    #: The library file, or the loaded file's name.
    file: str | None = None
    #: The model the loaded file names (GGUF `general.name`, HF `name_or_path`).
    model: str | None = None
    #: Whether the editor's text differs from what was loaded.
    modified: bool = False
    #: The library entry whose notes the page shows, and whether its text is the
    #: template's without being where it was loaded from.
    notes_entry: LibraryEntry | None = None
    same_text: bool = False


def template_origin(state: PlaygroundState, source: Source | None, library: Library) -> Origin:
    """Name the origin of the state's template; `source` is the loaded source, if stored."""
    entry = library.entry(state.library) if state.library else None
    loaded = library.template(entry.name) if entry is not None else None
    if entry is not None and loaded is not None and still_from(loaded, state.request.template):
        modified = loaded != state.request.template
        return Origin("library", entry.title, entry.file, modified=modified, notes_entry=entry)
    same = library.matching(state.request.template)
    file_name = model = None
    if state.source is not None:
        file_name = state.source.file_name or (source.file_name if source else None)
        named = source.metadata.get("name") if source else None
        model = None if named is None else str(named)
    # A share made through the API may name no template: the source's default, as the
    # template tabs take it.
    name = (state.source.template_name or "default") if state.source else None
    if source is not None and name in source.templates:
        modified = source.templates[name] != state.request.template
        return Origin("source", name, file_name, model, modified, same, same is not None)
    return Origin("typed", None, file_name, model, notes_entry=same, same_text=same is not None)


def still_from(loaded: str, text: str) -> bool:
    """Whether `text` is still the template that was loaded as `loaded`, edited: at least
    half of its distinct non-blank lines are still there. Another template pasted over
    it is not (its origin and notes would be the wrong template's)."""
    if loaded == text:
        return True
    lines = _telling_lines(loaded)
    if not lines:
        return False
    kept = lines & _telling_lines(text)
    return 2 * len(kept) >= len(lines)


#: Shorter lines (`{%- endif %}`, `{%- endfor %}`) are in every template: they tell
#: nothing of which one it is.
_TELLING_CHARS = 16


def _telling_lines(text: str) -> set[str]:
    """The distinct lines of `text`, stripped, long enough to tell templates apart."""
    return {line for line in map(str.strip, text.splitlines()) if len(line) >= _TELLING_CHARS}
