"""The Command view of the page: which model file it names, and in which order."""

from __future__ import annotations

import json
import re
from html import unescape

from app.sources.library import Library

HELLO = [{"role": "user", "content": "Hello!"}]
HF_FILES = "tokenizer.json, tokenizer_config.json"


def command_view(client, **source: str) -> str:
    """The Command view's HTML for the ChatML-like template and `source` hidden inputs."""
    data = {
        "template": "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}",
        "messages": json.dumps(HELLO),
        "view": "command",
        **source,
    }
    html = client.post("/fragments/output", data=data).get_data(as_text=True)
    return unescape(html.split('id="view-command"', 1)[1].split("</section>", 1)[0])


def commands(html: str) -> list[tuple[str, str, str]]:
    """(engine, form, command) of every command shown, in page order."""
    found = re.findall(r'data-engine="([^"]*)" data-form="([^"]*)"[^>]*>(.*?)</pre>', html, re.S)
    return [(engine, form, command) for engine, form, command in found]


def test_hugging_face_files_are_not_named_as_the_model(client):
    html = command_view(client, source_id="abc", source_kind="hf", source_file_name=HF_FILES)
    assert "tokenizer.json" not in html
    for engine, form, command in commands(html):
        if engine in ("llama-server", "llama-cli") and form != "curl":
            assert " -m MODEL.gguf " in command or "LLAMA_ARG_MODEL=MODEL.gguf" in command
        if engine in ("vllm", "transformers"):
            assert "ORG/MODEL" in command
    # Said under the commands, in their notes.
    assert "MODEL.gguf" in html.split('id="command-notes"', 1)[1]
    note = html.split('id="model-placeholder"', 1)[1].split("</p>", 1)[0]
    assert "MODEL.gguf" in note and "no GGUF is loaded" in note


def test_a_loaded_gguf_is_named_and_no_placeholder_note(client):
    html = command_view(client, source_id="abc", source_kind="gguf", source_file_name="q.gguf")
    assert "-m q.gguf " in html and "MODEL.gguf" not in html
    assert 'id="model-placeholder"' not in html


def test_without_a_source_the_placeholder_is_explained(client):
    assert 'id="model-placeholder"' in command_view(client)


def test_the_file_form_comes_before_the_inline_form(client):
    forms = [(engine, form) for engine, form, _ in commands(command_view(client))]
    for program in ("llama-server", "llama-cli"):
        assert forms.index((program, "file")) < forms.index((program, "inline"))
    assert forms[0] == ("llama-server", "file")


def test_the_engines_note_on_a_builtin_shows_its_names_as_code(client):
    # The note is llama.cpp's own (CommandWriter.notes); its `backquoted` names are code.
    data = {"template": Library().template("chatml"), "messages": json.dumps(HELLO)}
    html = client.post("/fragments/output", data={**data, "view": "command"}).get_data(True)
    note = html.split('id="builtin-note">', 1)[1].split("</p>", 1)[0]
    assert note.startswith("On plain chats this template writes exactly what llama.cpp&#39;s")
    assert "<code>chatml</code>" in note and "<code>--chat-template chatml</code>" in note


def test_before_the_view_opens_the_first_command_is_headed_by_its_own_program(client):
    html = client.post("/fragments/output", data={"template": "x", "messages": "[]"}).get_data(True)
    head = re.search(r'<h2>([^<]*)</h2>[^\n]*\n<pre class="command" id="command">(\S*) ', html)
    assert head is not None
    assert head[1] == "llama-server · file" and head[2] == "llama-server"
