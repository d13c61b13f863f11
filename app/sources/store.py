"""Sources by content id: summaries kept in memory, raw material in the database, the work
(parsing, tokenizers, tokens) in bounded source workers.

What the database keeps is only what a source was built from (the GGUF bytes up to the
end of the KV section, or the uploaded files as JSON), so any replica that shares the
database can rebuild a source it has not seen. The web process keeps the small summary
(`Source`); the tokenizer lives in a source worker (`service.py`), which rebuilds it from
those bytes when it has not built it yet.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any, ClassVar, Protocol, overload

from cachetools import FIFOCache, TTLCache

from app.budget import OverLimit
from app.errors import ApiError
from app.sources.caches import BoundedLRUCache
from app.sources.gguf import IncompleteHeader
from app.sources.hf import canonical_files
from app.sources.ollama_source import MODELFILE, OLLAMA, canonical_layers
from app.sources.service import SourceFailed, SourceWorkers
from app.sources.source import BUILDING, FAILED, Source, TokenizerInfo, summary_bytes
from app.sources.worker import Loaded, Refused, Tokenized, TokenRun, Unbuildable
from app.storage import Database
from app.tokens.vocab import Token

_ID = re.compile(r"[0-9a-f]{64}")

#: The `kind` column of the two kinds of stored source.
GGUF, HF = "gguf", "hf"

#: How long a tokenizing that failed (ran into a limit, or made its library panic) is not
#: tried again by this process: opening a share of a hostile source costs one failure.
FAILURE_MEMORY_SECONDS = 600.0
#: Failures remembered at most (the least recently used are forgotten first).
FAILURES_KEPT = 1024
#: Tokenizer builds whose outcome is kept (the oldest are forgotten first; a forgotten
#: one is asked of the source worker again, which holds the tokenizer or builds it).
BUILDS_KEPT = 1024


def _failed_to_run(future: Future) -> bool:
    """A build that raised (its source was gone, say) is tried again on the next ask."""
    return future.done() and future.exception() is not None


#: Bytes the summaries kept in memory may take in all (`PLAYGROUND_WEB_SOURCES_MB`), as
#: `summary_bytes` measures them: a summary can hold much of its upload (a special token
#: of megabytes, hundreds of templates, a response template's text), so their number
#: alone does not bound them. One summary is at most `PLAYGROUND_SOURCE_SUMMARY_MB`
#: (refused in the source worker otherwise); the newest one is kept whatever it takes.
MEMORY_BYTES = 64 << 20


@dataclass
class SourceRefused(ApiError):
    """Bytes that are not a source (`refused.type`: GGUFError, HFFileError or
    ModelfileError), answered as 422 naming what is wrong: the offset in a GGUF header,
    the Hugging Face file, or the Modelfile's line."""

    refused: Refused

    status: ClassVar[int] = 422
    title: ClassVar[str] = "Not a source"

    def __str__(self) -> str:
        return self.refused.message

    def to_json(self) -> dict[str, Any]:
        refused = self.refused
        if refused.type == "GGUFError":
            fields = {"offset": refused.offset, "limit": refused.limit}
        elif refused.type == "ModelfileError":
            fields = {"line": refused.line, "limit": refused.limit}
        else:
            fields = {"file": refused.file, "limit": refused.limit}
        return {"type": refused.type, "message": refused.message, **fields}


@dataclass
class TokenizerUnavailable(ApiError):
    """The source has no vocabulary reproduced exactly, or its tokenizer failed (422)."""

    message: str
    limit: str | None = None

    status: ClassVar[int] = 422
    title: ClassVar[str] = "No tokenizer"

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"type": "TokenizerUnavailable", "message": self.message, "limit": self.limit}


class TokenList(Sequence[Token]):
    """A run of tokens as `Token`s, each made only when read: the page's views read the
    parallel lists (`ids`, `starts`, `ends`, `special`, `piece`) instead, since a `Token`
    per token costs more than tokenizing for a 50k-token prompt."""

    def __init__(self, run: TokenRun, pieces: dict[int, str]) -> None:
        self.ids, self.starts, self.ends, self.special = run.ids, run.starts, run.ends, run.special
        self.pieces = pieces

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Token: ...
    @overload
    def __getitem__(self, index: slice) -> list[Token]: ...
    def __getitem__(self, index: int | slice) -> Token | list[Token]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        token_id = self.ids[index]
        return Token(token_id, self.pieces[token_id], self.starts[index], self.ends[index],
                     self.special[index])  # fmt: skip


@dataclass(frozen=True)
class Tokens:
    """The tokens of one text (a window of them when `total` is larger)."""

    tokens: TokenList
    total: int


class Keeper(Protocol):
    """Who stores sources and hears of their uses (`app.quota.SourceKeeper`)."""

    def put(self, source_id: str, kind: str, data: bytes) -> None:
        """Store a source's raw material; may raise to refuse it (a limit)."""
        ...

    def used(self, source_id: str) -> bool:
        """Note a use of a source; False when it is no longer stored."""
        ...


class SourceStore:
    """Sources by id; thread-safe; at most `capacity` summaries kept in memory, taking
    `memory_bytes` bytes in all (`summary_bytes`)."""

    def __init__(
        self,
        database: Database,
        workers: SourceWorkers,
        capacity: int = 64,
        on_lookup: Callable[[bool], None] | None = None,
        keeper: Keeper | None = None,
        memory_bytes: int = MEMORY_BYTES,
    ) -> None:
        self.database = database
        self.workers = workers
        #: Told of each in-memory lookup: True for a hit, False for a miss (for metrics).
        self.on_lookup = on_lookup
        #: Stores sources within the storage limits and keeps their last use, so that
        #: unused ones can expire (None: stored directly, kept forever).
        self.keeper = keeper
        self._memory: BoundedLRUCache[str, Source] = BoundedLRUCache(
            maxsize=memory_bytes, maxcount=capacity, getsizeof=summary_bytes
        )
        self._failed: TTLCache[str, TokenizerUnavailable] = TTLCache(
            maxsize=FAILURES_KEPT, ttl=FAILURE_MEMORY_SECONDS, timer=time.monotonic
        )
        self._lock = threading.Lock()  # cachetools caches are not thread-safe
        #: Tokenizer builds by source id: running, or done (their outcome kept). A FIFO
        #: cache, since an LRU one reorders on every read and `_unfinished_builds` reads
        #: them all; `_start_build` stores a build again each time it is asked for, so
        #: the least recently asked for is forgotten first all the same.
        self._builds: FIFOCache[str, Future[TokenizerInfo]] = FIFOCache(maxsize=BUILDS_KEPT)
        # A build only waits for its source worker: one thread per lane keeps them busy.
        self._builder = ThreadPoolExecutor(
            max_workers=max(1, workers.lanes), thread_name_prefix="tokenizer-build"
        )

    def load_gguf(self, prefix: bytes, file_name: str | None = None) -> Source | IncompleteHeader:
        """Parse a GGUF prefix; raises `SourceRefused` when the bytes are not a GGUF header."""
        loaded = self._load(GGUF, prefix, file_name)
        if isinstance(loaded, IncompleteHeader):
            return loaded
        return self._loaded(loaded.source, GGUF, prefix[: loaded.stored_bytes])

    def load_hf(self, files: dict[str, bytes]) -> Source:
        """Read Hugging Face files (name -> UTF-8 text); raises `SourceRefused` naming a
        malformed one.

        A tokenizer.json starts building at once, from the bytes as uploaded, on a worker
        of its own (when two are idle), while another parses the files for the answer:
        the tokenizer is then ready the library's load after the upload, not after the
        parse and that load (`_early_build`).
        """
        named: Future[Source | None] = Future()
        early = self._early_build(files, named)
        try:
            canonical = canonical_files(files)
            loaded = self._load(HF, canonical, None, elsewhere=early is not None)
            assert isinstance(loaded, Loaded)
            named.set_result(loaded.source)
        finally:
            if not named.done():  # refused: the early build is kept by no source
                named.set_result(None)
        return self._loaded(loaded.source, HF, canonical, early)

    def _early_build(
        self, files: dict[str, bytes], named: Future[Source | None]
    ) -> Future[TokenizerInfo] | None:
        """The build of the upload's tokenizer.json, started now on a lane of its own
        (None: none uploaded, or no two lanes idle), and its outcome remembered as the
        source's once `named` says which source the parse made of the files."""
        by_name = {PurePosixPath(path).name: data for path, data in files.items()}
        if "tokenizer.json" not in by_name:
            return None
        key = f"upload-{uuid.uuid4().hex}"  # never a source id
        build = self.workers.prebuild(
            key, by_name["tokenizer.json"], by_name.get("tokenizer_config.json")
        )
        if build is None:
            return None

        def run() -> TokenizerInfo | None:
            try:
                adopt, failure = build(), None
            except (OverLimit, SourceFailed) as error:
                adopt, failure = None, error
            source = named.result()
            if source is None:
                return None

            def adopted() -> Any:
                if failure is not None:
                    raise failure
                assert adopt is not None
                return adopt(source.id)

            return self._outcome(source, adopted)

        return self._builder.submit(run)  # type: ignore[return-value]

    def load_modelfile(self, data: bytes) -> Source:
        """Read an Ollama Modelfile; raises `SourceRefused` naming the line that is wrong."""
        return self._load_whole(MODELFILE, data)

    def load_ollama(self, layers: dict[str, Any]) -> Source:
        """An Ollama registry model from the layers read of it (`ollama_source.LAYER_FIELDS`)."""
        return self._load_whole(OLLAMA, canonical_layers(layers))

    def _load_whole(self, kind: str, data: bytes) -> Source:
        loaded = self._load(kind, data, None)
        assert isinstance(loaded, Loaded)
        return self._loaded(loaded.source, kind, data)

    def _loaded(
        self, source: Source, kind: str, data: bytes, early: Future | None = None
    ) -> Source:
        """A source just parsed: its tokenizer being built, stored (or its use noted),
        remembered; answered as this process knows it (a source it knew may be built)."""
        # The build starts first, so that storing runs beside it. Until stored, a build
        # that needs the bytes (its worker lost the parse) takes them from here; after,
        # from the database: kept in a closure, every upload still building would hold
        # its copy in this process.
        unstored = [(kind, data)]
        build = self._start_build(
            source, lambda: unstored[0] if unstored else self._stored(source.id), early
        )
        try:
            if self._remembered(source.id) is None:
                self._keep(source, kind, data)
            else:
                self._store_again(source, kind, data)
        finally:
            unstored.clear()
        if self._unfinished_builds() > self.workers.lanes:
            # More builds than workers: this upload waits for its own, as the answer did
            # before builds came after it, so uploads cannot pile up work behind their
            # answers out of reach of admission (its slots and per-client counts).
            with contextlib.suppress(Exception):  # its failure is the tokenizer's state
                build.result()
        return self._current(source)

    def memory_use(self) -> tuple[int, int]:
        """The summaries kept in memory now: how many, and the bytes they take."""
        with self._lock:
            return len(self._memory), int(self._memory.currsize)

    def _unfinished_builds(self) -> int:
        with self._lock:
            return sum(not build.done() for build in self._builds.values())

    def get(self, source_id: str) -> Source | None:
        """The source with this id, rebuilt from the database if not kept in memory;
        raises `SourceRefused` for a stored source the limits in force refuse (stored
        under looser ones)."""
        if not _ID.fullmatch(source_id):
            return None
        if (known := self._remembered(source_id)) is not None:
            if self._used(source_id):
                return known
            # Expired from the database: gone for this process too, as for every replica.
            with self._lock:
                self._memory.pop(source_id, None)
            return None
        stored = self.database.get_source(source_id)
        if stored is None:
            return None
        self._used(source_id)
        try:
            loaded = self._load(stored.kind, stored.data, None)
        except SourceRefused as refused:
            # Stored when building its tokenizer ran into a limit, so that its tokenizer.json
            # was not read to the end: it reads back as it loaded then, without a tokenizer.
            # (Refused again: stored by a version that read more than this one does.)
            why = refused.refused.message
            loaded = self.workers.load(stored.kind, stored.data, None, unbuilt=why)
            if isinstance(loaded, Refused):
                raise SourceRefused(loaded) from None
        if not isinstance(loaded, Loaded) or loaded.source.id != source_id:
            return None
        source = self._remember(loaded.source)
        self._start_build(source, lambda: self._stored(source_id))
        return source

    def get_built(self, source_id: str) -> Source | None:
        """`get`, once the source's tokenizer is built (for work that needs it)."""
        source = self.get(source_id)
        return None if source is None else self.settled(source)

    def settled(self, source: Source, timeout: float | None = None) -> Source:
        """The source once its tokenizer is built (ready or failed); `timeout` seconds at
        most (then as it is, still building)."""
        info = source.tokenizer
        if info is None or info.state != BUILDING:
            return source
        future = self._start_build(source, lambda: self._stored(source.id))
        try:
            built = future.result(timeout)
        except FutureTimeout:
            return self._current(source)
        return replace(source, tokenizer=built)

    def _start_build(
        self,
        source: Source,
        stored: Callable[[], tuple[str, bytes] | None],
        early: Future[TokenizerInfo] | None = None,
    ) -> Future[TokenizerInfo]:
        """The build of a source's tokenizer: started now (or `early`, started already
        from the upload), unless started before (a build is started once per source and
        process; its result is kept)."""
        with self._lock:
            future = self._builds.get(source.id)
            if future is None or _failed_to_run(future):
                info = source.tokenizer
                if info is None or info.state != BUILDING:
                    future = Future()
                    future.set_result(info)
                    return future
                future = early or self._builder.submit(self._build, source, stored)
            self._builds[source.id] = future  # the most recently asked for now
            return future

    def _build(
        self, source: Source, stored: Callable[[], tuple[str, bytes] | None]
    ) -> TokenizerInfo:
        """Build in a source worker, then remember the outcome in the source's summary."""
        return self._outcome(source, lambda: self.workers.build(source.id, stored))

    def _outcome(self, source: Source, build: Callable[[], Any]) -> TokenizerInfo:
        """Run a build, then remember its outcome in the source's summary."""
        assert source.tokenizer is not None
        try:
            built = build()
        except (OverLimit, SourceFailed) as error:
            limit = error.limit if isinstance(error, OverLimit) else None
            built = replace(
                source.tokenizer, supported=False, reason=error.message, limit=limit, state=FAILED
            )
        if built is None:
            raise TokenizerUnavailable("The source is no longer stored.")
        if isinstance(built, Unbuildable):
            built = replace(source.tokenizer, supported=False, reason=built.reason, state=FAILED)
        with self._lock:
            known = self._memory.get(source.id)
            if known is not None:
                self._memory[source.id] = replace(known, tokenizer=built)
        return built

    def _current(self, source: Source) -> Source:
        """The source as this process knows it now (its tokenizer may have been built)."""
        with self._lock:
            known = self._with_build(self._memory.get(source.id) or source)
        return replace(known, file_name=source.file_name)

    def _with_build(self, source: Source) -> Source:
        """`source` with the outcome of its build, when it is done (it may have ended
        before the source was remembered). Called holding the lock."""
        info = source.tokenizer
        build = self._builds.get(source.id)
        if info is None or info.state != BUILDING or build is None or not build.done():
            return source
        if build.exception() is not None:
            return source
        return replace(source, tokenizer=build.result())

    def tokenize(
        self,
        source: Source,
        texts: list[str],
        *,
        add_special: bool = False,
        parse_special: bool = True,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[Tokens]:
        """Tokens of each text from the source's own vocabulary, in a source worker.

        Raises `TokenizerUnavailable` (no exact vocabulary, or it failed: with the limit
        it ran into, if any). `offset`/`limit` pick a window of each text's tokens.
        """
        self._check_usable(self.settled(source))
        flags = (add_special, parse_special)
        task = _task_key(source.id, texts, flags)
        self._check_not_failed(task)
        window = (offset, limit if limit is not None else 1 << 62)
        try:
            tokenized = self.workers.tokenize(
                source.id, texts, flags, window, lambda: self._stored(source.id)
            )
        except (OverLimit, SourceFailed) as error:
            raise self._remember_failure(task, error) from None
        if tokenized is None:
            raise TokenizerUnavailable("The source is no longer stored.")
        if isinstance(tokenized, Unbuildable):
            raise TokenizerUnavailable(f"This vocabulary cannot be used: {tokenized.reason}.")
        assert isinstance(tokenized, Tokenized)
        return [Tokens(TokenList(run, tokenized.pieces), run.total) for run in tokenized.runs]

    def token_ids(self, source: Source, texts: list[str]) -> list[list[int]] | None:
        """Each text's token ids (special tokens parsed), or None if the vocabulary cannot
        be used; for checks that carry on without token counts."""
        try:
            return [run.tokens.ids for run in self.tokenize(source, texts)]
        except TokenizerUnavailable:
            return None

    def _check_usable(self, source: Source) -> None:
        info = source.tokenizer
        if info is None:
            raise TokenizerUnavailable("This source has no vocabulary.")
        if info.state == BUILDING:
            raise TokenizerUnavailable("The tokenizer is still being built: try again.")
        if not info.supported:
            raise TokenizerUnavailable(
                f"This vocabulary cannot be used: {info.reason}.", limit=info.limit
            )

    def _check_not_failed(self, task: str) -> None:
        """The same tokenizing that failed a moment ago fails again, without a worker."""
        with self._lock:
            failed = self._failed.get(task)
        if failed is not None:
            raise failed

    def _remember_failure(self, task: str, error: OverLimit | SourceFailed) -> TokenizerUnavailable:
        limit = error.limit if isinstance(error, OverLimit) else None
        failure = TokenizerUnavailable(f"The tokenizer failed: {error.message}", limit)
        with self._lock:
            self._failed[task] = failure
        return failure

    def _load(
        self, kind: str, data: bytes, file_name: str | None, elsewhere: bool = False
    ) -> Loaded | IncompleteHeader:
        """Parse in a worker (the tokenizer is built afterwards, `_start_build`, or
        `elsewhere`, from the upload)."""
        result = self.workers.load(kind, data, file_name, elsewhere=elsewhere)
        if isinstance(result, Refused):
            raise SourceRefused(result)
        return result

    def _stored(self, source_id: str) -> tuple[str, bytes] | None:
        stored = self.database.get_source(source_id)
        return None if stored is None else (stored.kind, stored.data)

    def _keep(self, source: Source, kind: str, data: bytes) -> Source:
        """Store a newly built source's raw material, then keep the source in memory.

        Built first, so that bytes that do not build are never stored; stored before it
        is remembered, so that a failed write is not hidden by the memory on a retry.
        """
        self._put(source.id, kind, data)
        return self._remember(source)

    def _store_again(self, known: Source, kind: str, data: bytes) -> None:
        """A source loaded again is a use; stored again if it expired meanwhile."""
        if not self._used(known.id):
            self._put(known.id, kind, data)

    def _put(self, source_id: str, kind: str, data: bytes) -> None:
        if self.keeper is None:
            self.database.put_source(source_id, kind, data)
        else:
            self.keeper.put(source_id, kind, data)

    def _used(self, source_id: str) -> bool:
        return self.keeper is None or self.keeper.used(source_id)

    def _remembered(self, source_id: str) -> Source | None:
        with self._lock:
            source = self._memory.get(source_id)  # a use: the most recent now
            if source is not None and (built := self._with_build(source)) is not source:
                source = self._memory[source_id] = built
        if self.on_lookup is not None:
            self.on_lookup(source is not None)
        return source

    def _remember(self, source: Source) -> Source:
        with self._lock:
            self._memory[source.id] = source
        return source


def _task_key(source_id: str, texts: list[str], flags: tuple[bool, bool]) -> str:
    """What identifies one tokenizing: the source, the texts and the flags."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return f"{source_id}:{flags}:{digest.hexdigest()}"
