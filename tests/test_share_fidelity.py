"""A share reproduces exactly what was set up: every field, and the prompt byte for byte.

Each test walks a state through the real endpoints (page form -> share -> `/s/<id>` ->
render) with the in-process test client, and compares what comes out with what went in.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.corpus import case_body, load_conversations

LIBRARY = Path(__file__).resolve().parents[1] / "templates_lib"

#: Writes every input a template can see, with `tojson` (which keeps key order, as in
#: transformers), so that anything lost or reordered on the way changes the prompt.
DUMP = (
    "{% for d in documents or [] %}DOC:{{ d.title }};{% endfor %}"
    "{% for m in messages %}{{ m.content }}{% endfor %}\n"
    "messages={{ messages|tojson }}\ntools={{ tools|tojson }}\n"
    "documents={{ documents|tojson }}\nagp={{ add_generation_prompt }}\n"
    "bos={{ bos_token }}\nflag={{ flag|tojson if flag is defined }}\n"
    "now={{ strftime_now('%Y-%m-%d %H:%M:%S') }}"
)

#: Page fields a browser submits that are not part of the state.
#: Fields of the page that are not the state: the render counter, the library entry the
#: editor came from (worked out again from the template) and the Library menu's pick.
PAGE_ONLY = {"seq", "library", "library_choice"}

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "Hel", "reasoning_content": "think"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
DOCUMENTS = [{"title": "T1", "text": "hi"}]


def pretty(value: object) -> str:
    """A JSON text area as the page writes it."""
    return json.dumps(value, indent=2, ensure_ascii=False)


#: Every field of the page form, set to something other than its default; the two forms
#: differ in the options that cannot be set together.
FORMS = {
    "transformers": {
        "template": DUMP,
        "compare_template": "{{ messages|tojson }}",
        "messages": pretty(MESSAGES[:2]),
        "tools": pretty(TOOLS),
        "documents": pretty(DOCUMENTS),
        "add_generation_prompt": "on",
        "continue_final_message": "",
        "special_tokens": pretty({"bos_token": "<s>", "eos_token": "</s>"}),
        "kwargs": pretty({"zeta": 1, "flag": {"b": 2, "a": 1}}),
        "now": "2024-07-26T10:00:30",
        "engine": "transformers",
        "template_kind": "jinja",  # the only language transformers reads
        "content_format": "auto",
        "tool_arguments": "as_written",
        "compare_engines": "",
        "view": "diff",
        "completion": '<think>\nMaybe.\n</think>\n\n<tool_call>\n{"name": "f"}\n</tool_call>',
        "parser:llama.cpp:reasoning_format": "none",
        "parser:llama.cpp:parse_tool_calls": "",
        "parser:vllm:tool_call_parser": "hermes",
        "parser:vllm:reasoning_parser": "qwen3",
        "parser:edge-llm:tool_call_parser": "auto",
        "parser:edge-llm:reasoning_parser": "qwen3",
        "source_id": "a" * 64,
        "source_kind": "hf",
        "source_file_name": "tokenizer_config.json",
        # A remote source's provenance, in the order the state keeps its fields.
        "source_origin": json.dumps(
            {
                "file": None,
                "repo": "org/model",
                "revision": "main",
                "sha": "c" * 40,
                "type": "hub",
                "url": "https://huggingface.co/org/model/tree/" + "c" * 40,
            }
        ),
        "template_name": "tool_use",
        "add_bos_token": "on",
        "add_eos_token": "",
    },
    "llama.cpp": {
        "template": DUMP,
        "compare_template": "",
        "messages": pretty(MESSAGES),
        "tools": pretty(TOOLS),
        "documents": pretty(DOCUMENTS),
        "add_generation_prompt": "",
        "continue_final_message": "true",
        "special_tokens": pretty({"eos_token": "</s>", "bos_token": "<s>"}),
        "kwargs": pretty({"flag": [1, {"y": 0, "x": 1}]}),
        "now": "2023-01-02T03:04:05",
        "engine": "llama.cpp",
        "template_kind": "jinja",  # the only language llama.cpp reads
        "content_format": "openai",
        "tool_arguments": "objects",
        "compare_engines": "transformers",
        "view": "tokens",
        "completion": "",
        "parser:llama.cpp:reasoning_format": "",
        "parser:llama.cpp:parse_tool_calls": "false",
        "parser:vllm:tool_call_parser": "",
        "parser:vllm:reasoning_parser": "",
        "parser:edge-llm:tool_call_parser": "",
        "parser:edge-llm:reasoning_parser": "",
        "source_id": "b" * 64,
        "source_kind": "gguf",
        "source_file_name": "model.gguf",
        "source_origin": "",
        "template_name": "",
        "add_bos_token": "",
        "add_eos_token": "on",
    },
}


class FormFields(HTMLParser):
    """What a browser would submit for the page's form: name -> value."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fields: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {key: value or "" for key, value in attrs}
        name = attr.get("name")
        if attr.get("form", "state") != "state":
            return  # a control of another form (a display choice): not posted with the state
        if tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select:
            # The first option unless another one is selected.
            if self._select not in self.fields or "selected" in attr:
                self.fields[self._select] = attr.get("value", "")
        elif tag == "input" and name and attr.get("type") != "file":
            if attr.get("type") == "checkbox":
                self.fields[name] = "on" if "checked" in attr else ""
            elif attr.get("type") == "radio":
                if "checked" in attr:
                    self.fields[name] = attr.get("value", "")
            else:
                self.fields[name] = attr.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.fields[self._textarea] += data


def page_fields(page: str) -> dict[str, str]:
    """The form fields of a rendered page."""
    parser = FormFields()
    parser.feed(page)
    return {k: v for k, v in parser.fields.items() if k not in PAGE_ONLY}


def page_prompt(page: str) -> str:
    """The raw prompt a page shows (its hidden text area), as characters."""
    match = re.search(r'<textarea id="prompt-raw" hidden readonly>(.*?)</textarea>', page, re.S)
    assert match, "the page shows no prompt"
    text = html.unescape(match.group(1))
    # As in a browser: a newline right after <textarea> is not part of its value.
    return text.removeprefix("\n")


def post_json(client, path: str, body: object):
    """POST `body` as JSON text with its keys in the order given (the test client's `json=`
    would sort them, as Flask's JSON provider does)."""
    return client.post(path, data=json.dumps(body), content_type="application/json")


def get_json(client, path: str) -> object:
    """A JSON answer, keys in the order the server wrote them."""
    return json.loads(client.get(path).get_data(as_text=True))


def share_of(client, body: dict) -> str:
    """Share a state through the API; its link."""
    answer = post_json(client, "/api/shares", body)
    assert answer.status_code in (200, 201), answer.json
    return answer.json["url"]


# --- every field ------------------------------------------------------------------------


@pytest.mark.parametrize("name", FORMS)
def test_every_field_survives_page_share_page_and_render(client, name):
    form = FORMS[name]
    shared = client.post("/fragments/share", data=form)
    assert shared.status_code in (200, 201), shared.json
    url = shared.json["url"]

    # The stored state holds every field, as typed.
    stored = get_json(client, url + ".json")
    assert stored["documents"] == DOCUMENTS
    assert json.dumps(stored["tools"]) == json.dumps(TOOLS)  # key order too
    assert list(stored["kwargs"]) == list(json.loads(form["kwargs"]))

    # The shared page shows the same form, field for field (and no field the walk misses).
    page = client.get(url).get_data(as_text=True)
    assert page_fields(page) == form

    # It renders what /api/render renders for the stored state, with the source's flags.
    rendered = post_json(client, "/api/render", stored).json
    if "prompt" in rendered:
        assert page_prompt(page) == rendered["prompt"]
    else:  # refused (llama.cpp cannot build a parser to continue the dump): the same way
        assert html.escape(rendered["error"]["message"], quote=False) in page
        assert "prompt-raw" not in page
    if name == "transformers":  # llama-server passes no documents to templates
        assert "DOC:T1;" in rendered["prompt"]

    # And sharing that page again is the same link.
    assert client.post("/fragments/share", data=page_fields(page)).json["url"] == url


def test_a_share_with_documents_renders_them_on_its_page(client):
    body = {
        "template": "{% for d in documents %}DOC:{{ d.title }};{% endfor %}"
        "{{ messages[0].content }}",
        "messages": [{"role": "user", "content": "hi"}],
        "documents": [{"title": "T1", "text": "hi"}],
        "now": "2024-01-01T00:00:00",
    }
    assert post_json(client, "/api/render", body).json["prompt"] == "DOC:T1;hi"
    page = client.get(share_of(client, body)).get_data(as_text=True)
    assert page_prompt(page) == "DOC:T1;hi"


# --- the prompt, byte for byte ----------------------------------------------------------

CASES = load_conversations()
TEMPLATES = {"dump": DUMP, "qwen3": (LIBRARY / "qwen3.jinja").read_text(encoding="utf-8")}


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_corpus_case_shares_the_exact_prompt(client, template):
    prompts = 0
    for case in CASES:
        body = case_body(case, TEMPLATES[template])
        rendered = post_json(client, "/api/render", body)
        url = share_of(client, body)
        page = client.get(url).get_data(as_text=True)
        if rendered.status_code != 200:
            assert "No prompt" in page, case["name"]
            continue
        assert page_prompt(page) == rendered.json["prompt"], case["name"]
        prompts += 1
        again = post_json(client, "/api/render", get_json(client, url + ".json"))
        assert again.json["prompt"] == rendered.json["prompt"], case["name"]
    assert prompts >= len(CASES) * 3 // 4  # most cases render: the comparison means something


def test_key_order_inside_the_state_is_kept_and_hashed(client):
    body = {"template": "{{ tools|tojson }}", "messages": MESSAGES[1:2], "tools": TOOLS}
    reordered = {**body, "tools": [{"function": TOOLS[0]["function"], "type": "function"}]}
    first, second = share_of(client, body), share_of(client, reordered)
    assert first != second
    assert get_json(client, first + ".json")["tools"] == TOOLS
    assert json.dumps(get_json(client, first + ".json")["tools"]) == json.dumps(TOOLS)
    page = client.get(first).get_data(as_text=True)
    assert page_prompt(page) == json.dumps(TOOLS, separators=(", ", ": "))


# --- shares stored before key order was kept --------------------------------------------


def test_a_share_stored_the_old_way_still_opens_and_renders(app, client):
    state = {
        "template": "{{ tools|tojson }}|{{ messages[0].content }}",
        "messages": [{"role": "user", "content": "old"}],
        "tools": TOOLS,
        "add_generation_prompt": False,
        "continue_final_message": False,
        "special_tokens": {},
        "kwargs": {},
        "now": "2024-01-01T00:00:00",
    }
    # What earlier versions stored: sorted keys all the way down, and the id of that text.
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    old_id = hashlib.sha256(text.encode()).hexdigest()[:24]
    app.extensions["share_store"].database.put_share(old_id, text, None)

    assert get_json(client, f"/s/{old_id}.json") == json.loads(text)
    page = client.get(f"/s/{old_id}").get_data(as_text=True)
    sorted_tools = json.dumps(json.loads(text)["tools"], separators=(", ", ": "))
    assert page_prompt(page) == f"{sorted_tools}|old"
    # A state whose objects are all in sorted order keeps its old id when shared again.
    assert share_of(client, json.loads(text)) == f"/s/{old_id}"


def test_a_stored_state_that_no_longer_validates_is_a_400_naming_the_field(app, client):
    share_id = app.extensions["share_store"].put({"template": 5, "messages": []})
    response = client.get(f"/s/{share_id}.json")
    assert response.status_code == 400
    assert response.json["error"]["field"] == "template"
    page = client.get(f"/s/{share_id}", headers={"Accept": "text/html"})
    assert page.status_code == 400
