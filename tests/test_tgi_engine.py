"""The TGI engine against TGI's own chat-template tests, and its router rules one by one.

`oracles/tgi/tgi_tests.json` holds the inputs and expected outputs of the Rust tests of
text-generation-inference v3.3.7 (router/src/infer/chat_template.rs and router/src/lib.rs),
read out of their source as data:
- `engine_cases`: a template rendered in TGI's MiniJinja environment with given inputs;
- `router_cases`: a request through `ChatTemplate::apply` (tools given directly, as
  `tool_choice: "required"` does);
- `flatten_cases`, `serialise_cases`: how content parts and tool calls become text.
Every case must pass.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

import pytest

from app.render.core import RenderRequest, render_with
from app.render.engines.tgi import TgiEngine
from app.render.engines.tgi import template as tgi_template
from app.render.engines.tgi.router import DEFAULT_TOOL_PROMPT, shape_request
from app.render.limits import DEFAULT_LIMITS, RenderLimits
from oracles.tgi import TGI_TESTS

NOW = datetime(2026, 11, 29, 12, 0, 0)


@cache
def tgi_tests() -> dict[str, Any]:
    return json.loads(TGI_TESTS.read_text(encoding="utf-8"))


def _case_id(case: dict[str, Any]) -> str:
    return case.get("name") or case["test"]


def tgi_render(request: RenderRequest, limits: RenderLimits = DEFAULT_LIMITS):
    return render_with(TgiEngine(), request, limits)


def test_the_extraction_holds_every_tgi_test() -> None:
    data = tgi_tests()
    counts = [len(data[kind]) for kind in ("engine_cases", "router_cases")]
    assert counts == [35, 3]  # 7 single tests, 28 of test_many_chat_templates; 3 apply tests


@pytest.mark.parametrize("case", tgi_tests()["engine_cases"], ids=_case_id)
def test_tgi_engine_case(case: dict[str, Any]) -> None:
    env = tgi_template.environment(NOW, DEFAULT_LIMITS.cpu_seconds)
    messages = [dict(sorted(message.items())) for message in case["messages"]]
    context = {
        "messages": messages,
        "bos_token": case["bos_token"],
        "eos_token": case["eos_token"],
        "add_generation_prompt": case["add_generation_prompt"],
        "tools": None,
    }
    if "error" in case:
        with pytest.raises(tgi_template.RaisedException, match=case["error"].replace(".", r"\.")):
            tgi_template.render(env, case["template"], context)
        return
    expected = case.get("expected")
    if expected is None:
        expected = case["expected_with_date"].format(date=NOW.strftime(case["date_format"]))
    assert tgi_template.render(env, case["template"], context) == expected


@pytest.mark.parametrize("case", tgi_tests()["router_cases"], ids=_case_id)
def test_tgi_router_case(case: dict[str, Any]) -> None:
    kwargs = {"tool_choice": "required", "tool_prompt": case.get("tool_prompt")}
    request = RenderRequest(
        template=case["template"],
        messages=case["messages"],
        tools=case.get("tools"),
        special_tokens={"bos_token": case["bos_token"], "eos_token": case["eos_token"]},
        kwargs=kwargs,
        add_generation_prompt=True,
        now=NOW,
    )
    assert tgi_render(request).prompt == case["expected"]


def test_content_parts_flatten_as_tgi_does() -> None:
    for case in tgi_tests()["flatten_cases"]:
        message = {"role": "user", "content": case["content"]}
        shaped = shape_request([message], None, {}, template_reads_tools=True)
        assert shaped.messages[0]["content"] == case["expected"]


def test_tool_calls_serialise_as_tgi_does() -> None:
    for case in tgi_tests()["serialise_cases"]:
        message = {"role": "assistant", "tool_calls": case["tool_calls"]}
        shaped = shape_request([message], None, {}, template_reads_tools=True)
        assert (
            '{"role":"assistant","tool_calls":' + shaped.messages[0]["content"] + "}"
            == (case["expected"])
        )


# The router's rules that TGI's own tests leave out, as read in its source (lib.rs,
# infer/tool_grammar.rs, infer/chat_template.rs).

ECHO = "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
WEATHER = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}


def _tgi(template: str, messages: list[dict[str, Any]], **fields: Any):
    return tgi_render(RenderRequest(template, messages, engine="tgi", now=NOW, **fields))


def test_tool_choice_auto_offers_no_tool_and_appends_the_default_prompt() -> None:
    rendered = _tgi(ECHO, [{"role": "user", "content": "Hi"}], tools=[WEATHER])
    listed = (
        '[{"type":"function","function":{"description":null,"name":"weather",'
        '"arguments":"{\\"type\\":\\"object\\"}"}},{"type":"function","function":'
        '{"description":"Open ended response with no specific tool selected",'
        '"name":"no_tool","arguments":"{\\"type\\":\\"object\\"}"}}]'
    )
    assert rendered.prompt == f"[user]Hi\n---\n{listed}\n" + DEFAULT_TOOL_PROMPT
    assert 'tool "no_tool" added (tool_choice "auto", TGI\'s default)' in rendered.rewrites


def test_tool_choice_none_leaves_the_tools_out() -> None:
    template = "{{ tools }}|" + ECHO
    rendered = _tgi(
        template,
        [{"role": "user", "content": "Hi"}],
        tools=[WEATHER],
        kwargs={"tool_choice": "none"},
    )
    assert rendered.prompt == "none|[user]Hi"


def test_a_final_assistant_message_is_continued() -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hel"}]
    rendered = _tgi(ECHO + "<end>  \n", messages)
    assert rendered.prompt == "[user]Hi[assistant]Hel"


def test_content_wins_over_tool_calls() -> None:
    call = {"id": "0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    # The content is empty: it is "found" at the very end, and the prompt is kept whole.
    assert _tgi(ECHO + "!", messages).prompt == "[assistant]!"


def test_the_template_rewrites_are_listed() -> None:
    roles = "(messages|map(attribute='role')|list)[::-1]|join(',')"
    template = "{% generation %}{{ " + roles + " }}{% endgeneration %}"
    rendered = _tgi(
        template, [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]
    )
    assert rendered.prompt == "system,user"
    assert "template: [::-1] replaced by |reverse (TGI's Qwen3 patch)" in rendered.rewrites
    assert "template: {% generation %} removed" in rendered.rewrites
