"""Loading a source from the Hub or from a URL: what to read, read within one budget,
then handed to the source store as an upload would be, with where it came from.

The answer is the store's source (`Source.to_json()`) plus `origin`: the repository, the
revision asked for, the commit sha it resolved to and the file (or the URL). The source's
id is still the SHA-256 of the bytes stored, so a share shows exactly what was read then,
whatever the repository holds later.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from app.sources.gguf import IncompleteHeader
from app.sources.hf import is_utf8
from app.sources.hub import SHARD, Hub, Listing, Reference
from app.sources.ollama_registry import ModelName, OllamaRegistry
from app.sources.public_url import PublicURLReader
from app.sources.remote import Budget, Fetchers, RemoteError, grow_header
from app.sources.source import Source
from app.sources.store import SourceRefused, SourceStore
from app.sources.worker import Refused


@dataclass(frozen=True)
class RemoteSettings:
    """The settings of remote sources (`PLAYGROUND_HF_*`, `URL_*`, `FETCH*`)."""

    hf_endpoint: str = "https://huggingface.co"
    hf_token: str | None = None
    allow_private: bool = False
    seconds: float = 20.0
    threads: int = 4
    redirects: int = 5
    max_bytes: int = 64 << 20
    #: The most bytes of an Ollama manifest or layer (`PLAYGROUND_MODELFILE_KB`).
    layer_bytes: int = 1 << 20
    json_depth: int = 64


class RemoteSources:
    """Loads Hub repositories, GGUF URLs and Ollama models into a `SourceStore`.

    `parse_slot` is held around each parse of what was read (the service's admission: a
    load holds no sandbox slot while it waits on the network, only while it parses).
    """

    def __init__(
        self,
        store: SourceStore,
        settings: RemoteSettings,
        parse_slot: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        self.store = store
        self.settings = settings
        self.parse_slot = parse_slot
        self.hub = Hub(settings.hf_endpoint, settings.hf_token)
        self.urls = PublicURLReader(
            allow_private=settings.allow_private,
            max_redirects=settings.redirects,
            trusted=settings.hf_endpoint,
            lookups=2 * settings.threads,
        )
        self.fetchers = Fetchers(settings.threads)
        self.ollama = OllamaRegistry(self.urls, settings.layer_bytes, settings.json_depth)

    def load_hub(self, reference: Reference) -> dict[str, Any]:
        """A repository's source; for a GGUF repository named without a file, the list of
        its GGUF models to choose from (`gguf_files`, `default_file`, no `id`)."""
        budget = self._budget(self.hub.endpoint)
        listing = self.fetchers.run(budget, lambda: self.hub.listing(reference, budget))
        if reference.file is not None:
            file = _gguf_file(listing, reference.file)
            source = self._hub_gguf(listing, file, budget)
        elif listing.has_tokenizer_files():
            file = None
            source = self._hub_files(listing, budget)
        elif listing.gguf_choices():
            return {**self._origin(listing, None), "gguf_files": self._choices(listing),
                    "default_file": listing.default_gguf()}  # fmt: skip
        else:
            raise RemoteError(
                "NoTemplate",
                f"{listing.repo} has neither tokenizer files with a chat template "
                "(tokenizer_config.json, chat_template.jinja) nor GGUF files.",
                422,
            )
        answer = source.to_json()
        answer.update(self._origin(listing, file))
        # A repository may hold both: the page offers its GGUF files beside the source.
        answer.update(gguf_files=self._choices(listing), default_file=listing.default_gguf())
        return answer

    def load_url(self, url: str) -> dict[str, Any]:
        """The source of the GGUF file at `url` (its header only)."""
        self.urls.check(url)
        budget = self._budget(urlsplit(url).hostname or url)
        size: list[int | None] = [None]

        def read_more(start: int, end: int) -> bytes:
            if size[0] is not None:
                end = min(end, size[0])
            data, size[0] = self.fetchers.run(
                budget, lambda: self.urls.read(url, start, end, budget)
            )
            return data

        name = PurePosixPath(unquote(urlsplit(url).path)).name or None
        source = self._grow(read_more, name, None, budget)
        return {**source.to_json(), "origin": {"type": "url", "url": url, "file": name}}

    def load_ollama(self, name: ModelName) -> dict[str, Any]:
        """An Ollama model's source from its registry: its template, system, params,
        renderer and parser (never its weights)."""
        budget = self._budget(name.host)
        read = self.fetchers.run(budget, lambda: self.ollama.read(name, budget))
        with self.parse_slot():
            source = self.store.load_ollama(read.layers)
        origin = {"type": "ollama", "repo": f"{name.namespace}/{name.model}",
                  "revision": name.tag, "sha": read.manifest_digest, "file": None,
                  "url": name.manifest_url()}  # fmt: skip
        return {**source.to_json(), "origin": origin}

    def close(self) -> None:
        self.fetchers.close()
        self.urls.close()

    def _budget(self, where: str) -> Budget:
        return Budget(self.settings.seconds, self.settings.max_bytes, where)

    def _hub_files(self, listing: Listing, budget: Budget) -> Source:
        files = {}
        for path in listing.tokenizer_files():
            data = self.fetchers.run(budget, lambda p=path: self.hub.read_whole(listing, p, budget))
            if not is_utf8(data):
                message = f"{path} in {listing.repo} is not UTF-8 text"
                raise SourceRefused(Refused("HFFileError", message, file=path))
            files[path] = data
        with self.parse_slot():
            return self.store.load_hf(files)

    def _hub_gguf(self, listing: Listing, file: str, budget: Budget) -> Source:
        def read_more(start: int, end: int) -> bytes:
            return self.fetchers.run(
                budget, lambda: self.hub.read(listing, file, start, end, budget)
            )

        return self._grow(read_more, PurePosixPath(file).name, listing.files.get(file), budget)

    def _grow(
        self,
        read_more: Callable[[int, int], bytes],
        name: str | None,
        file_size: int | None,
        budget: Budget,
    ) -> Source:
        def parse(prefix: bytes) -> Source | IncompleteHeader:
            with self.parse_slot():
                return self.store.load_gguf(prefix, name)

        return grow_header(read_more, parse, file_size=file_size, max_bytes=budget.max_bytes)

    def _origin(self, listing: Listing, file: str | None) -> dict[str, Any]:
        origin = {"type": "hub", **listing.to_json(), "file": file,
                  "url": self.hub.repo_url(listing.repo, listing.sha)}  # fmt: skip
        return {"origin": origin}

    def _choices(self, listing: Listing) -> list[dict[str, Any]]:
        return [choice.to_json() for choice in listing.gguf_choices()]


def _gguf_file(listing: Listing, file: str) -> str:
    """The GGUF file to read: the one named, or the first shard of its split model."""
    if not file.lower().endswith(".gguf"):
        raise RemoteError(
            "BadRequest", f"{file!r} is not a GGUF file: name a .gguf file, or none.", 400,
            {"field": "file"},
        )  # fmt: skip
    shard = SHARD.search(file)
    if shard is not None:
        total = shard.group(2)
        file = f"{file[: shard.start()]}-00001-of-{total}{file[shard.end() - 5 :]}"
    if file not in listing.files:
        raise RemoteError("NotFound", f"{listing.repo} has no file {file} at {listing.sha}.", 404)
    return file
