"""The `/api/render` contract: status codes, shapes and messages."""

from __future__ import annotations

import pytest

HELLO = [{"role": "user", "content": "Hello!"}]
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_render_answers_prompt_time_and_spans(client):
    body = {
        "template": "{% generation %}{{ messages[0].content }}{% endgeneration %}"
        "{{ strftime_now('%d %b %Y') }}",
        "messages": HELLO,
        "now": "2024-07-26T10:00:00",
    }
    response = client.post("/api/render", json=body)
    assert response.status_code == 200
    assert response.json["prompt"] == "Hello!26 Jul 2024"
    assert response.json["now"] == "2024-07-26T10:00:00"
    assert response.json["generation_spans"] == [[0, 6]]
    assert response.json["elapsed_ms"] >= 0


def test_render_defaults_now_to_the_current_time(client):
    response = client.post("/api/render", json={"template": "x", "messages": HELLO})
    assert response.status_code == 200
    assert response.json["now"][:2] == "20"


def test_options_reach_the_template(client):
    body = {
        "template": CHATML + "{{ bos_token }}|{{ flag }}|{{ tools|length }}|{{ documents }}",
        "messages": HELLO,
        "add_generation_prompt": True,
        "special_tokens": {"bos_token": "<s>"},
        "kwargs": {"flag": True},
        "tools": [{"type": "function", "function": {"name": "f"}}],
    }
    response = client.post("/api/render", json=body)
    assert response.json["prompt"] == (
        "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n<s>|True|1|None"
    )


def test_continue_final_message_cuts_after_the_continued_text(client):
    messages = [*HELLO, {"role": "assistant", "content": "Hi, I am"}]
    body = {"template": CHATML, "messages": messages, "continue_final_message": True}
    response = client.post("/api/render", json=body)
    assert response.json["prompt"].endswith("<|im_start|>assistant\nHi, I am")


@pytest.mark.parametrize(
    ("template", "kind", "line"),
    [
        ("ok\n{% if %}", "TemplateSyntaxError", 2),
        ("a\nb\n{{ raise_exception('no system role') }}", "TemplateError", 3),
        ("{{ missing.field }}", "UndefinedError", 1),
        ("{{ ''.__class__.__mro__ }}", "SecurityError", 1),
    ],
)
def test_template_errors_are_422_with_type_and_line(client, template, kind, line):
    response = client.post("/api/render", json={"template": template, "messages": HELLO})
    assert response.status_code == 422
    error = response.json["error"]
    assert (error["type"], error["line"], error["limit"]) == (kind, line, None)
    assert error["message"]


def test_what_transformers_refuses_is_422(client):
    body = {"template": CHATML, "messages": HELLO, "continue_final_message": True}
    body["add_generation_prompt"] = True
    response = client.post("/api/render", json=body)
    assert response.status_code == 422
    assert "not compatible" in response.json["error"]["message"]


def test_template_over_the_size_limit_names_the_limit(client):
    body = {"template": "x" * (256 * 1024 + 1), "messages": HELLO}
    response = client.post("/api/render", json=body)
    assert response.status_code == 422
    assert response.json["error"]["limit"] == "template_bytes"


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"messages": HELLO}, "template", "required"),
        ({"template": "x"}, "messages", "required"),
        ({"template": 3, "messages": HELLO}, "template", "must be a string, not a number"),
        ({"template": "x", "messages": "hi"}, "messages", "must be a list, not a string"),
        ({"template": "x", "messages": [1]}, "messages[0]", "must be an object"),
        ({"template": "x", "messages": HELLO, "tools": {}}, "tools", "must be a list"),
        (
            {"template": "x", "messages": HELLO, "add_generation_prompt": "yes"},
            "add_generation_prompt",
            "must be a boolean",
        ),
        (
            {"template": "x", "messages": HELLO, "continue_final_message": 1},
            "continue_final_message",
            "must be a boolean or a string",
        ),
        (
            {"template": "x", "messages": HELLO, "special_tokens": {"bos_token": 1}},
            "special_tokens.bos_token",
            "must be a string",
        ),
        ({"template": "x", "messages": HELLO, "kwargs": []}, "kwargs", "must be an object"),
        ({"template": "x", "messages": HELLO, "now": "yesterday"}, "now", "ISO 8601"),
        ([1, 2], None, "must be a JSON object"),
    ],
)
def test_malformed_requests_are_400_naming_the_field(client, body, field, words):
    response = client.post("/api/render", json=body)
    assert response.status_code == 400
    error = response.json["error"]
    assert error["field"] == field
    assert words in error["message"]


@pytest.mark.parametrize(
    ("data", "words"),
    [(b'{"template": "x",', "not valid JSON"), (b"\xff\xfe", "not UTF-8"), (b"", "not valid")],
)
def test_unreadable_bodies_are_400(client, data, words):
    response = client.post("/api/render", data=data, content_type="application/json")
    assert response.status_code == 400
    assert words in response.json["error"]["message"]


def test_oversize_body_is_413(client):
    response = client.post(
        "/api/render", data=b" " * (8 * 1024 * 1024 + 1), content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json["error"]["type"] == "PayloadTooLarge"


def test_unknown_paths_and_methods_answer_json(client):
    assert client.get("/api/nothing").status_code == 404
    response = client.get("/api/render")
    assert response.status_code == 405
    assert response.json["error"]["type"] == "MethodNotAllowed"


def test_healthz(client):
    assert client.get("/healthz").status_code == 200
