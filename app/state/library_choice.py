"""Choosing a library template: its text, and its model's special tokens when no
vocabulary is loaded (static/sources.js does the same in the page).

A library template that prints `bos_token` renders without its BOS when the state has
none, so the entry brings its model's tokens along. The tokens a user typed, or a loaded
source's, are never replaced: only none, or another entry's.
"""

from __future__ import annotations

from dataclasses import replace

from app.sources.library import Library, LibraryEntry
from app.state.playground import PlaygroundState


def from_library(tokens: dict[str, str], library: Library) -> bool:
    """Whether `tokens` are none, or exactly some library entry's (not the user's own)."""
    return not tokens or any(tokens == entry.tokens for entry in library.entries)


def choose_library(
    state: PlaygroundState, entry: LibraryEntry, library: Library
) -> PlaygroundState:
    """The state with `entry`'s template loaded, and its special tokens when no source is
    loaded and the state's tokens came from the library (or are none)."""
    chosen = replace(state.asking(template=library.template(entry.name) or ""), library=entry.name)
    if state.source is None and from_library(state.request.special_tokens, library):
        chosen = chosen.asking(special_tokens=entry.tokens)
    return chosen


def library_tokens(state: PlaygroundState, library: Library) -> LibraryEntry | None:
    """The library entry whose special tokens the state renders with because no
    vocabulary is loaded (the Prompt view says so), if any."""
    entry = library.entry(state.library) if state.library else None
    if entry is None or state.source is not None or not entry.tokens:
        return None
    return entry if state.request.special_tokens == entry.tokens else None
