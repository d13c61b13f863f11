"""The GGUF header parser: real vocab files, every truncation, hostile bytes, extraction."""

from __future__ import annotations

import contextlib
import pickle
import struct
import tracemalloc
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from gguf.constants import GGUFValueType as T
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.sources.gguf import (
    GGUFError,
    GGUFHeader,
    IncompleteHeader,
    TensorInfo,
    read_header,
)
from app.sources.gguf_model import quantization_name, source_from_header, split_info
from tests.support.gguf_fields import reference
from tests.support.shared_data import VOCAB_DIR, needs_shared

VOCAB_FILES = sorted(VOCAB_DIR.glob("*.gguf"))
LLAMA_SPM = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
_CODES = {T.UINT8: "B", T.INT8: "b", T.UINT16: "H", T.INT16: "h", T.UINT32: "I"}
_CODES |= {T.INT32: "i", T.FLOAT32: "f", T.BOOL: "?", T.UINT64: "Q", T.INT64: "q"}
_CODES |= {T.FLOAT64: "d"}


@cache
def _data(path: Path) -> bytes:
    return path.read_bytes()


def _value(vtype: int, value: Any, o: str = "<") -> bytes:
    """Encode one value; arrays are given as (element type, items)."""
    if vtype == T.STRING:
        raw = value if isinstance(value, bytes) else value.encode()
        return struct.pack(o + "Q", len(raw)) + raw
    if vtype == T.ARRAY:
        etype, items = value
        body = b"".join(_value(etype, item, o) for item in items)
        return struct.pack(o + "IQ", etype, len(items)) + body
    return struct.pack(o + _CODES[vtype], value)


def _gguf(kvs: list[tuple[str, int, Any]], tensors: tuple = (), o: str = "<", v: int = 3) -> bytes:
    """A GGUF header built by hand: KV triples and (name, dims, type, offset) tensors."""
    out = b"GGUF" + struct.pack(o + "IQQ", v, len(tensors), len(kvs))
    for key, vtype, value in kvs:
        out += _value(T.STRING, key, o) + struct.pack(o + "I", vtype) + _value(vtype, value, o)
    for name, dims, ttype, offset in tensors:
        out += _value(T.STRING, name, o) + struct.pack(f"{o}I{len(dims)}Q", len(dims), *dims)
        out += struct.pack(o + "I", ttype) + struct.pack(o + "Q", offset)
    return out


def _complete(prefix: bytes) -> GGUFHeader:
    result = read_header(prefix)
    assert isinstance(result, GGUFHeader), result
    return result


def _reference(path: Path) -> dict[str, Any]:
    fields = reference(path).fields.items()
    return {k: value for k, value in fields if not k.startswith("GGUF.")}


# Real files, checked against gguf-py reading the whole file.


@needs_shared
@pytest.mark.parametrize("path", VOCAB_FILES, ids=lambda p: p.stem)
def test_real_file_matches_gguf_py(path: Path) -> None:
    header, reference = _complete(_data(path)), _reference(path)
    assert header.fields == reference and list(header.fields) == list(reference)
    assert (header.version, header.byte_order, header.tensor_count) == (3, "little", 0)
    assert header.tensors_complete and header.tensors == []
    assert header.kv_bytes == header.header_bytes <= len(_data(path))


GPT2 = VOCAB_DIR / "ggml-vocab-gpt-2.gguf"


@needs_shared
@pytest.mark.parametrize("path", [LLAMA_SPM, GPT2], ids=lambda p: p.stem)
def test_every_cut_inside_the_kv_section_is_incomplete(path: Path) -> None:
    data = _data(path)
    kv_bytes = _complete(data).kv_bytes
    cuts = {0, 3, 4, 7, 8, 23, 24, kv_bytes - 1}
    for start in reference(path).kv_offsets:
        cuts |= {start, start + 1, start + 7, start + 8, start + 12, start + 13, start + 20}
    cuts |= set(range(25, kv_bytes, max(1, kv_bytes // 100)))
    for cut in sorted(c for c in cuts if c < kv_bytes):
        result = read_header(data[:cut])
        assert isinstance(result, IncompleteHeader), cut
        # A lower bound: more than we gave, never more than the real header needs.
        assert cut < result.need_bytes <= kv_bytes, (cut, result)


@needs_shared
@pytest.mark.parametrize("path", VOCAB_FILES, ids=lambda p: p.stem)
def test_feeding_need_bytes_converges(path: Path) -> None:
    data, size, rounds = _data(path), 16, 0
    while isinstance(result := read_header(data[:size]), IncompleteHeader):
        assert result.need_bytes > size
        size, rounds = result.need_bytes, rounds + 1
        assert rounds < 1000
    assert result.fields == _complete(data).fields
    assert size <= len(data)


# Hand-built files: the happy path, then hostile ones.

HEAD = b"GGUF" + struct.pack("<I", 3)
ONE_KEY = HEAD + struct.pack("<QQ", 0, 1) + _value(T.STRING, "k")  # the value type is at 33


def test_every_value_type_and_nested_arrays() -> None:
    kvs = [(f"k.{t.name.lower()}", t, 1) for t in _CODES if t not in (T.FLOAT32, T.FLOAT64)]
    kvs += [("k.f32", T.FLOAT32, 0.5), ("k.f64", T.FLOAT64, -2.25), ("k.str", T.STRING, "héllo")]
    kvs += [("k.bools", T.ARRAY, (T.BOOL, [True, False, True]))]
    kvs += [("k.strs", T.ARRAY, (T.STRING, ["a", "", "ü"]))]
    kvs += [("k.i64s", T.ARRAY, (T.INT64, [-(2**63), 2**63 - 1]))]
    nested = (T.ARRAY, [(T.INT8, [-1, 2]), (T.STRING, ["x"]), (T.ARRAY, [(T.UINT8, [])])])
    kvs += [("k.nested", T.ARRAY, nested), ("k.empty", T.ARRAY, (T.UINT32, []))]
    fields = _complete(_gguf(kvs)).fields
    assert fields["k.bool"] is True and fields["k.uint64"] == 1 and fields["k.f32"] == 0.5
    assert (fields["k.f64"], fields["k.str"], fields["k.bools"]) == (-2.25, "héllo", [1, 0, 1])
    assert fields["k.strs"] == ["a", "", "ü"] and fields["k.i64s"] == [-(2**63), 2**63 - 1]
    assert fields["k.nested"] == [[-1, 2], ["x"], [[]]] and fields["k.empty"] == []


def test_big_endian_file() -> None:
    kvs = [("general.name", T.STRING, "be"), ("n", T.UINT32, 0x01020304)]
    kvs += [("a", T.ARRAY, (T.INT16, [-2, 300])), ("s", T.ARRAY, (T.STRING, ["x", "yz"]))]
    data = _gguf(kvs, tensors=(("w", (2, 3), 1, 64),), o=">")
    assert data[4:8] == b"\x00\x00\x00\x03"
    header = _complete(data)
    assert (header.byte_order, header.version) == ("big", 3)
    assert header.fields == {"general.name": "be", "n": 16909060, "a": [-2, 300], "s": ["x", "yz"]}
    assert header.tensors == [TensorInfo("w", (2, 3), 1, 64)]


def test_version_2_reads_and_version_1_is_refused() -> None:
    assert _complete(_gguf([("a", T.UINT8, 7)], v=2)).fields == {"a": 7}
    with pytest.raises(GGUFError, match="version 1") as info:
        read_header(_gguf([], v=1))
    assert info.value.offset == 4
    with pytest.raises(GGUFError, match="version 7"):
        read_header(_gguf([], v=7))


def test_bad_magic() -> None:
    with pytest.raises(GGUFError) as info:
        read_header(b"PK\x03\x04" + bytes(40))
    assert info.value.offset == 0
    assert str(info.value) == (
        'this file does not start with "GGUF", so it is not a GGUF file '
        "(it starts with the bytes 50 4B 03 04); it looks like a ZIP archive"
    )
    with pytest.raises(GGUFError):
        read_header(b"GX")  # wrong even before four bytes have arrived
    assert isinstance(read_header(b"GG"), IncompleteHeader)


@pytest.mark.parametrize(
    "data, offset, match",
    [
        (HEAD + struct.pack("<QQ", 0, 10**9), 16, "at byte 16: it counts 1,000,000,000 keys"),
        (HEAD + struct.pack("<QQ", 2**40, 1), 8, "at byte 8: it counts 1,099,511,627,776 tensors"),
        (ONE_KEY + struct.pack("<IQ", 8, 2**63), 37, "a string claims to be"),
        (ONE_KEY + struct.pack("<IIQ", 9, 0, 2**40), 41, "claims to be"),
        (ONE_KEY + struct.pack("<IIQ", 9, 9, 2**40), 41, "claims to be"),
        (HEAD + struct.pack("<QQQ", 0, 1, 2**20), 24, "a key claims to be 1,048,576 bytes long"),
        (_gguf([("k", T.UINT8, 1)])[:-1], None, None),
    ],
    ids=["1e9-kvs", "2^40-tensor", "2^63-string", "2^40-array", "2^40-arrays", "1MiB-key", "short"],
)  # fmt: skip
def test_impossible_lengths_fail_fast(data: bytes, offset: int | None, match: str | None) -> None:
    tracemalloc.start()
    try:
        if match is None:
            assert isinstance(read_header(data), IncompleteHeader)
            return
        with pytest.raises(GGUFError, match=match) as info:
            read_header(data)
        assert info.value.offset == offset
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 1 << 20


def test_plausible_lengths_past_the_prefix_are_incomplete() -> None:
    head = HEAD + struct.pack("<QQ", 0, 2) + _value(T.STRING, "k")
    big_string = head + struct.pack("<IQ", 8, 10**9) + b"abc"
    result = read_header(big_string)
    assert isinstance(result, IncompleteHeader)
    assert result.need_bytes == 24 + 9 + 4 + 8 + 10**9 + 13  # the string, then one more KV
    assert "KV 1 of 2" in result.message and "'k'" in result.message
    strings = head + struct.pack("<IIQ", 9, 8, 10**6) + _value(T.STRING, "x")
    result = read_header(strings)
    assert isinstance(result, IncompleteHeader)
    assert result.need_bytes == 24 + 9 + 16 + 8 * 10**6 + 13  # a million lengths, one more KV


def test_unknown_types_are_errors_with_offsets() -> None:
    head = ONE_KEY
    with pytest.raises(GGUFError, match="at byte 33: a value of type 99, which GGUF") as info:
        read_header(head + struct.pack("<I", 99) + bytes(16))
    assert info.value.offset == 33
    with pytest.raises(GGUFError, match="at byte 37: an array of type 99, which GGUF"):
        read_header(head + struct.pack("<IIQ", 9, 99, 1) + bytes(16))


def test_hostile_structure() -> None:
    with pytest.raises(GGUFError, match="the key 'a' appears twice"):
        read_header(_gguf([("a", T.UINT8, 1), ("a", T.UINT8, 2)]))
    deep: tuple = (T.UINT8, [])
    for _ in range(20):
        deep = (T.ARRAY, [deep])
    with pytest.raises(GGUFError, match="nested deeper"):
        read_header(_gguf([("deep", T.ARRAY, deep)]))
    with pytest.raises(GGUFError, match="5 dimensions"):
        read_header(_gguf([], tensors=(("t", (1, 1, 1, 1, 1), 0, 0),)))


def test_invalid_utf8_is_replaced() -> None:
    kvs = [(b"k\xff", T.STRING, b"a\xc3"), ("l", T.ARRAY, (T.STRING, [b"\xe2\x82", b"ok"]))]
    assert _complete(_gguf(kvs)).fields == {"k\ufffd": "a\ufffd", "l": ["\ufffd", "ok"]}


def test_tensor_infos_and_truncation_inside_them() -> None:
    tensors = (("token_embd.weight", (4096, 32000), 12, 0), ("output_norm.weight", (4096,), 0, 64))
    data = _gguf([("general.architecture", T.STRING, "llama")], tensors=tensors)
    header = _complete(data)
    assert header.tensors == [TensorInfo(*t) for t in tensors] and header.tensors_complete
    assert header.header_bytes == len(data) and header.kv_bytes < header.header_bytes
    for cut in range(header.kv_bytes, len(data)):
        partial = _complete(data[:cut])
        assert partial.fields == header.fields and not partial.tensors_complete
        assert partial.tensors == header.tensors[: len(partial.tensors)]
        assert partial.header_bytes <= cut
    skipped = _complete(data[: header.kv_bytes])
    assert skipped.tensors == [] and not skipped.tensors_complete
    lean = read_header(data, want_tensors=False)
    assert isinstance(lean, GGUFHeader) and lean.tensors == []
    assert lean.header_bytes == lean.kv_bytes


def test_accepts_any_bytes_like() -> None:
    data = _gguf([("a", T.UINT8, 1)])
    assert _complete(bytearray(data)).fields == _complete(memoryview(data)).fields == {"a": 1}


def test_gguf_error_behaves_like_an_exception() -> None:
    error = GGUFError(4, "bad version")
    assert pickle.loads(pickle.dumps(error)) == error
    assert str(error) == "bad version"

    @contextlib.contextmanager
    def passthrough():
        yield

    # contextlib assigns __traceback__ on the way out.
    with pytest.raises(GGUFError), passthrough():
        read_header(b"nope")


def _type_of(value: Any) -> int:
    kinds = ((bool, T.BOOL), (int, T.UINT32), (float, T.FLOAT32), (str, T.STRING))
    return next(t for kind, t in kinds if isinstance(value, kind))


@cache
def _small_real_header() -> bytes:
    """llama-spm's header with the vocab cut to 300 entries and two tensor infos added."""
    kvs = []
    for key, value in _complete(_data(LLAMA_SPM)).fields.items():
        if isinstance(value, list):
            kvs.append((key, T.ARRAY, (_type_of(value[0]), value[:300])))
        else:
            kvs.append((key, _type_of(value), value))
    tensors = (("token_embd.weight", (4096, 300), 1, 0), ("output.weight", (4096, 300), 1, 2**24))
    return _gguf(kvs, tensors)


@needs_shared
@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_damage_only_gives_the_three_outcomes(data: st.DataObject) -> None:
    original = _small_real_header()
    damaged = bytearray(original)
    spots = st.one_of(st.integers(0, 700), st.integers(0, len(original) - 1))
    for at, value in data.draw(st.lists(st.tuples(spots, st.integers(0, 255)), max_size=6)):
        damaged[at] = value
    cut = data.draw(st.one_of(st.just(len(original)), st.integers(0, len(original))))
    tracemalloc.start()
    try:
        result = read_header(bytes(damaged[:cut]))
    except GGUFError as error:
        result = error
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert isinstance(result, GGUFHeader | IncompleteHeader | GGUFError)
    if isinstance(result, IncompleteHeader):
        assert result.need_bytes > cut
    event(type(result).__name__)
    if damaged == original:  # undamaged: the cut alone decides the outcome
        full = _complete(original)
        if cut < full.kv_bytes:
            assert isinstance(result, IncompleteHeader) and result.need_bytes <= full.kv_bytes
        else:
            assert isinstance(result, GGUFHeader) and result.fields == full.fields
            assert result.tensors_complete == (cut == len(original))
    assert peak < 64 << 20


# Extraction of what the playground shows.


@needs_shared
def test_llama_spm_source() -> None:
    source = source_from_header(_complete(_data(LLAMA_SPM)), "ggml-vocab-llama-spm.gguf")
    assert source.special_tokens == {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    assert (source.add_bos_token, source.add_eos_token) == (True, False)
    assert (source.tokenizer_model, source.vocab_size) == ("llama", 32000)
    assert source.metadata == {
        "architecture": "llama",
        "name": "llama-spm",
        "file_type": 1,
        "quantization": "F16",
    }
    assert source.templates == {} and source.split is None


def test_templates_special_tokens_and_split_from_keys() -> None:
    kvs = [
        ("tokenizer.ggml.tokens", T.ARRAY, (T.STRING, ["<a>", "<b>", "<c>"])),
        ("tokenizer.ggml.eos_token_id", T.UINT32, 2),
        ("tokenizer.ggml.padding_token_id", T.INT32, -1),
        ("tokenizer.ggml.bos_token_id", T.UINT32, 3),
        ("tokenizer.chat_template", T.STRING, "{{ x }}"),
        ("tokenizer.chat_templates", T.ARRAY, (T.STRING, ["tool_use", "missing"])),
        ("tokenizer.chat_template.tool_use", T.STRING, "{{ tools }}"),
        ("tokenizer.chat_template.rag", T.STRING, "{{ d }}"),
        ("general.description", T.STRING, "d" * 5000),
        ("general.tags", T.ARRAY, (T.STRING, ["a"])),
        ("general.file_type", T.UINT32, 15),
        ("split.no", T.UINT16, 0),
        ("split.count", T.UINT16, 3),
    ]
    source = source_from_header(_complete(_gguf(kvs)), "model-00002-of-00003.gguf")
    assert source.special_tokens == {"eos_token": "<c>"}  # pad -1 and bos 3 are out of range
    assert source.templates == {"default": "{{ x }}", "tool_use": "{{ tools }}", "rag": "{{ d }}"}
    assert source.split == {"shard": 1, "count": 3, "first": True}  # the header wins
    assert source.metadata["quantization"] == "Q4_K_M" and "tags" not in source.metadata
    assert len(source.metadata["description"]) == 2001


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Qwen3-235B-Q4_K_M-00002-of-00005.gguf", {"shard": 2, "count": 5, "first": False}),
        ("model-00001-OF-00001.GGUF", {"shard": 1, "count": 1, "first": True}),
        ("model-00004-of-00003.gguf", None),
        ("model-00000-of-00003.gguf", None),
        ("model-00001-of-00003.gguf.part", None),
        ("model.gguf", None),
        (None, None),
    ],
)
def test_split_from_file_name(name: str | None, expected: dict | None) -> None:
    assert split_info({}, name) == expected


def test_quantization_names() -> None:
    assert [quantization_name(t) for t in (0, 1, 7, 15, 32, 4, 99999)] == [
        "F32", "F16", "Q8_0", "Q4_K_M", "BF16", None, None,
    ]  # fmt: skip
