"""A streaming GGUF header parser that works on a byte prefix of the file.

Only the header matters to us (metadata, tokenizer, chat templates), and model files are
tens of gigabytes, often fetched over HTTP. So the caller reads a prefix, calls
`read_header`, and grows the prefix while the answer is an `IncompleteHeader`.
gguf-py's `GGUFReader` maps the whole file and cannot do that; its constants are reused here.

Layout (versions 2 and 3): magic, u32 version, u64 tensor count, u64 KV count, the KV
pairs (u64-length key, u32 value type, value), then the tensor infos.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gguf.constants import GGUF_MAGIC, GGUFValueType

from app.errors import ApiError

#: The magic as it appears on disk; gguf-py stores it as a little-endian u32.
MAGIC = GGUF_MAGIC.to_bytes(4, "little")
#: Nothing real is this big: a length or count reaching past it is corruption, not a short read.
MAX_PLAUSIBLE_BYTES = 1 << 40
#: More KV pairs than this is corruption (real files have tens to hundreds).
MAX_KV_COUNT = 1 << 24
#: More tensors than this is corruption (the largest models have tens of thousands).
MAX_TENSOR_COUNT = 1 << 24
#: The GGUF spec limits keys to 65535 bytes; we apply the same to tensor names.
MAX_NAME_BYTES = (1 << 16) - 1
#: GGML_MAX_DIMS in ggml.
MAX_TENSOR_DIMS = 4
#: Arrays of arrays are legal but never deep; the cap keeps recursion bounded.
MAX_ARRAY_DEPTH = 8
#: Array items read in one header when the caller gives no limit: the largest
#: vocabularies have about 260k tokens, each with a score and a type, and as many merges.
MAX_ARRAY_ITEMS = 4_000_000

_FIXED_HEADER = 24  # magic + version + tensor count + KV count
_MIN_KV = 8 + 4 + 1  # key length + value type + smallest value
_CODES = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "B",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}
_SIZES = {t: struct.calcsize("<" + c) for t, c in _CODES.items()}
_MIN_SIZES = {**_SIZES, GGUFValueType.STRING: 8, GGUFValueType.ARRAY: 12}
_STRUCTS = {o: {t: struct.Struct(o + c) for t, c in _CODES.items()} for o in "<>"}


@dataclass
class GGUFError(Exception):
    """The bytes are not a valid GGUF header: where, and what was expected.

    `limit` names the limit a valid but oversized header ran into, if that is why.
    Not frozen: Python sets `__traceback__` on exceptions as they propagate.
    """

    offset: int
    message: str
    limit: str | None = None

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle their `args`, which a dataclass leaves empty.
        return (type(self), (self.offset, self.message, self.limit))


@dataclass
class IncompleteHeader(ApiError):
    """The prefix ends inside the KV section; `need_bytes` is a lower bound on the prefix.

    A value `read_header` returns, not raises (the caller reads more and tries again); the
    API answers it as 409, asking for `need_bytes`. Not frozen, so that it can be raised.
    """

    need_bytes: int
    message: str

    status: ClassVar[int] = 409
    title: ClassVar[str] = "Send more of the file"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle their `args`, which a dataclass leaves empty.
        return (type(self), (self.need_bytes, self.message))

    def to_json(self) -> dict[str, Any]:
        return {"type": "IncompleteHeader", "message": self.message, "need_bytes": self.need_bytes}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's name, shape, ggml type and offset inside the data section."""

    name: str
    dims: tuple[int, ...]
    type: int
    offset: int


@dataclass
class GGUFHeader:
    """Everything before the tensor data. `tensors` may be cut short: see `tensors_complete`."""

    version: int
    byte_order: str
    tensor_count: int
    fields: dict[str, Any]
    tensors: list[TensorInfo]
    header_bytes: int
    kv_bytes: int
    tensors_complete: bool = field(default=True)


class _Short(Exception):
    """Internal: a read ran past the prefix; `need` is the prefix length it needed."""

    def __init__(self, need: int, where: str = "") -> None:
        super().__init__(need)
        self.need = need
        self.where = where


class _Reader:
    """A cursor over the prefix with the file's byte order; arrays hold `max_items` in all."""

    def __init__(self, buf: bytes, order: str, pos: int, max_items: int) -> None:
        self.buf, self.order, self.pos, self.end = buf, order, pos, len(buf)
        self.max_items = max_items
        self.items_left = max_items
        self.structs = _STRUCTS[order]
        self.u32s = self.structs[GGUFValueType.UINT32]
        self.u64s = self.structs[GGUFValueType.UINT64]

    def take(self, size: int) -> int:
        """Advance past `size` bytes and return where they start."""
        start = self.pos
        if start + size > self.end:
            raise _Short(start + size)
        self.pos = start + size
        return start

    def u32(self) -> int:
        return self.u32s.unpack_from(self.buf, self.take(4))[0]

    def u64(self) -> int:
        return self.u64s.unpack_from(self.buf, self.take(8))[0]

    def check_span(self, at: int, size: int, what: str) -> None:
        """Refuse a length no real file could have, before anything is allocated."""
        if self.pos + size > MAX_PLAUSIBLE_BYTES:
            raise GGUFError(at, _implausible(at, f"{what} claims to be {size:,} bytes long"))

    def string(self, what: str, cap: int = MAX_PLAUSIBLE_BYTES) -> str:
        at = self.pos
        size = self.u64()
        if size > cap:
            raise GGUFError(at, _implausible(at, f"{what} claims to be {size:,} bytes long"))
        self.check_span(at, size, what)
        start = self.take(size)
        return self.buf[start : start + size].decode("utf-8", "replace")


def _value(r: _Reader, vtype: int, at: int, depth: int) -> Any:
    """One value of type `vtype`; `at` is where the type was read, for error messages."""
    if vtype == GGUFValueType.STRING:
        return r.string("a string")
    if vtype == GGUFValueType.ARRAY:
        return _array(r, depth)
    unpacker = r.structs.get(vtype)  # type: ignore[call-overload]
    if unpacker is None:
        raise GGUFError(at, _damaged(at, f"a value of type {vtype}, which GGUF does not define"))
    (value,) = unpacker.unpack_from(r.buf, r.take(unpacker.size))
    return value != 0 if vtype == GGUFValueType.BOOL else value


def _array(r: _Reader, depth: int) -> list[Any]:
    """An array: u32 element type, u64 count, then the elements."""
    at = r.pos
    etype = r.u32()
    count = r.u64()
    if etype not in _MIN_SIZES:
        raise GGUFError(at, _damaged(at, f"an array of type {etype}, which GGUF does not define"))
    if depth >= MAX_ARRAY_DEPTH:
        raise GGUFError(at, _damaged(at, f"arrays nested deeper than {MAX_ARRAY_DEPTH}"))
    r.check_span(at + 4, count * _MIN_SIZES[etype], f"an array of {count} items")
    if count > r.items_left:
        raise GGUFError(
            at,
            f"an array of {count:,} items at offset {at} takes the header past the "
            f"{r.max_items:,} array items this service reads (PLAYGROUND_GGUF_ARRAY_ITEMS)",
            limit="gguf_array_items",
        )
    r.items_left -= count
    if r.pos + count * _MIN_SIZES[etype] > r.end:
        raise _Short(r.pos + count * _MIN_SIZES[etype])  # fail fast, no partial work
    if etype == GGUFValueType.STRING:
        return _strings(r, count)
    if etype == GGUFValueType.ARRAY:
        return _arrays(r, count, depth + 1)
    start = r.take(count * _SIZES[etype])
    values = struct.unpack_from(f"{r.order}{count}{_CODES[etype]}", r.buf, start)
    return [v != 0 for v in values] if etype == GGUFValueType.BOOL else list(values)


def _strings(r: _Reader, count: int) -> list[str]:
    """The hot loop (150k tokens, 150k merges): locals only, no method calls per item."""
    buf, pos, end, unpack = r.buf, r.pos, r.end, r.u64s.unpack_from
    out: list[str] = []
    append = out.append
    for i in range(count):
        if pos + 8 > end:
            raise _Short(pos + 8 + (count - i - 1) * 8)
        (size,) = unpack(buf, pos)
        stop = pos + 8 + size
        if stop > end:
            r.pos = pos + 8
            r.check_span(pos, size, "a string")
            raise _Short(stop + (count - i - 1) * 8)
        append(buf[pos + 8 : stop].decode("utf-8", "replace"))
        pos = stop
    r.pos = pos
    return out


def _arrays(r: _Reader, count: int, depth: int) -> list[Any]:
    """An array of arrays, each with its own element type and count."""
    out: list[Any] = []
    for i in range(count):
        try:
            out.append(_array(r, depth))
        except _Short as short:
            short.need += (count - i - 1) * _MIN_SIZES[GGUFValueType.ARRAY]
            raise
    return out


def _damaged(at: int, what: str) -> str:
    """A message for bytes no real GGUF file holds: where, and what is wrong there."""
    return f"the header is damaged at byte {at:,}: {what}"


def _implausible(at: int, claim: str) -> str:
    """A message for a size or count larger than any model, refused before allocating."""
    return _damaged(at, f"{claim}, more than any real model file has")


#: What a file that is not GGUF often is, by its first bytes.
_OTHER_FORMATS = (
    (b"version https://git-lfs", "a Git LFS pointer, not the model file it stands for"),
    (b"<", "a web page (HTML), perhaps saved from a download link"),
    (b"{", "JSON: load tokenizer files as Hugging Face files"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x93NUMPY", "a NumPy array"),
)


def not_gguf(buf: bytes) -> str:
    """Why `buf` is not a GGUF file, in words: what it starts with, and what it looks like."""
    head = buf[:4]
    if all(32 <= byte < 127 for byte in head):
        shown = f'"{head.decode("ascii")}"'
    else:
        shown = "the bytes " + " ".join(f"{byte:02X}" for byte in head)
    message = (
        f'this file does not start with "GGUF", so it is not a GGUF file (it starts with {shown})'
    )
    text = buf[:64].lstrip()  # a page or JSON may start with blank lines
    for start, kind in _OTHER_FORMATS:
        if text.startswith(start):
            return f"{message}; it looks like {kind}"
    return message


def _start(buf: bytes) -> tuple[str, int]:
    """Check the magic and version; return the byte order and version."""
    if buf[:4] != MAGIC[: len(buf)]:
        raise GGUFError(0, not_gguf(buf))
    if len(buf) < 8:
        raise _Short(_FIXED_HEADER)
    little = int.from_bytes(buf[4:8], "little")
    big = int.from_bytes(buf[4:8], "big")
    # A version of 0x03000000 read little-endian is a big-endian version 3 file.
    order, version = ("<", little) if little <= 0xFFFF else (">", big)
    if version == 1:
        message = "this is a GGUF file of version 1 (2023), which is not supported: convert "
        raise GGUFError(4, message + "the model again with a current llama.cpp")
    if version not in (2, 3):
        message = f"this GGUF file says it is of version {version}; versions 2 and 3 can be read"
        raise GGUFError(4, message)
    return order, version


def _counts(r: _Reader) -> tuple[int, int]:
    """The tensor count and KV count, refused if no real file could have them."""
    tensor_count, kv_count = r.u64(), r.u64()
    if tensor_count > MAX_TENSOR_COUNT:
        raise GGUFError(8, _implausible(8, f"it counts {tensor_count:,} tensors"))
    if kv_count > MAX_KV_COUNT:
        raise GGUFError(16, _implausible(16, f"it counts {kv_count:,} keys"))
    return tensor_count, kv_count


def _kvs(r: _Reader, kv_count: int) -> dict[str, Any]:
    """The KV section; a short read says which KV it stopped in."""
    fields: dict[str, Any] = {}
    for k in range(kv_count):
        at, key = r.pos, None
        try:
            key = r.string("a key", MAX_NAME_BYTES)
            if key in fields:
                raise GGUFError(at, _damaged(at, f"the key {key!r} appears twice"))
            type_at = r.pos
            fields[key] = _value(r, r.u32(), type_at, 0)
        except _Short as short:
            short.need += (kv_count - k - 1) * _MIN_KV
            name = f"key {key!r}" if key is not None else "its key"
            short.where = f"in KV {k + 1} of {kv_count} ({name}, starting at offset {at})"
            raise
    return fields


def _tensor(r: _Reader) -> TensorInfo:
    at = r.pos
    name = r.string("a tensor name", MAX_NAME_BYTES)
    n_dims = r.u32()
    if n_dims > MAX_TENSOR_DIMS:
        raise GGUFError(at, _damaged(at, f"tensor {name!r} has {n_dims} dimensions (at most 4)"))
    dims = struct.unpack_from(f"{r.order}{n_dims}Q", r.buf, r.take(8 * n_dims))
    return TensorInfo(name, dims, r.u32(), r.u64())


def _tensors(r: _Reader, count: int) -> tuple[list[TensorInfo], int, bool]:
    """As many tensor infos as the prefix holds; returns them, where they end, and if all."""
    tensors: list[TensorInfo] = []
    end = r.pos
    try:
        for _ in range(count):
            tensors.append(_tensor(r))
            end = r.pos
    except _Short:
        return tensors, end, False
    return tensors, end, True


def read_header(
    prefix: bytes, *, want_tensors: bool = True, max_items: int = MAX_ARRAY_ITEMS
) -> GGUFHeader | IncompleteHeader:
    """Parse the GGUF header in `prefix` (the first bytes of a file).

    Returns an `IncompleteHeader` if the prefix ends before the KV section does, and raises
    `GGUFError` (nothing else) if the bytes cannot be a GGUF file, or if its arrays hold
    more than `max_items` items in all (memory grows with items, not bytes: a byte array
    of 64 MiB becomes 64 million Python objects). With `want_tensors=False` the tensor infos
    are skipped: `tensors` is empty and `header_bytes == kv_bytes`.
    """
    buf = prefix if type(prefix) is bytes else bytes(prefix)
    try:
        order, version = _start(buf)
        r = _Reader(buf, order, 8, max_items)
        tensor_count, kv_count = _counts(r)
        fields = _kvs(r, kv_count)
    except _Short as short:
        need = max(short.need, _FIXED_HEADER)
        where = short.where or "in the fixed header"
        return IncompleteHeader(
            need, f"the header continues past {len(buf)} bytes {where}; need at least {need}"
        )
    kv_bytes = r.pos
    if want_tensors:
        tensors, header_bytes, complete = _tensors(r, tensor_count)
    else:
        tensors, header_bytes, complete = [], kv_bytes, tensor_count == 0
    byte_order = "little" if order == "<" else "big"
    return GGUFHeader(
        version, byte_order, tensor_count, fields, tensors, header_bytes, kv_bytes, complete
    )
