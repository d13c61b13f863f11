"""Installing remote sources with test settings on the session's application."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace

from flask import Flask

from app.sources.remote_sources import RemoteSettings, RemoteSources
from app.web.admission import sandbox_slot


@contextlib.contextmanager
def remote_installer(app: Flask, base: RemoteSettings) -> Iterator[Callable[..., RemoteSources]]:
    """Yields `install(**settings)`, which gives the application remote sources with
    `base` changed by `settings` (installed once at the start); the application's own
    come back at the end, and every one made is closed."""
    kept = app.extensions["remote_sources"]
    made: list[RemoteSources] = []

    def install(**settings) -> RemoteSources:
        sources = RemoteSources(
            app.extensions["source_store"], replace(base, **settings), parse_slot=sandbox_slot
        )
        app.extensions["remote_sources"] = sources
        made.append(sources)
        return sources

    install()
    try:
        yield install
    finally:
        app.extensions["remote_sources"] = kept
        for sources in made:
            sources.close()
