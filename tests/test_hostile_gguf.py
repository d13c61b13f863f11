"""Uploaded GGUF headers whose keys hold the wrong types, and floats JSON cannot carry.

The template of such a file is still usable, so the source loads; a vocabulary that
cannot be read is `"supported": false` with a reason naming the key.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest
from gguf.constants import GGUFValueType as T

from app.sources.gguf_model import split_info
from tests.support.sources import built_with

_CODES = {T.UINT8: "B", T.INT8: "b", T.UINT16: "H", T.INT16: "h", T.UINT32: "I"}
_CODES |= {T.INT32: "i", T.FLOAT32: "f", T.BOOL: "?", T.UINT64: "Q", T.INT64: "q"}
_CODES |= {T.FLOAT64: "d"}
TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def encode(vtype: int, value: Any) -> bytes:
    """One GGUF value; an array is given as (element type, items)."""
    if vtype == T.STRING:
        raw = value.encode()
        return struct.pack("<Q", len(raw)) + raw
    if vtype == T.ARRAY:
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(encode(etype, i) for i in items)
    return struct.pack("<" + _CODES[vtype], value)


def gguf(kvs: dict[str, tuple[int, Any]]) -> bytes:
    """A GGUF v3 header with these (type, value) keys and no tensors."""
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    for key, (vtype, value) in kvs.items():
        out += encode(T.STRING, key) + struct.pack("<I", vtype) + encode(vtype, value)
    return out


def strings(*items: str) -> tuple[int, tuple[int, list[str]]]:
    return T.ARRAY, (T.STRING, list(items))


def array(etype: int, items: list) -> tuple[int, tuple[int, list]]:
    return T.ARRAY, (etype, items)


#: A small SentencePiece vocabulary that builds, with a template.
SPM = {
    "general.architecture": (T.STRING, "llama"),
    "tokenizer.chat_template": (T.STRING, TEMPLATE),
    "tokenizer.ggml.model": (T.STRING, "llama"),
    "tokenizer.ggml.tokens": strings("<unk>", "<s>", "</s>", "▁a", "b"),
    "tokenizer.ggml.scores": array(T.FLOAT32, [0.0, 0.0, 0.0, -1.0, -2.0]),
    "tokenizer.ggml.token_type": array(T.INT32, [2, 3, 3, 1, 1]),
}
#: A small byte-level BPE vocabulary that builds.
BPE = {
    **SPM,
    "tokenizer.ggml.model": (T.STRING, "gpt2"),
    "tokenizer.ggml.pre": (T.STRING, "default"),
    "tokenizer.ggml.tokens": strings("a", "b", "ab"),
    "tokenizer.ggml.scores": array(T.FLOAT32, [0.0, 0.0, 0.0]),
    "tokenizer.ggml.token_type": array(T.INT32, [1, 1, 1]),
    "tokenizer.ggml.merges": strings("a b"),
}
#: A small WordPiece vocabulary that builds.
WPM = {
    **SPM,
    "tokenizer.ggml.model": (T.STRING, "bert"),
    "tokenizer.ggml.tokens": strings("[UNK]", "[CLS]", "[SEP]", "▁a", "b"),
    "tokenizer.ggml.unknown_token_id": (T.UINT32, 0),
    "tokenizer.ggml.bos_token_id": (T.UINT32, 1),
    "tokenizer.ggml.seperator_token_id": (T.UINT32, 2),
}
K = "tokenizer.ggml."

#: (base vocabulary, the key made hostile, its new value): every key the vocabulary reader uses.
HOSTILE = [
    (SPM, "model", array(T.STRING, ["llama"])),
    (SPM, "model", (T.INT32, 7)),
    (SPM, "tokens", (T.UINT32, 5)),
    (SPM, "tokens", (T.STRING, "abcde")),
    (SPM, "tokens", array(T.UINT64, [1 << 40, 1, 2, 3, 4])),  # was a 1 TB bytes() call
    (SPM, "tokens", array(T.ARRAY, [(T.INT8, [-1])] * 5)),
    (SPM, "scores", array(T.STRING, ["x"] * 5)),
    (SPM, "scores", (T.FLOAT32, 1.0)),
    (SPM, "scores", array(T.INT32, [0] * 5)),
    (SPM, "scores", array(T.ARRAY, [(T.FLOAT32, [1.0])] * 5)),
    (SPM, "scores", array(T.FLOAT32, [0.0, 0.0])),
    (SPM, "scores", array(T.FLOAT32, [0.0, math.nan, 0.0, 0.0, 0.0])),
    (SPM, "token_type", array(T.STRING, ["1"] * 5)),
    (SPM, "token_type", (T.INT32, 3)),
    (SPM, "token_type", array(T.FLOAT32, [math.nan] * 5)),
    (SPM, "token_type", array(T.BOOL, [True] * 5)),
    (SPM, "token_type", array(T.INT32, [1])),
    (SPM, "bos_token_id", (T.STRING, "1")),
    (SPM, "eos_token_id", (T.FLOAT32, math.nan)),
    (SPM, "unknown_token_id", (T.BOOL, True)),
    (SPM, "fim_pre_token_id", array(T.INT32, [1])),
    (SPM, "add_bos_token", (T.STRING, "")),
    (SPM, "add_eos_token", (T.UINT8, 1)),
    (SPM, "add_space_prefix", array(T.STRING, [])),
    (BPE, "pre", array(T.INT32, [1, 2])),
    (BPE, "merges", (T.UINT32, 5)),
    (BPE, "merges", array(T.INT32, [1, 2])),
    (WPM, "seperator_token_id", (T.FLOAT64, 2.0)),
    (WPM, "add_sep_token", (T.FLOAT64, 1.0)),
    (WPM, "normalizer.lowercase", (T.STRING, "yes")),
    (WPM, "normalizer.strip_accents", (T.INT32, 0)),
]


def strict_json(text: str) -> Any:
    """Parse as a browser's JSON.parse would: `NaN` and `Infinity` are errors."""

    def refuse(word: str) -> None:
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


def upload(client, data: bytes) -> tuple[int, dict]:
    """The upload's status, and the source once its tokenizer is built (or failed)."""
    response = client.post(
        "/api/sources/gguf?name=hostile.gguf", data=data, content_type="application/octet-stream"
    )
    answer = strict_json(response.get_data(as_text=True))
    if response.status_code == 200:
        answer = built_with(lambda path: strict_json(client.get(path).get_data(True)), answer)
    return response.status_code, answer


@pytest.mark.parametrize("base", [SPM, BPE, WPM], ids=["spm", "bpe", "wpm"])
def test_the_small_vocabularies_build(client, base):
    status, answer = upload(client, gguf(base))
    assert status == 200, answer
    assert answer["tokenizer"]["supported"], answer["tokenizer"]["reason"]


@pytest.mark.parametrize(
    ("base", "key", "value"), HOSTILE, ids=[f"{key}-{i}" for i, (_, key, _) in enumerate(HOSTILE)]
)
def test_a_key_of_the_wrong_type_makes_the_vocabulary_unsupported(client, base, key, value):
    status, answer = upload(client, gguf({**base, K + key: value}))

    assert status == 200, answer
    assert answer["templates"] == {"default": TEMPLATE}
    tokenizer = answer["tokenizer"]
    if tokenizer is None:  # a token list that is no list: the file has no vocabulary at all
        assert key == "tokens"
        return
    assert tokenizer["supported"] is False
    assert K + key in tokenizer["reason"]
    tokenized = client.post("/api/tokenize", json={"source": answer["id"], "text": "ab"})
    assert tokenized.status_code == 422
    assert K + key in tokenized.json["error"]["message"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("scores", array(T.FLOAT32, [0.0] * 9)),  # llama.cpp reads only as many as tokens
        ("scores", array(T.FLOAT32, [0.0, math.inf, -math.inf, 0.0, 0.0])),
        ("bos_token_id", (T.UINT32, 99)),  # past the vocabulary: llama.cpp keeps its default
    ],
)
def test_what_llama_cpp_accepts_still_builds(client, key, value):
    status, answer = upload(client, gguf({**SPM, K + key: value}))
    assert status == 200
    assert answer["tokenizer"]["supported"], answer["tokenizer"]["reason"]


NON_FINITE = {
    "general.architecture": (T.STRING, "llama"),
    "general.nan": (T.FLOAT32, math.nan),
    "general.up": (T.FLOAT64, math.inf),
    "general.down": (T.FLOAT32, -math.inf),
    "general.fine": (T.FLOAT32, 0.5),
    "tokenizer.chat_template": (T.STRING, TEMPLATE),
}


def test_non_finite_metadata_is_null_in_strict_json(client):
    status, answer = upload(client, gguf(NON_FINITE))
    assert status == 200
    metadata = answer["metadata"]
    assert (metadata["nan"], metadata["up"], metadata["down"]) == (None, None, None)
    assert metadata["fine"] == 0.5
    again = client.get(f"/api/sources/{answer['id']}")
    assert strict_json(again.get_data(as_text=True))["metadata"] == metadata


def test_every_json_answer_writes_non_finite_floats_as_null(app):
    value = {"a": [math.nan, (math.inf, 1.5)], "b": {"c": -math.inf}}
    with app.app_context():
        answer = app.json.response(value).get_data(as_text=True)
        in_page = app.jinja_env.from_string("{{ value | tojson }}").render(value=value)
    expected = {"a": [None, [None, 1.5]], "b": {"c": None}}
    assert strict_json(answer) == expected
    assert strict_json(in_page) == expected


def test_boolean_split_keys_are_not_shard_numbers():
    assert split_info({"split.no": False, "split.count": True}) is None
    assert split_info({"split.no": 0, "split.count": 2}) == {"shard": 1, "count": 2, "first": True}


def test_a_reason_quoting_a_huge_merge_is_cut_in_the_worker(client):
    # The reason quoted the merge whole: 200 kB of it in every answer about the source.
    status, answer = upload(client, gguf({**BPE, K + "merges": strings("a " + "b" * 200_000)}))
    assert status == 200
    reason = answer["tokenizer"]["reason"]
    assert answer["tokenizer"]["supported"] is False
    assert "not in the vocabulary" in reason
    assert "characters cut]" in reason
    assert len(json.dumps(answer)) < 8 * 1024
