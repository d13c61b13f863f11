"""The source worker: parse a source's untrusted bytes, build its tokenizer, keep it, tokenize.

Everything here runs in a bounded worker process (`app.pool`), never in the web process:
a GGUF header or a `tokenizer.json` from a visitor can claim huge arrays, backtracking
regexes that make the tokenizers library panic, normalisers that grow every character a
million times, or tokens whose merges take hours to list. In a worker, each of those
costs one task its CPU or memory budget, and at worst the worker, which is replaced.

Each worker keeps the tokenizers it built (`_Cache`), by source id, within a share of
its memory budget; every answer says which ids it holds, so the web process can send a
source's work to the worker that already built it (`service.py`).
"""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from cachetools import FIFOCache

from app.errors import bounded_text
from app.pool.guard import CpuTimeExceeded
from app.sources.caches import BoundedLRUCache
from app.sources.gguf import GGUFError, IncompleteHeader, read_header
from app.sources.gguf_model import source_from_header
from app.sources.hf import CUT_SHORT, HFFileError, check_json, read_hf_files
from app.sources.limits import SourceLimits
from app.sources.modelfile import ModelfileError
from app.sources.ollama_source import MODELFILE, OLLAMA, load_layers, load_modelfile
from app.sources.response_template import kept_response_template
from app.sources.source import (
    BUILDING,
    FAILED,
    READY,
    Source,
    TokenizerInfo,
    content_id,
    largest_kept_file,
    source_from_gguf,
    source_from_hf,
    summary_over,
)
from app.tokens.vocab import NOT_A_TOKENIZER_JSON, VocabTokenizer, tokenize_arrays


@dataclass(frozen=True)
class Spooled:
    """Bytes handed over in a temporary file: pickling a 64 MiB upload into a task would
    hold two more copies of it in the web process while the worker reads it."""

    path: str

    def read(self) -> bytes:
        with open(self.path, "rb") as spooled:
            return spooled.read()


def _bytes(data: bytes | Spooled) -> bytes:
    return data.read() if isinstance(data, Spooled) else data


@dataclass(frozen=True)
class Refused:
    """Bytes that are not a source: the type of error, what is wrong, and where."""

    type: str  # "GGUFError", "HFFileError" or "ModelfileError"
    message: str
    offset: int | None = None
    file: str | None = None
    limit: str | None = None
    #: The Modelfile's line (a `ModelfileError`).
    line: int | None = None

    def __post_init__(self) -> None:
        # Cut here, in the worker: a message may quote what it refuses.
        object.__setattr__(self, "message", bounded_text(self.message, self.type))


@dataclass(frozen=True)
class Loaded:
    """A parsed source; `stored_bytes` of the input are what rebuilds it (GGUF: the KV part)."""

    source: Source
    stored_bytes: int


@dataclass(frozen=True)
class TokenRun:
    """The tokens of one text, as parallel lists; `total` counts them all when cut short."""

    ids: list[int]
    starts: list[int]
    ends: list[int]
    special: list[bool]
    total: int


@dataclass(frozen=True)
class Tokenized:
    """The tokens of each text asked for, and the piece of every id among them."""

    runs: list[TokenRun]
    pieces: dict[int, str]


@dataclass(frozen=True)
class NotHeld:
    """The worker has not built this source's tokenizer: send its bytes."""


@dataclass(frozen=True)
class Unbuildable:
    """The source's bytes give no usable tokenizer (it cannot be built, or is unsupported)."""

    reason: str


@dataclass(frozen=True)
class Answer:
    """A worker's answer, with the source ids whose tokenizers it now holds."""

    value: Any
    held: list[str]


@dataclass
class _Entry:
    tokenizer: VocabTokenizer
    cost: int


class _Cache:
    """Built tokenizers by source id, least recently used first, within a byte budget
    and an entry count (`SourceLimits`); the newest is kept whatever it costs."""

    def __init__(self) -> None:
        # The bounds come with each task's limits (`put`), not at import.
        self.entries: BoundedLRUCache[str, _Entry] = BoundedLRUCache(
            maxsize=0, maxcount=0, getsizeof=lambda entry: entry.cost
        )

    def get(self, source_id: str) -> VocabTokenizer | None:
        entry = self.entries.get(source_id)  # a use: the most recent now
        return None if entry is None else entry.tokenizer

    def put(self, source_id: str, tokenizer: VocabTokenizer, cost: int, limits: SourceLimits):
        self.entries.maxsize, self.entries.maxcount = limits.cache_bytes, limits.cache_entries
        # At least a MiB: resident memory may not grow at all (freed pages reused).
        self.entries[source_id] = _Entry(tokenizer, max(cost, 1 << 20))

    def drop(self, source_id: str) -> None:
        self.entries.pop(source_id, None)

    def held(self) -> list[str]:
        return list(self.entries)


_CACHE = _Cache()


def warm_up() -> None:
    """Keep the tokenizers library to one thread (a worker's budget is one core's), and
    its failures to one line each: a Rust backtrace per hostile upload would flood logs."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.environ["RUST_BACKTRACE"] = "0"


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


#: What a failed build cannot stop: the limits of the task, which the caller must see.
_LIMIT_ERRORS = (CpuTimeExceeded, MemoryError, KeyboardInterrupt, SystemExit)


def _built(
    source_id: str,
    describe: TokenizerInfo,
    build: Callable[[], VocabTokenizer],
    limits: SourceLimits,
) -> TokenizerInfo:
    """Build a tokenizer (unless this worker holds it), measure it, keep it, describe it.

    A vocabulary the tokenizers library chokes on (it raises, or panics) is described
    as unsupported, with the reason; a limit of the task is left to the caller.
    """
    tokenizer = _CACHE.get(source_id)
    if tokenizer is None:
        before = _resident_bytes()
        try:
            tokenizer = build()
        except _LIMIT_ERRORS:
            raise
        except BaseException as error:  # the library's PanicException is a BaseException
            reason = f"the tokenizer cannot be built: {error}"
            return replace(describe, supported=False, reason=reason, state=FAILED)
        _CACHE.put(source_id, tokenizer, _resident_bytes() - before, limits)
    return replace(
        describe,
        model=_name(tokenizer.model) or "",
        pre=_name(tokenizer.pre),
        vocab_size=tokenizer.vocab_size,
        supported=tokenizer.support.supported,
        reason=tokenizer.support.reason,
        bos_id=tokenizer.bos_id,
        eos_id=tokenizer.eos_id,
        state=READY if tokenizer.support.supported else FAILED,
    )


@dataclass(frozen=True)
class _Build:
    """A source parsed by this worker whose tokenizer is still to be built: what the
    header or files say of it, and how to build it (from what the parse already read)."""

    describe: TokenizerInfo
    build: Callable[[], VocabTokenizer]
    #: A tokenizer.json's text, checked to be JSON when the library cannot read it.
    json_text: str | None = None


class _Pending:
    """Builds waiting for their task, by source id: the upload's answer goes back first,
    and the build task that follows on this worker reuses the parse (a 150k-token header
    is not read twice). At most `KEPT`: a build asked of another worker parses again."""

    KEPT = 2

    def __init__(self) -> None:
        # Only stored, taken and tested for: the oldest parse is forgotten first.
        self.builds: FIFOCache[str, _Build] = FIFOCache(maxsize=self.KEPT)

    def put(self, source_id: str, build: _Build) -> None:
        self.builds[source_id] = build

    def take(self, source_id: str) -> _Build | None:
        return self.builds.pop(source_id, None)


_PENDING = _Pending()


def _held() -> list[str]:
    """The ids this worker holds a tokenizer for, or has parsed for building one."""
    return [*_CACHE.held(), *_PENDING.builds]


#: The GGUF key of the token list.
TOKENS_KEY = "tokenizer.ggml.tokens"
#: Names longer than this (a model or pre-tokenizer name) are cut: a header may hold
#: anything there, and every answer repeats them.
MAX_NAME_CHARS = 100


def _name(value: str | None) -> str | None:
    if value is None or len(value) <= MAX_NAME_CHARS:
        return value
    return value[:MAX_NAME_CHARS] + "…"


def _to_build(
    source_id: str,
    describe: TokenizerInfo,
    build: Callable[[], VocabTokenizer],
    unbuilt: str | None,
    limits: SourceLimits,
    json_text: str | None = None,
    elsewhere: bool = False,
) -> TokenizerInfo:
    """The tokenizer as the answer describes it: held already (ready or failed), to be
    built by `build_tokenizer` (building), or not to be built (`unbuilt`: why).
    `elsewhere`: another worker is building it already (`prebuild_tokenizer`), so this
    parse is not kept for a build."""
    if unbuilt is not None:
        return replace(describe, supported=False, reason=unbuilt, state=FAILED)
    if source_id in _CACHE.entries:
        return _built(source_id, describe, build, limits)
    if not elsewhere:
        _PENDING.put(source_id, _Build(replace(describe, state=BUILDING), build, json_text))
    return replace(describe, state=BUILDING)


def _load_gguf(
    data: bytes, file_name: str | None, limits: SourceLimits, unbuilt: str | None
) -> Any:
    header = read_header(data, want_tensors=False, max_items=limits.array_items)
    if isinstance(header, IncompleteHeader):
        return header
    source_id = content_id(data[: header.kv_bytes])
    parsed = source_from_header(header, file_name)
    source = source_from_gguf(
        source_id, parsed, None, header.kv_bytes, file_name, limits.template_bytes
    )
    if (over := summary_over(source, limits)) is not None:
        raise GGUFError(header.kv_bytes, over, "source_summary_mb")
    fields = header.fields
    model, pre = _name(parsed.tokenizer_model) or "", _name(parsed.tokenizer_pre)
    if parsed.vocab_size:
        described = TokenizerInfo(model, pre, parsed.vocab_size, None, None)
        build = lambda: VocabTokenizer.from_gguf_fields(fields)  # noqa: E731
        source.tokenizer = _to_build(source_id, described, build, unbuilt, limits)
    elif TOKENS_KEY in fields:
        reason = f"{TOKENS_KEY} is not a list of token texts"
        source.tokenizer = TokenizerInfo(model, pre, 0, False, reason, state=FAILED)
    return Loaded(source, header.kv_bytes)


def _load_hf(data: bytes, limits: SourceLimits, unbuilt: str | None, elsewhere: bool) -> Any:
    files = json.loads(data)  # bytes: one decoded copy fewer than decoding first
    parsed = read_hf_files(files, limits.json_depth)
    source_id = content_id(data)
    response_template = kept_response_template(parsed.tokenizer_config, limits)
    source = source_from_hf(source_id, parsed, None, limits.template_bytes, response_template)
    if (over := summary_over(source, limits)) is not None:
        raise HFFileError(largest_kept_file(files), over, "source_summary_mb")
    if parsed.tokenizer_json is not None:
        text, config = parsed.tokenizer_json, parsed.tokenizer_config
        if unbuilt is None and not text.rstrip().endswith("}"):
            # Cheap to see before answering, unlike the JSON inside (read when it is
            # built): a file cut short, as a failed download is, is refused at once.
            raise HFFileError("tokenizer.json", CUT_SHORT)
        source.tokenizer = _to_build(
            source_id,
            TokenizerInfo("", None, 0, None, None),
            lambda: VocabTokenizer.from_tokenizer_json(text, config),
            unbuilt,
            limits,
            json_text=text,
            elsewhere=elsewhere,
        )
    return Loaded(source, len(data))


#: Ollama sources (no vocabulary: nothing to build afterwards).
_OLLAMA_LOADERS = {MODELFILE: load_modelfile, OLLAMA: load_layers}


def load_source(
    kind: str,
    data: bytes | Spooled,
    file_name: str | None,
    limits: SourceLimits,
    unbuilt: str | None = None,
    elsewhere: bool = False,
) -> Answer:
    """Parse a source: `Loaded`, `IncompleteHeader` or `Refused`. Its tokenizer is not
    built here but by `build_tokenizer`, the task that follows (the answer goes back at
    the speed of parsing): the source describes it as `building`.

    `data` is a GGUF prefix, the Hugging Face files as the JSON object the store keeps, a
    Modelfile, or an Ollama registry model's layers (`ollama_source.py`).
    With `unbuilt` (why), the tokenizer is described as failed and never built: building
    it ran into a limit before. With `elsewhere`, another worker builds it (Hugging Face
    files: `prebuild_tokenizer`), so the parse is not kept for building.
    """
    data = _bytes(data)
    try:
        if kind == "gguf":
            value = _load_gguf(data, file_name, limits, unbuilt)
        elif kind in _OLLAMA_LOADERS:
            value = Loaded(*_OLLAMA_LOADERS[kind](data, limits))
        else:
            value = _load_hf(data, limits, unbuilt, elsewhere)
    except ModelfileError as error:
        value = Refused("ModelfileError", error.message, line=error.line, limit=error.limit)
    except GGUFError as error:
        value = Refused("GGUFError", error.message, offset=error.offset, limit=error.limit)
    except HFFileError as error:
        value = Refused("HFFileError", str(error), file=error.file, limit=error.limit)
    size = len(data)
    del data
    if size >= TRIM_BYTES:
        _give_back_freed()
    return Answer(value, _held())


#: Inputs from this size up are followed by `_give_back_freed`.
TRIM_BYTES = 1 << 20
_LIBC = ctypes.CDLL(None)


def _give_back_freed() -> None:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`): the copies a
    large upload's parse made and freed stay in the heap otherwise, a 33 MB
    tokenizer.json's 24 MiB in a worker that keeps nothing of it."""
    trim = getattr(_LIBC, "malloc_trim", None)  # glibc only
    if trim is not None:
        trim(0)


def _build_pending(source_id: str, limits: SourceLimits) -> TokenizerInfo | None:
    """Build the tokenizer of a source this worker parsed (None: it parsed none such)."""
    pending = _PENDING.take(source_id)
    if pending is None:
        return None
    info = _built(source_id, pending.describe, pending.build, limits)
    return _located(info, pending.json_text)


def _located(info: TokenizerInfo, json_text: str | None) -> TokenizerInfo:
    """`info`, saying where a tokenizer.json the library could not read stops being JSON."""
    if json_text is not None and (info.reason or "").startswith(NOT_A_TOKENIZER_JSON):
        try:
            check_json("tokenizer.json", json_text)
        except HFFileError as error:  # not even JSON: say where, as the JSON reader does
            info = replace(info, reason=str(error))
    return info


def prebuild_tokenizer(
    key: str, tokenizer_json: bytes | Spooled, config: bytes | None, limits: SourceLimits
) -> Answer:
    """Build a `tokenizer.json`'s tokenizer from the uploaded bytes as they came, while
    another worker parses the upload for its answer: the build starts without waiting for
    that parse (which reads the files again, as the stored JSON object), and so takes the
    library's own time after the upload. Kept under `key` (within the cache's bounds)
    until `adopt_tokenizer` names its source; the `TokenizerInfo` as `build_tokenizer`'s.
    """
    text = _bytes(tokenizer_json).decode()  # the web process checked it is UTF-8
    try:
        named = {"tokenizer_config.json": (config or b"{}").decode()}
        tokenizer_config = read_hf_files(named, limits.json_depth).tokenizer_config
    except HFFileError:
        tokenizer_config = {}  # the parse refuses the upload: this build is never used
    blank = TokenizerInfo("", None, 0, None, None)
    build = partial(VocabTokenizer.from_tokenizer_json, text, tokenizer_config)
    info = _located(_built(key, blank, build, limits), text)
    del text, build  # the upload's copies: freed, and given back
    _give_back_freed()
    return Answer(info, _held())


def ping() -> Answer:
    """Nothing: a first task, which starts a worker (`SourceWorkers.start`)."""
    return Answer(None, _held())


def adopt_tokenizer(key: str, source_id: str) -> Answer:
    """Keep the tokenizer built under `key` as the source's (whether it was held)."""
    entry = _CACHE.entries.pop(key, None)
    if entry is not None:
        _CACHE.entries[source_id] = entry
    return Answer(entry is not None, _held())


def _info_of(
    source_id: str, stored: tuple[str, bytes | Spooled] | None, limits: SourceLimits
) -> TokenizerInfo | NotHeld | Unbuildable:
    """The built tokenizer's description: held, parsed here, or parsed from `stored`."""
    if source_id not in _CACHE.entries and source_id not in _PENDING.builds:
        if stored is None:
            return NotHeld()
        loaded = load_source(*stored[:2], None, limits).value
        if not isinstance(loaded, Loaded) or loaded.source.id != source_id:
            return Unbuildable("the stored bytes are not this source")
        if loaded.source.tokenizer is None:
            return Unbuildable("it has no vocabulary")
        if source_id not in _PENDING.builds:  # held now, or failed without building
            return loaded.source.tokenizer
    info = _build_pending(source_id, limits)
    return info if info is not None else _described(source_id)


def _described(source_id: str) -> TokenizerInfo:
    """A held tokenizer's description (a source built before: nothing from its header)."""
    tokenizer = _CACHE.get(source_id)
    assert tokenizer is not None
    blank = TokenizerInfo(tokenizer.model, tokenizer.pre, tokenizer.vocab_size, None, None)
    return _built(source_id, blank, lambda: tokenizer, SourceLimits())


def build_tokenizer(
    source_id: str, stored: tuple[str, bytes | Spooled] | None, limits: SourceLimits
) -> Answer:
    """Build a source's tokenizer and describe it (`ready` or `failed`, with the reason):
    from the parse this worker made for its answer, else from `stored` (kind, bytes);
    `NotHeld` when this worker has neither."""
    return Answer(_info_of(source_id, stored, limits), _held())


def _rebuild(source_id: str, kind: str, data: bytes | Spooled, limits: SourceLimits) -> Any:
    """The tokenizer of a stored source this worker has not built yet, or `Unbuildable`."""
    info = _info_of(source_id, (kind, data), limits)
    if isinstance(info, Unbuildable):
        return info
    tokenizer = _CACHE.get(source_id)
    if tokenizer is None or not isinstance(info, TokenizerInfo) or not info.supported:
        reason = info.reason if isinstance(info, TokenizerInfo) else None
        return Unbuildable(reason or "it has no vocabulary")
    return tokenizer


def _run(
    tokenizer: VocabTokenizer, text: str, add_special: bool, parse_special: bool, window: slice
) -> TokenRun:
    tokens = tokenize_arrays(tokenizer, text, add_special=add_special, parse_special=parse_special)
    total = len(tokens.ids)
    if window.start == 0 and window.stop >= total:  # all of them: no copies
        return TokenRun(tokens.ids, tokens.starts, tokens.ends, tokens.special, total)
    return TokenRun(
        ids=tokens.ids[window],
        starts=tokens.starts[window],
        ends=tokens.ends[window],
        special=tokens.special[window],
        total=len(tokens.ids),
    )


def tokenize_texts(
    source_id: str,
    texts: list[str],
    flags: tuple[bool, bool],
    window: tuple[int, int],
    stored: tuple[str, bytes | Spooled] | None,
    limits: SourceLimits,
) -> Answer:
    """Tokenize `texts` with a source's tokenizer: `Tokenized`, or `NotHeld` without `stored`.

    `flags` are (add_special, parse_special); `window` (offset, limit) cuts each text's
    tokens; `stored` is the source's (kind, bytes) for a worker that must build it first.
    """
    tokenizer = _CACHE.get(source_id)
    if tokenizer is None and stored is not None:
        tokenizer = _rebuild(source_id, *stored, limits)
    if tokenizer is None:
        return Answer(NotHeld(), _held())
    if isinstance(tokenizer, Unbuildable):
        return Answer(tokenizer, _held())
    add_special, parse_special = flags
    offset, limit = window
    try:
        runs = [
            _run(tokenizer, text, add_special, parse_special, slice(offset, offset + limit))
            for text in texts
        ]
    except BaseException:
        # A tokenizer that failed (a panic in the library) may be left in any state.
        _CACHE.drop(source_id)
        raise
    pieces = {i: tokenizer.piece(i) for run in runs for i in set(run.ids)}
    return Answer(Tokenized(runs, pieces), _held())
