"""A Hub id as the target (`ORG/NAME`, or a Hub URL naming a GGUF file), read as the
page's Load from the Hub reads it: the page's own Hub client (`app.sources.hub`, on
`PLAYGROUND_HF_ENDPOINT` with `PLAYGROUND_HF_TOKEN`), within one fetch budget
(`PLAYGROUND_FETCH_SECONDS`, the upload size), the tokenizer files transformers reads or
a GGUF file's header grown as an upload's is."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from app.check.target import Target, TargetError, from_source, hf_files
from app.config import max_upload_bytes
from app.sources.gguf import IncompleteHeader
from app.sources.hub import Hub, Listing, parse_reference
from app.sources.limits import SourceLimits
from app.sources.remote import Budget, Fetchers, RemoteError, grow_header
from app.sources.worker import load_source


def is_hub_id(text: str, settings: dict[str, Any]) -> bool:
    """Whether `text` names a Hub repository (or a file in one) on the configured Hub."""
    return parse_reference(text, str(settings["HF_ENDPOINT"])) is not None


def read_hub(text: str, settings: dict[str, Any], limits: SourceLimits) -> Target:
    """The repository's template; raises TargetError with the Hub's or the reader's sentence."""
    endpoint = str(settings["HF_ENDPOINT"])
    reference = parse_reference(text, endpoint)
    assert reference is not None
    hub = Hub(endpoint, str(settings["HF_TOKEN"]) or None)
    budget = Budget(float(settings["FETCH_SECONDS"]), max_upload_bytes(settings), endpoint)
    fetchers = Fetchers(int(settings["FETCHES"]))
    try:
        listing = fetchers.run(budget, lambda: hub.listing(reference, budget))
        file = reference.file
        if file is None and not listing.has_tokenizer_files():
            file = listing.default_gguf()
        if file is None and not listing.has_tokenizer_files():
            raise TargetError(f"{listing.repo} has neither tokenizer files nor GGUF files.")
        if file is None:
            return _files(text, hub, listing, fetchers, budget, limits)
        return _gguf(text, hub, listing, file, fetchers, budget, limits)
    except RemoteError as error:
        raise TargetError(f"{text}: {error.message}") from None
    finally:
        fetchers.close()


def _files(text: str, hub: Hub, listing: Listing, fetchers: Fetchers, budget: Budget,
           limits: SourceLimits) -> Target:  # fmt: skip
    """The tokenizer files transformers reads, read whole, as an upload of them."""
    files = {}
    for path in listing.tokenizer_files():
        data = fetchers.run(budget, lambda p=path: hub.read_whole(listing, p, budget))
        try:
            files[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise TargetError(f"{path} in {listing.repo} is not UTF-8 text.") from None
    return from_source(text, hf_files(files), limits)


def _gguf(text: str, hub: Hub, listing: Listing, file: str, fetchers: Fetchers, budget: Budget,
          limits: SourceLimits) -> Target:  # fmt: skip
    """A GGUF file's header, read as far as the parser asks, as an upload of it."""
    if file not in listing.files:
        raise TargetError(f"{listing.repo} has no file {file} at {listing.sha}.")
    name = PurePosixPath(file).name

    def read_more(start: int, end: int) -> bytes:
        """Bytes `start` to `end` of the file, within the budget."""
        return fetchers.run(budget, lambda: hub.read(listing, file, start, end, budget))

    def parse(prefix: bytes) -> bytes | IncompleteHeader:
        """The prefix once it holds the header, else what more it needs."""
        answer = load_source("gguf", prefix, name, limits).value
        return answer if isinstance(answer, IncompleteHeader) else prefix

    prefix = grow_header(
        read_more, parse, file_size=listing.files.get(file), max_bytes=budget.max_bytes
    )
    return from_source(text, ("gguf", prefix, name), limits)
