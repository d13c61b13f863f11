"""Loading sources through the API: GGUF prefixes, Hugging Face files, tokenizing."""

from __future__ import annotations

import io
import json

import pytest
import tokenizers
import tokenizers.models
import tokenizers.pre_tokenizers
from transformers import PreTrainedTokenizerFast

from app.web.factory import create_app
from tests.support.shared_data import VOCAB_DIR, needs_shared
from tests.support.sources import built

LLAMA_SPM = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"


def upload_growing(client, data: bytes, name: str, first: int = 4096) -> tuple[object, list[int]]:
    """What the page does: send a prefix, grow it on 409 until the header fits."""
    size, sent = first, []
    while True:
        sent.append(size)
        response = client.post(
            f"/api/sources/gguf?name={name}",
            data=data[:size],
            content_type="application/octet-stream",
        )
        if response.status_code != 409:
            return response, sent
        need = response.json["error"]["need_bytes"]
        assert need > size, "a 409 must ask for more than was sent"
        size = min(max(need, 2 * size), len(data))


@needs_shared
def test_gguf_prefix_grows_until_the_header_is_read(client):
    data = LLAMA_SPM.read_bytes()
    response, sent = upload_growing(client, data, "llama.gguf")
    assert response.status_code == 200
    assert len(sent) > 1
    body = response.json
    assert body["special_tokens"]["bos_token"] == "<s>"
    assert body["special_tokens"]["eos_token"] == "</s>"
    assert body["add_bos_token"] is True
    # The answer does not wait for the tokenizer: what the header says, and `building`
    # (or `ready`, when an earlier test of this app already built the same source).
    header_facts = {"model": "llama", "pre": "default", "vocab_size": 32000}
    answered = body["tokenizer"]
    assert (answered["state"], answered["supported"]) in (("building", None), ("ready", True))
    assert built(client, body)["tokenizer"] == {
        **header_facts,
        "state": "ready",
        "supported": True,
        "reason": None,
        "limit": None,
    }
    assert answered.items() >= header_facts.items()
    assert body["metadata"]["architecture"] == "llama"
    assert body["header_bytes"] <= sent[-1]
    assert len(body["id"]) == 64


@needs_shared
def test_same_header_same_id_whatever_follows(client):
    data = LLAMA_SPM.read_bytes()
    first = client.post(
        "/api/sources/gguf", data=data, content_type="application/octet-stream"
    ).json
    padded = client.post(
        "/api/sources/gguf?name=copy.gguf",
        data=data + b"\0" * 1000,
        content_type="application/octet-stream",
    ).json
    assert first["id"] == padded["id"]
    assert padded["file_name"] == "copy.gguf"


NOT_GGUF = 'this file does not start with "GGUF", so it is not a GGUF file'


@pytest.mark.parametrize(
    ("data", "offset", "words"),
    [
        (b"PK\x03\x04" + bytes(40), 0, f"{NOT_GGUF} (it starts with the bytes 50 4B 03 04)"),
        (b"not a model", 0, f'{NOT_GGUF} (it starts with "not ")'),
        (b"\n<!DOCTYPE html><html>", 0, "it looks like a web page (HTML)"),
        (b'{"chat_template": "x"}', 0, "it looks like JSON: load tokenizer files as Hugging Face"),
        (b"GGUF" + (1).to_bytes(4, "little") + bytes(16), 4, "GGUF file of version 1 (2023)"),
        (b"GGUF" + (9).to_bytes(4, "little") + bytes(16), 4, "says it is of version 9"),
    ],
)
def test_malformed_gguf_is_422_with_offset_and_says_what_is_wrong(client, data, offset, words):
    response = client.post("/api/sources/gguf", data=data, content_type="application/octet-stream")
    assert response.status_code == 422
    error = response.json["error"]
    assert (error["type"], error["offset"]) == ("GGUFError", offset)
    assert words in error["message"]
    assert "b'" not in error["message"]  # words, not Python's bytes


def test_upload_over_the_cap_is_413(tmp_path):
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "UPLOAD_MB": 0.01})
    response = app.test_client().post(
        "/api/sources/gguf", data=bytes(20_000), content_type="application/octet-stream"
    )
    assert response.status_code == 413


@needs_shared
def test_tokenize_with_the_models_vocabulary(client):
    source = client.post(
        "/api/sources/gguf", data=LLAMA_SPM.read_bytes(), content_type="application/octet-stream"
    ).json["id"]
    text = "<s>Hi there"
    body = {"source": source, "text": text, "add_special": True}
    response = client.post("/api/tokenize", json=body)
    assert response.status_code == 200
    tokens = response.json["tokens"]
    assert response.json["count"] == len(tokens)
    # The added BOS, then the literal "<s>" matched as the special token, then text.
    assert [t["id"] for t in tokens[:2]] == [1, 1]
    assert [t["special"] for t in tokens[:2]] == [True, True]
    assert (tokens[1]["start"], tokens[1]["end"]) == (0, 3)
    assert "".join(text[t["start"] : t["end"]] for t in tokens[1:]) == text
    plain = client.post("/api/tokenize", json={**body, "parse_special": False}).json
    assert 1 not in [t["id"] for t in plain["tokens"][1:]], "<s> must be plain text"


@needs_shared
def test_the_compact_answer_holds_the_tokens_of_the_default_one(tmp_path):
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path)})  # no source built yet
    client = app.test_client()
    upload = client.post(
        "/api/sources/gguf", data=LLAMA_SPM.read_bytes(), content_type="application/octet-stream"
    ).json
    # Asked while the tokenizer is still building: tokenizing waits for it.
    assert upload["tokenizer"]["state"] == "building"
    body = {"source": upload["id"], "text": "<s>Hi \u00e9t\u00e9 \U0001f999", "add_special": True}
    tokens = client.post("/api/tokenize", json=body).json["tokens"]
    compact = client.post("/api/tokenize", json={**body, "format": "compact"}).json
    assert set(compact) == {"ids", "starts", "ends", "special", "count"}
    assert compact["count"] == len(tokens) > 4
    rows = zip(compact["ids"], compact["starts"], compact["ends"], compact["special"], strict=True)
    assert [list(row) for row in rows] == [
        [t["id"], t["start"], t["end"], int(t["special"])] for t in tokens
    ]
    pieces = client.post("/api/tokenize", json={**body, "format": "compact", "pieces": True}).json
    assert pieces["pieces"] == {str(t["id"]): t["piece"] for t in tokens}
    window = {**body, "format": "compact", "offset": 2, "limit": 2}
    paged = client.post("/api/tokenize", json=window).json
    assert (paged["ids"], paged["next_offset"]) == (compact["ids"][2:4], 4)
    wrong = client.post("/api/tokenize", json={**body, "format": "columns"})
    assert (wrong.status_code, wrong.json["error"]["field"]) == (400, "format")
    app.extensions["sandbox_pool"].close()


def test_tokenize_errors(client):
    assert client.post("/api/tokenize", json={"source": "0" * 64, "text": "x"}).status_code == 404
    assert client.post("/api/tokenize", json={"source": "../etc", "text": "x"}).status_code == 404
    response = client.post("/api/tokenize", json={"source": "0" * 64, "text": 3})
    assert (response.status_code, response.json["error"]["field"]) == (400, "text")


@needs_shared
def test_another_process_rebuilds_a_source_from_storage(app, client):
    source = client.post(
        "/api/sources/gguf", data=LLAMA_SPM.read_bytes(), content_type="application/octet-stream"
    ).json["id"]
    replica = create_app({"TESTING": True, "DATA_DIR": app.config["DATA_DIR"]})
    response = replica.test_client().post("/api/tokenize", json={"source": source, "text": "Hi"})
    assert response.status_code == 200
    assert response.json["count"] >= 1


# --- Hugging Face files, checked against what transformers loads from the same files ---


def tokenizer_json() -> str:
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "hello": 3, "world": 4}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return tok.to_str()


CONFIGS = {
    "string template, string tokens": {
        "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
        "bos_token": "<s>",
        "eos_token": "</s>",
    },
    "named templates, AddedToken objects": {
        "chat_template": [
            {"name": "default", "template": "D{{ messages[0].content }}"},
            {"name": "tool_use", "template": "T{{ tools|length }}"},
        ],
        "bos_token": {"__type": "AddedToken", "content": "<s>", "special": True},
        "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": False},
        "unk_token": "<unk>",
    },
}


def hf_upload(client, files: dict[str, str]):
    data = {f"f{i}": (io.BytesIO(t.encode()), n) for i, (n, t) in enumerate(files.items())}
    return client.post("/api/sources/hf", data=data, content_type="multipart/form-data")


def transformers_view(tmp_path, files: dict[str, str]) -> tuple[dict, dict]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    tok = PreTrainedTokenizerFast.from_pretrained(tmp_path)
    templates = tok.chat_template
    templates = templates if isinstance(templates, dict) else {"default": templates}
    return templates, dict(tok.special_tokens_map)


@pytest.mark.parametrize("name", CONFIGS)
def test_hf_files_read_as_transformers_reads_them(client, tmp_path, name):
    files = {
        "tokenizer_config.json": json.dumps(CONFIGS[name]),
        "tokenizer.json": tokenizer_json(),
    }
    response = hf_upload(client, files)
    assert response.status_code == 200
    templates, special = transformers_view(tmp_path, files)
    assert response.json["templates"] == templates
    assert response.json["special_tokens"] == special
    assert built(client, response.json)["tokenizer"]["supported"] is True


def test_chat_template_jinja_wins_over_the_config(client, tmp_path):
    files = {
        "tokenizer_config.json": json.dumps(CONFIGS["string template, string tokens"]),
        "chat_template.jinja": "JINJA{{ messages|length }}",
        "tokenizer.json": tokenizer_json(),
    }
    templates, _ = transformers_view(tmp_path, files)
    assert (
        hf_upload(client, files).json["templates"]
        == templates
        == {"default": files["chat_template.jinja"]}
    )


def test_legacy_chat_template_json(client):
    # Only a processor reads it: not the tokenizer's default (see test_hf_transformers.py).
    files = {"chat_template.json": json.dumps({"chat_template": "LEGACY"})}
    assert hf_upload(client, files).json["templates"] == {"processor": "LEGACY"}


def test_hf_tokenizer_json_tokenizes(client):
    source = hf_upload(client, {"tokenizer.json": tokenizer_json()}).json["id"]
    response = client.post("/api/tokenize", json={"source": source, "text": "hello world"})
    assert [t["id"] for t in response.json["tokens"]] == [3, 4]


@pytest.mark.parametrize(
    ("files", "bad_file"),
    [
        ({"tokenizer_config.json": "{not json"}, "tokenizer_config.json"),
        ({"chat_template.json": "[]"}, "chat_template.json"),
        ({"chat_template.json": json.dumps({"chat_template": ["a"]})}, "chat_template.json"),
        ({"tokenizer.json": "{"}, "tokenizer.json"),
        (
            {"tokenizer_config.json": json.dumps({"chat_template": [{"x": 1}]})},
            "tokenizer_config.json",
        ),
        ({"model.safetensors": "x"}, "model.safetensors"),
    ],
)
def test_broken_hf_files_are_422_naming_the_file(client, files, bad_file):
    response = hf_upload(client, files)
    assert response.status_code == 422
    assert response.json["error"]["file"] == bad_file
    assert bad_file in response.json["error"]["message"]


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("tokenizer.json", b"[1, 2]", "tokenizer.json: this file does not hold a JSON object"),
        ("tokenizer_config.json", b'"x"', "does not hold a JSON object (one that starts with '{')"),
        ("tokenizer.json", b"\x89PNG\xff", "tokenizer.json: this file is not UTF-8 text, so not"),
        ("tokenizer_config.json", b"{nope", "tokenizer_config.json: not valid JSON: Expecting"),
    ],
)
def test_hf_refusals_say_what_is_wrong_in_words(client, name, data, words):
    files = {"f": (io.BytesIO(data), name)}
    response = client.post("/api/sources/hf", data=files, content_type="multipart/form-data")
    assert response.status_code == 422
    assert words in response.json["error"]["message"]
