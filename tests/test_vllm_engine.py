"""The vllm engine: vLLM's own test cases, and each rule on a small template.

The cases of vLLM's tests are data (`oracles.vllm.render_cases`); every one is either run here or
listed as not reproducible with its reason, and docs/engines/vllm.md states the counts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines import render_exactly as render  # the engine itself, arguments as given
from app.render.engines.transformers import TransformersEngine
from app.render.engines.vllm import VllmEngine
from app.render.engines.vllm.contract import VLLM, Refused
from app.render.engines.vllm.messages import parse_messages, parse_tool_arguments
from app.render.engines.vllm.options import merged_options
from app.state.playground import PlaygroundState
from oracles.vllm.render_cases import (
    ABSENT,
    ARGUMENT_CASES,
    KWARGS_CASE,
    NOT_REPRODUCIBLE,
    PARSE_CASES,
)
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

#: Writes each message as <role>content, content as Python writes it.
ECHO = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
#: Loops over content blocks, so vLLM detects the "openai" format.
BLOCKS = (
    "{% for m in messages %}<{{ m.role }}>{% for c in m.content %}[{{ c.type }}:"
    "{{ c.text }}]{% endfor %}{% endfor %}"
)


def _render(engine: str = "vllm", template: str = ECHO, **fields: Any):
    return render(RenderRequest(template=template, engine=engine, **fields))


def _refusal(engine: str = "vllm", template: str = ECHO, **fields: Any) -> str:
    with pytest.raises(TemplateProblem) as caught:
        _render(engine, template, **fields)
    assert caught.value.type == "InvalidRequest"
    return caught.value.message


# vLLM's own cases ------------------------------------------------------------------------


@pytest.mark.parametrize("case", PARSE_CASES, ids=lambda case: case["test"])
def test_vllm_parses_the_conversation_its_tests_expect(case):
    blocks = case["content_format"] == "openai"
    assert parse_messages(case["messages"], blocks, VLLM, []) == case["expected"]


@pytest.mark.parametrize("case", ARGUMENT_CASES, ids=lambda case: case["test"])
def test_vllm_parses_tool_arguments_as_its_tests_expect(case):
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": "write"}}
        for n in range(len(case["given"]))
    ]
    for call, given in zip(calls, case["given"], strict=True):
        if given is not ABSENT:
            call["function"]["arguments"] = given
    message = {"role": "assistant", "content": "", "tool_calls": calls}
    parse_tool_arguments(message, "messages[0]", [])
    assert [call["function"]["arguments"] for call in message["tool_calls"]] == case["expected"]


@needs_shared
def test_vllm_passes_the_kwargs_its_test_expects():
    template = (TEMPLATES_DIR / KWARGS_CASE["template"]).read_text(encoding="utf-8")
    given = dict.fromkeys(KWARGS_CASE["given"], True)
    request = RenderRequest(template=template, messages=[], kwargs=given)
    kwargs, _, tools = merged_options(request, [])
    # add_generation_prompt and continue_final_message are the request's own fields and
    # tools its tools argument: vLLM's expected set is what reaches apply_chat_template.
    passed = {*kwargs, "add_generation_prompt", "continue_final_message"}
    passed |= {"tools"} if tools is not None else set()
    assert passed == set(KWARGS_CASE["expected"])
    for name in KWARGS_CASE["refused_with"]:
        with pytest.raises(Refused, match="Found unexpected chat template kwargs"):
            merged_options(RenderRequest(template=template, messages=[], kwargs={name: 1}), [])


def test_every_extracted_case_is_run_or_listed_and_the_engine_page_counts_them():
    run = len(PARSE_CASES) + len(ARGUMENT_CASES) + 1
    assert all(reason for reason in NOT_REPRODUCIBLE.values())
    page = (REPO / "docs" / "engines" / "vllm.md").read_text(encoding="utf-8")
    stated = re.search(
        r"(\d+) cases of\s+vLLM's tests: (\d+) run .*?, (\d+) not\s+reproducible", page, re.S
    )
    assert stated, "docs/engines/vllm.md states the counts"
    assert tuple(map(int, stated.groups())) == (
        run + len(NOT_REPRODUCIBLE),
        run,
        len(NOT_REPRODUCIBLE),
    )


# Each rule, on a small template ------------------------------------------------------------


def test_generation_prompt_and_continuation_together_are_refused():
    message = _refusal(
        messages=[{"role": "user", "content": "Hi"}],
        add_generation_prompt=True,
        continue_final_message=True,
    )
    assert "Cannot set both" in message


def test_only_the_content_can_be_continued():
    messages = [{"role": "assistant", "content": "a", "reasoning": "r"}]
    assert "boolean" in _refusal(messages=messages, continue_final_message="reasoning")


def test_object_arguments_are_refused_and_empty_tool_calls_removed():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call]}]
    assert "valid string" in _refusal(messages=messages)
    template = "{% for m in messages %}{{ 'T' if m.tool_calls is defined else 'P' }}{% endfor %}"
    empty = [{"role": "assistant", "content": "a", "tool_calls": []}]
    assert _render(template=template, messages=empty).prompt == "P"
    assert render(RenderRequest(template=template, messages=empty)).prompt == "T"


def test_string_templates_get_text_joined_and_openai_templates_get_blocks():
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert _render(messages=[{"role": "user", "content": parts}]).prompt == "<user>a\nb"
    plain = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert _render(template=BLOCKS, messages=plain).prompt == "<system>[text:s]<user>[text:u]"
    forced = _render(messages=plain, content_format="openai").prompt
    assert forced == "<system>[{'type': 'text', 'text': 's'}]<user>[{'type': 'text', 'text': 'u'}]"


@pytest.mark.parametrize("engine", ["vllm"])
def test_media_with_a_string_template_is_refused(engine):
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    message = _refusal(engine, messages=[{"role": "user", "content": [image]}])
    assert "image" in message
    blocks = _render(engine, template=BLOCKS, messages=[{"role": "user", "content": [image]}])
    assert blocks.prompt == "<user>[image:]"


def test_message_keys_outside_vllms_set_are_dropped():
    template = "{% for m in messages %}{{ m | tojson }}{% endfor %}"
    message = {"role": "user", "content": "x", "name": "ann", "mood": "happy"}
    answer = _render(template=template, messages=[message])
    assert answer.prompt == '{"role": "user", "content": "x", "name": "ann"}'
    assert any("mood" in rewrite for rewrite in answer.rewrites)


@pytest.mark.parametrize("engine", ["vllm"])
def test_reasoning_fills_both_names_from_either(engine):
    # vLLM 0.33.0 renames a client's reasoning_content to reasoning, then writes both.
    template = (
        "{% for m in messages %}[{{ m.reasoning }}][{{ m.reasoning_content }}]"
        "{% if not loop.last %}|{% endif %}{% endfor %}"
    )
    messages = [
        {"role": "assistant", "content": "a", "reasoning": "r"},
        {"role": "assistant", "content": "b", "reasoning_content": "l"},
    ]
    assert _render(engine, template=template, messages=messages).prompt == "[r][r]|[l][l]"


@pytest.mark.parametrize(("engine", "expected"), [("vllm", "list")])
def test_tool_results_with_a_non_text_part(engine, expected):
    template = (
        "{% for m in messages %}{{ 'list' if m.content is not string else m.content }}{% endfor %}"
    )
    parts = [{"type": "text", "text": "a"}, {"type": "tool_reference", "name": "b"}]
    messages = [{"role": "tool", "tool_call_id": "1", "content": parts}]
    # With the "openai" format: a string template gets the texts joined on both servers.
    answer = _render(engine, template=template, messages=messages, content_format="openai")
    assert answer.prompt == expected


def test_developer_becomes_system_and_systems_merge_unless_the_template_names_developer():
    # What vLLM 0.33.0 renders for each (run in oracles.vllm.record's environment).
    messages = [
        {"role": "user", "content": "u"},
        {"role": "system", "content": "s1"},
        {"role": "developer", "content": "d"},
    ]
    assert _render(messages=messages).prompt == "<system>s1\n\nd<user>u"
    # The role counts as named only as a string: 'developer' or "developer".
    mentions = ECHO + "{# developer #}"
    assert _render(template=mentions, messages=messages).prompt == "<system>s1\n\nd<user>u"
    knows = ECHO + "{# 'developer' #}"
    assert _render(template=knows, messages=messages).prompt == "<user>u<system>s1<developer>d"
    # Without a developer message, system messages stay where they are.
    systems = [messages[0], messages[1], {"role": "system", "content": "s2"}]
    assert _render(messages=systems).prompt == "<user>u<system>s1<system>s2"


def test_explicit_fields_win_over_kwargs_and_unknown_kwargs_are_refused():
    template = "{{ add_generation_prompt }}|{{ documents | length if documents else 0 }}"
    kwargs = {"add_generation_prompt": True, "documents": [{"title": "t", "text": "x"}]}
    answer = _render(template=template, messages=[{"role": "user", "content": "x"}], kwargs=kwargs)
    assert answer.prompt == "False|1"
    assert "tokenize" in _refusal(
        messages=[{"role": "user", "content": "x"}], kwargs={"tokenize": 1}
    )


def test_tools_are_dumped_as_vllms_tool_model_writes_them():
    # What vLLM 0.33.0 renders for these tools (run in oracles.vllm.record's environment):
    # other keys dropped, the parameters' keys in the order sent, defer_loading passed on.
    template = "{{ tools | tojson }}"
    parameters = {"type": "object", "properties": {"b": {"type": "string"}, "a": {}}}
    tools = [
        {"type": "function", "x": 1,
         "function": {"name": "f", "strict": True, "extra": 2, "parameters": parameters}},
        {"function": {"name": "g"}, "defer_loading": True},
    ]  # fmt: skip
    answer = _render(template=template, messages=[{"role": "user", "content": "x"}], tools=tools)
    assert answer.prompt == (
        '[{"type": "function", "function": {"name": "f", "description": null, "parameters": '
        '{"type": "object", "properties": {"b": {"type": "string"}, "a": {}}}, "strict": true}}, '
        '{"type": "function", "function": {"name": "g", "description": null, "parameters": '
        'null, "defer_loading": true}, "defer_loading": true}]'
    )


def test_vllm_passes_every_special_token():
    template = "{{ bos_token }}|{{ unk_token }}"
    tokens = {"bos_token": "<s>", "unk_token": "<unk>"}
    message = [{"role": "user", "content": "x"}]
    assert _render("vllm", template, messages=message, special_tokens=tokens).prompt == "<s>|<unk>"


def test_api_takes_the_content_format_and_lists_the_rewrites(client):
    body = {
        "template": ECHO,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}],
        "engine": "vllm",
    }
    answer = client.post("/api/render", json=body).json
    assert answer["prompt"] == "<user>a"
    assert answer["rewrites"][0].startswith("content as text joined by newlines")
    refused = client.post("/api/render", json={**body, "content_format": "json"})
    assert (refused.status_code, refused.json["error"]["field"]) == (400, "content_format")


def test_the_content_format_is_part_of_the_state_only_when_it_is_forced():
    body = {"template": ECHO, "messages": [{"role": "user", "content": "x"}]}
    assert "content_format" not in PlaygroundState.from_json(body).to_json()
    forced = PlaygroundState.from_json({**body, "content_format": "openai"})
    assert forced.to_json()["content_format"] == "openai"
    assert forced.render_request().content_format == "openai"


@pytest.mark.parametrize("engine", ["vllm"])
def test_a_text_part_whose_text_is_not_a_string_is_refused_in_words(engine):
    # It used to answer Python's own "sequence item 0: expected str instance, int found".
    content = [{"type": "text", "text": 5}]
    message = _refusal(engine, messages=[{"role": "user", "content": content}])
    assert message == "messages[0].content[0].text: Input should be a valid string"


# What vLLM does not render with the template ---------------------------------------------


@pytest.mark.parametrize(
    ("template", "model", "words"),
    [
        ("{{ '<|start|>' }}{{ '<|channel|>' }}{{ '<|message|>' }}", None, "Harmony"),
        (ECHO, "gpt-oss-20b", "Harmony"),
        (ECHO, "Mistral-Small-3.2-24B-Instruct-2506-Q4_K_M.gguf", "mistral_common"),
        ("[SYSTEM_PROMPT]{{ messages[0].content }}", None, "mistral_common"),
        (ECHO, "DeepSeek-V3.2-Exp", "DeepSeek V3.2"),
        (ECHO, "deepseek-ai DeepSeek-V4-Flash", "DeepSeek V4"),
        ("<|open|>message role=", None, "Kimi K3"),
        ("<|START_OF_TURN_TOKEN|>{{ messages[0].content }}", None, "--tokenizer-mode cohere"),
        (ECHO, "Command R7B 12 2024", "cohere_melody"),
        (ECHO, "CohereLabs command-a-reasoning-08-2025", "cohere_melody"),
    ],
)
def test_models_vllm_serves_without_their_template_are_said(template, model, words):
    [caveat] = VllmEngine().caveats(template, model)
    assert words in caveat
    assert TransformersEngine().caveats(template, model) == []


def test_the_page_and_the_api_say_when_vllm_does_not_use_the_template(client):
    template = (REPO / "templates_lib" / "gpt-oss.jinja").read_text(encoding="utf-8")
    body = {"template": template, "messages": [{"role": "user", "content": "Hi"}]}
    answer = client.post("/api/render", json={**body, "engine": "vllm"}).json
    assert any("Harmony" in caveat for caveat in answer["caveats"])
    assert client.post("/api/render", json=body).json["caveats"] == []
    form = {"template": template, "messages": json.dumps(body["messages"]), "engine": "vllm"}
    page = client.post("/fragments/output", data=form).get_data(as_text=True)
    assert 'id="caveats"' in page and "Harmony" in page
    plain = client.post("/fragments/output", data={**form, "engine": "transformers"})
    assert 'id="caveats"' not in plain.get_data(as_text=True)


def test_the_page_says_it_when_the_render_fails_too(client):
    # A user who loads gpt-oss and gets an error must still learn vLLM would not use it.
    template = (REPO / "templates_lib" / "gpt-oss.jinja").read_text(encoding="utf-8")
    refused = [{"role": "user", "content": [{"type": "no-such-part"}]}]
    form = {"template": template, "messages": json.dumps(refused), "engine": "vllm"}
    page = client.post("/fragments/output", data=form).get_data(as_text=True)
    assert 'id="no-prompt"' in page
    assert 'id="caveats"' in page and "Harmony" in page


def test_rewrites_are_labelled_with_the_engine_that_made_them(client):
    form = {"template": BLOCKS, "messages": json.dumps([{"role": "user", "content": "x"}])}
    page = client.post("/fragments/output", data={**form, "engine": "vllm"})
    assert "<li>vLLM (OpenAI server): content as typed blocks" in page.get_data(as_text=True)
