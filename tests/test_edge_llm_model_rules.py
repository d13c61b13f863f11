"""What Edge-LLM refuses of a model before it parses the template, on the page: a model
with named templates, and a template file over its size limit (docs/engines/edge-llm.md).

Read at 83f5f76: `ChatTemplate::Impl::load` fails when the model folder has
`additional_chat_templates/` ("named provider chat templates are unsupported; the model
must provide chat_template.jinja"), before it reads chat_template.jinja; its export
refuses the folder and a `chat_template` list with other names than "default", and its
builder the folder. A model of Hugging Face files whose templates have names is such a
model, whichever template the editor holds.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from werkzeug.datastructures import MultiDict

from app.problems import LOAD_ERROR, TemplateProblem
from app.render.engines import ENGINES
from app.render.engines.edge_llm.loading import loaded
from app.render.limits import RenderLimits

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
REFUSED = (
    "named provider chat templates are unsupported; the model must provide chat_template.jinja"
)


def upload(client, files: dict[str, str]) -> dict[str, Any]:
    data = MultiDict(("files", (io.BytesIO(text.encode()), name)) for name, text in files.items())
    answer = client.post("/api/sources/hf", data=data, content_type="multipart/form-data")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.json


def outputs(client, source: dict[str, Any], engine: str, view: str) -> dict[str, Any]:
    state = {
        "template": CHATML,
        "messages": [{"role": "user", "content": "Hi"}],
        "add_generation_prompt": True,
        "engine": engine,
        "view": view,
        "source": {"id": source["id"], "kind": "hf"},
    }
    answer = client.post("/api/outputs", json=state)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.json


#: Named templates as the two places transformers keeps them: files, and a config list.
NAMED_FILES = {"chat_template.jinja": CHATML, "additional_chat_templates/tool_use.jinja": CHATML}
NAMED_LIST = {
    "tokenizer_config.json": json.dumps(
        {
            "chat_template": [
                {"name": "default", "template": CHATML},
                {"name": "rag", "template": CHATML},
            ]
        }
    )
}


def test_edge_llm_would_not_load_a_model_with_named_template_files(client):
    source = upload(client, NAMED_FILES)
    error = outputs(client, source, "edge-llm", "prompt")["prompt"]["error"]
    assert error["type"] == LOAD_ERROR
    assert error["message"].startswith(f"Edge-LLM would not load this model: {REFUSED}")
    assert "tool_use" in error["message"]


def test_edge_llm_would_not_load_a_model_with_a_named_template_list(client):
    source = upload(client, NAMED_LIST)
    error = outputs(client, source, "edge-llm", "prompt")["prompt"]["error"]
    assert (error["type"], "rag" in error["message"]) == (LOAD_ERROR, True)


def test_one_default_template_or_a_chat_template_json_loads(client):
    """Edge-LLM's export takes a list holding only "default" as one default template, and
    a chat_template.json's template before tokenizer_config.json's, so a named list
    beside one never reaches it."""
    only_default = {"chat_template": [{"name": "default", "template": CHATML}]}
    processor = json.dumps({"chat_template": CHATML})
    for files in (
        {"tokenizer_config.json": json.dumps(only_default)},
        {"tokenizer_config.json": json.dumps({"chat_template": CHATML}),
         "chat_template.json": processor},
        {**NAMED_LIST, "chat_template.json": processor},
    ):  # fmt: skip
        source = upload(client, files)
        assert outputs(client, source, "edge-llm", "prompt")["prompt"]["error"] is None, files


def test_other_engines_render_the_model_and_the_matrix_says_edge_llm_would_not(client):
    source = upload(client, NAMED_FILES)
    answer = outputs(client, source, "transformers", "analysis")
    assert answer["prompt"]["error"] is None
    rows = {row["id"]: row for row in answer["analysis"]["portability"]["engines"]}
    edge = rows.pop("edge-llm")
    assert edge["load"]["ok"] is False
    assert edge["load"]["message"].startswith(f"Edge-LLM would not load this model: {REFUSED}")
    assert edge["cases"] == []  # not rendered: nothing runs in a model that does not load
    assert all(
        row["load"] is None for row in rows.values() if not ENGINES[row["id"]].info.checks_at_load
    )


def test_the_command_view_warns_of_the_named_templates(client):
    source = upload(client, NAMED_FILES)
    commands = outputs(client, source, "transformers", "command")["commands"]
    edge = [line for line in commands if line["engine"] == "edge-llm"]
    assert edge and all(
        line["command"].startswith("# Warning: Edge-LLM would not load") for line in edge
    )


def test_a_template_over_edge_llms_size_limit_does_not_load():
    """InjaRenderer's validateTemplateFile: a file over 1 MiB (kChatTemplateFileSizeBytes)
    fails the load; one of exactly 1 MiB loads. (Only an operator who raised
    PLAYGROUND_TEMPLATE_KB that far can send one.)"""
    limits = RenderLimits(template_bytes=2 * 1024 * 1024)
    loaded("é" * (512 * 1024), limits)  # 1 MiB of UTF-8
    with pytest.raises(TemplateProblem) as refused:
        loaded("é" * (512 * 1024) + "x", limits)
    assert refused.value.type == LOAD_ERROR
    assert refused.value.message.startswith(
        "Edge-LLM would not load this model: chat template exceeds size limit"
    )
