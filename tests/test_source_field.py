"""`source` is a loaded source's id or the state's source object, at every entry point
that takes one, and both mean the same source (docs/api.md, "A source")."""

from __future__ import annotations

import json
from typing import Any

import pytest

#: A template that writes BOS itself: llama.cpp cuts it when the vocabulary adds one.
WRITES_BOS = "{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
BODY = {
    "template": WRITES_BOS,
    "messages": [{"role": "user", "content": "hello there"}],
    "special_tokens": {"bos_token": "<s>", "eos_token": "</s>"},
    "engine": "llama.cpp",
    "now": "2024-07-26T10:00:00",
    "completion": "hi",
}
#: Every JSON entry point that takes a source, with the body it takes one in.
ENTRY_POINTS = {
    "/api/render": lambda source: {**BODY, "source": source},
    "/api/outputs": lambda source: {**BODY, "source": source, "view": "tokens"},
    "/api/analyze": lambda source: {**BODY, "source": source},
    "/api/diff": lambda source: {"left": BODY, "right": BODY, "source": source},
    "/api/command": lambda source: {**BODY, "source": source},
    "/api/parse": lambda source: {**BODY, "source": source},
    "/api/roundtrip": lambda source: {**BODY, "source": source},
    "/api/tokenize": lambda source: {"source": source, "text": "<s>hello"},
}


def post(client, path: str, body: Any):
    return client.post(path, data=json.dumps(body), content_type="application/json")


def _without_timing(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "elapsed_ms"}


@pytest.mark.parametrize("path", ENTRY_POINTS)
def test_an_id_and_an_object_name_the_same_source(client, adds_bos, path):
    by_object = {"id": adds_bos["id"], "kind": "gguf", "file_name": "adds-bos.gguf"}
    by_id = post(client, path, ENTRY_POINTS[path](adds_bos["id"]))
    assert by_id.status_code == 200, by_id.get_data()[:300]
    as_object = post(client, path, ENTRY_POINTS[path](by_object))
    assert as_object.status_code == 200, as_object.get_data()[:300]
    assert _without_timing(by_id.json) == _without_timing(as_object.json)


def test_the_source_reaches_the_render_either_way(client, adds_bos):
    # The vocabulary adds BOS, so llama.cpp cuts the template's: the source was bound.
    without = post(client, "/api/render", BODY).json["prompt"]
    with_id = post(client, "/api/render", {**BODY, "source": adds_bos["id"]}).json["prompt"]
    assert (without, with_id) == ("<s>user: hello there\n", "user: hello there\n")


@pytest.mark.parametrize("path", [p for p in ENTRY_POINTS if p != "/api/tokenize"])
def test_an_id_must_name_a_loaded_source(client, path):
    answer = post(client, path, ENTRY_POINTS[path]("0" * 64))
    assert answer.status_code == 400, answer.get_data()[:300]
    assert answer.json["error"]["field"] == "source"
    assert "No loaded source has the id" in answer.json["error"]["message"]


def test_an_unknown_id_to_tokenize_is_not_found(client):
    assert post(client, "/api/tokenize", ENTRY_POINTS["/api/tokenize"]("0" * 64)).status_code == 404


@pytest.mark.parametrize("path", ENTRY_POINTS)
def test_a_source_that_is_neither_is_refused(client, path):
    answer = post(client, path, ENTRY_POINTS[path](5))
    assert answer.status_code == 400, answer.get_data()[:300]
    assert answer.json["error"]["field"] == "source"


def test_a_share_stores_an_id_as_the_source_it_names(client, adds_bos):
    shared = post(client, "/api/shares", {**BODY, "source": adds_bos["id"]})
    assert shared.status_code in (200, 201), shared.get_data()[:300]
    stored = client.get(f"/s/{shared.json['id']}.json").json["source"]
    assert stored == {"file_name": "adds-bos.gguf", "id": adds_bos["id"], "kind": "gguf",
                      "template_name": None}  # fmt: skip
    by_object = post(client, "/api/shares", {**BODY, "source": stored})
    assert by_object.json["id"] == shared.json["id"]
    gone = post(client, "/api/shares", {**BODY, "source": "0" * 64})
    assert (gone.status_code, gone.json["error"]["field"]) == (400, "source")
