"""Focused checks of the render core against the real transformers library.

Each test renders one small template both ways, so a difference in one rule (None
dropping, reasoning aliases, `continue_final_message`, the filters and globals) shows
up on its own rather than somewhere in the corpus.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines import render_exactly
from oracles.transformers.reference import Outcome, reference_generation_spans, reference_render
from tests.support.corpus import DEFAULT_SPECIAL_TOKENS, PINNED_NOW, case_request, our_outcome

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
HELLO = [{"role": "user", "content": "Hello"}]


def case(messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    return {
        "messages": messages,
        "tools": options.get("tools"),
        "documents": options.get("documents"),
        "add_generation_prompt": options.get("add_generation_prompt", False),
        "continue_final_message": options.get("continue_final_message", False),
        "kwargs": options.get("kwargs", {}),
        "special_tokens": options.get("special_tokens", dict(DEFAULT_SPECIAL_TOKENS)),
    }


def ours(template: str, conversation: dict[str, Any]) -> Outcome:
    return our_outcome(conversation, template)


def assert_same(template: str, messages: list[dict[str, Any]], **options: Any) -> Outcome:
    """Both renders agree exactly, errors included; returns transformers' outcome."""
    conversation = case(messages, **options)
    expected = reference_render(conversation, template)
    assert ours(template, conversation) == expected
    return expected


def problem(template: str, messages: list[dict[str, Any]], **options: Any) -> TemplateProblem:
    conversation = case(messages, **options)
    with pytest.raises(TemplateProblem) as raised:
        render_exactly(case_request(conversation, template))
    return raised.value


# --- generation spans -------------------------------------------------------------------

GENERATION_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m.role == 'assistant' %}<|assistant|>\n"
    "{% generation %}{{ m.content }}{{ eos_token }}{% endgeneration %}\n"
    "{% else %}<|{{ m.role }}|>\n{{ m.content }}\n{% endif %}{% endfor %}"
)
GENERATION_TEMPLATE_TRIMMED = (
    "{%- for m in messages -%}\n"
    "  {%- if m.role == 'assistant' -%}\n"
    "    {{- '[A] ' -}}\n"
    "    {%- generation -%}\n"
    "      {{- m.content | trim -}}\n"
    "    {%- endgeneration -%}\n"
    "    {{- ' [/A]\\n' -}}\n"
    "  {%- else -%}\n"
    "    {{- '[' + m.role + '] ' + m.content + '\\n' -}}\n"
    "  {%- endif -%}\n"
    "{%- endfor -%}"
)
#: Inside a macro the span starts where the top-level output was when the macro ran.
GENERATION_IN_MACRO = (
    "{% macro answer(m) %}<a>{% generation %}{{ m.content }}{% endgeneration %}</a>{% endmacro %}"
    "{% for m in messages %}{% if m.role == 'assistant' %}{{ answer(m) }}"
    "{% else %}<{{ m.role }}>{{ m.content }}{% endif %}{% endfor %}"
)
GENERATION_CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi 👋"},
    {"role": "assistant", "content": "  Hello, 世界!  "},
    {"role": "user", "content": "Again"},
    {"role": "assistant", "content": "Hello again."},
]


@pytest.mark.parametrize(
    "template", [GENERATION_TEMPLATE, GENERATION_TEMPLATE_TRIMMED, GENERATION_IN_MACRO]
)
def test_generation_spans_match_transformers(template: str) -> None:
    prompt, spans = reference_generation_spans(
        template, GENERATION_CONVERSATION, DEFAULT_SPECIAL_TOKENS
    )
    rendered = render_exactly(
        RenderRequest(
            template=template,
            messages=copy.deepcopy(GENERATION_CONVERSATION),
            special_tokens=DEFAULT_SPECIAL_TOKENS,
            now=PINNED_NOW,
        )
    )
    assert len(spans) == 2
    assert rendered.prompt == prompt
    assert rendered.generation_spans == spans
    if template is not GENERATION_IN_MACRO:
        assert prompt[slice(*spans[1])].startswith("Hello again.")


def test_template_without_generation_blocks_has_no_spans() -> None:
    rendered = render_exactly(RenderRequest(template=CHATML, messages=copy.deepcopy(HELLO)))
    assert rendered.generation_spans == []
    assert reference_generation_spans(CHATML, HELLO, DEFAULT_SPECIAL_TOKENS)[1] == []


# --- continue_final_message ---------------------------------------------------------------

CONTINUATION = [
    {"role": "user", "content": "List colours."},
    {"role": "assistant", "content": "Red, green,   "},
]


def test_continue_final_message_keeps_spacing_when_template_keeps_it() -> None:
    outcome = assert_same(CHATML, CONTINUATION, continue_final_message=True)
    assert outcome == ("ok", "<|im_start|>user\nList colours.<|im_end|>\n<|im_start|>assistant\n"
                       "Red, green,   ")  # fmt: skip


def test_continue_final_message_with_trimmed_trailing_spaces() -> None:
    # The tag's own trailing space is trimmed away too, so transformers cuts before it and
    # strips the spacing the continued text ended with.
    template = "{% for m in messages %}[{{ m.role }}] {{ m.content | trim }}[end]\n{% endfor %}"
    outcome = assert_same(template, CONTINUATION, continue_final_message=True)
    assert outcome == ("ok", "[user] List colours.[end]\n[assistant] Red, green,")


def test_continue_final_message_with_content_blocks() -> None:
    template = (
        "{% for m in messages %}{{ m.role }}: {% for b in m.content %}{{ b.text }}{% endfor %}"
        "\n{% endfor %}"
    )
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Count"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "One, "}, {"type": "text", "text": "two"}],
        },
    ]
    assert assert_same(template, messages, continue_final_message=True) == (
        "ok",
        "user: Countassistant: One, two",  # trim_blocks eats the newline
    )


def test_continue_final_message_of_a_missing_field() -> None:
    template = "{% for m in messages %}{{ m.reasoning_content }}{{ m.content }}{% endfor %}"
    outcome = assert_same(template, CONTINUATION, continue_final_message="reasoning_content")
    assert outcome[:2] == ("error", "ValueError")
    assert 'no "reasoning_content" to continue' in outcome[2]


def test_continue_final_message_of_a_field_the_template_never_reads() -> None:
    messages = [{"role": "assistant", "content": "x", "reasoning_content": "Thinking"}]
    outcome = assert_same(CHATML, messages, continue_final_message="reasoning_content")
    assert outcome[:2] == ("error", "ValueError")
    assert "not an accepted field" in outcome[2]


def test_continue_final_message_when_the_template_drops_the_text() -> None:
    template = "{# content #}{% for m in messages %}<{{ m.role }}>{% endfor %}"
    outcome = assert_same(template, CONTINUATION, continue_final_message=True)
    assert outcome[:2] == ("error", "ValueError")
    assert "does not appear in the chat" in outcome[2]


def test_continue_final_message_with_add_generation_prompt() -> None:
    outcome = assert_same(
        CHATML, CONTINUATION, continue_final_message=True, add_generation_prompt=True
    )
    assert outcome[:2] == ("error", "ValueError")
    assert "not compatible" in outcome[2]


def test_continue_final_message_through_a_reasoning_alias() -> None:
    template = (
        "{% for m in messages %}{% if m.thinking %}<think>{{ m.thinking }}</think>"
        "{% endif %}{{ m.content }}{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "", "reasoning": "Step one"},
    ]
    outcome = assert_same(template, messages, continue_final_message="reasoning")
    assert outcome == ("ok", "Q<think>Step one")


# --- input normalisation ------------------------------------------------------------------


def test_none_valued_keys_are_dropped() -> None:
    template = (
        "{% for m in messages %}{{ m.role }}:{{ m.content is defined }},"
        "{{ m.tool_calls is defined }},{{ m.name is defined }};{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "hi", "name": None},
        {"role": "assistant", "content": None, "tool_calls": None},
    ]
    assert assert_same(template, messages) == (
        "ok",
        "user:True,False,False;assistant:False,False,False;",
    )


REASONING_TEMPLATE = (
    "{% for m in messages %}{{ m.role }}|{{ m.reasoning_content }}|{{ m.thinking }}|"
    "{{ m.reasoning }}|{{ m.content }}\n{% endfor %}"
)


@pytest.mark.parametrize("name", ["thinking", "reasoning", "reasoning_content"])
def test_reasoning_aliases(name: str) -> None:
    messages = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", name: "Because.", "content": "A"},
    ]
    outcome = assert_same(REASONING_TEMPLATE, messages)
    assert outcome[0] == "ok"
    assert outcome[1].splitlines()[1].startswith("assistant|Because.|Because.|")


def test_reasoning_alias_prefers_reasoning_content() -> None:
    messages = [
        {"role": "assistant", "reasoning": "second", "reasoning_content": "first", "content": "A"}
    ]
    assert assert_same(REASONING_TEMPLATE, messages) == (
        "ok",
        "assistant|first|first|second|A\n",
    )


def test_empty_conversation_is_refused() -> None:
    outcome = assert_same(CHATML, [])
    assert outcome[:2] == ("error", "ValueError")
    assert "empty conversation" in outcome[2]


# --- variables, filters and globals -------------------------------------------------------


def test_kwargs_override_special_tokens() -> None:
    template = "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}{{ unk_token }}"
    outcome = assert_same(template, HELLO, kwargs={"bos_token": "[BOS]", "eos_token": "[EOS]"})
    assert outcome == ("ok", "[BOS]Hello[EOS]<unk>")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("value | tojson", '{"名前": "Zoë", "emoji": "🎉", "n": [1, 2]}'),
        ("value | tojson(ensure_ascii=True)", None),
        ("value | tojson(indent=2)", None),
        ("value | tojson(indent='\\t', sort_keys=True)", None),
        ("value | tojson(separators=(',', ':'))", '{"名前":"Zoë","emoji":"🎉","n":[1,2]}'),
        ("'<a href=\"x\">&</a>' | tojson", '"<a href=\\"x\\">&</a>"'),
    ],
)
def test_tojson(expression: str, expected: str | None) -> None:
    template = "{{ " + expression + " }}"
    value = {"名前": "Zoë", "emoji": "🎉", "n": [1, 2]}
    outcome = assert_same(template, HELLO, kwargs={"value": value})
    assert outcome[0] == "ok"
    if expected is not None:
        assert outcome[1] == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{% set ns = namespace(_hidden=1) %}{{ ns._hidden }}", "SecurityError"),
        ("{% set ns = namespace({'_x': 1}) %}{{ 1 }}", "SecurityError"),
        ("{% set ns = namespace(a=1) %}{% set ns._b = 2 %}{{ ns.a }}", "SecurityError"),
        ("{% set ns = namespace(a=1) %}{% set ns.a = 2 %}{{ ns.a }}", "2"),
    ],
)
def test_namespace_underscore_refusal(template: str, expected: str) -> None:
    outcome = assert_same(template, HELLO)
    if expected == "SecurityError":
        assert outcome[:2] == ("error", "SecurityError")
    else:
        assert outcome == ("ok", expected)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ dict(a=1, b='x') | tojson }}", '{"a": 1, "b": "x"}'),
        ("{{ dict([('k', 2)]) }}", "{'k': 2}"),
        ("{{ dict.fromkeys(['x', 'y'], 0) | tojson }}", '{"x": 0, "y": 0}'),
        ("{{ dict.__class__ }}", None),
    ],
)
def test_dict_global(template: str, expected: str | None) -> None:
    outcome = assert_same(template, HELLO)
    if expected is not None:
        assert outcome == ("ok", expected)


def test_loop_controls() -> None:
    template = (
        "{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}"
        "{% if m.content == 'stop' %}{% break %}{% endif %}{{ m.content }};{% endfor %}"
    )
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "stop"},
        {"role": "assistant", "content": "never"},
    ]
    assert assert_same(template, messages) == ("ok", "a;b;")


def test_strftime_now_reads_the_pinned_clock() -> None:
    assert assert_same("{{ strftime_now('%d %b %Y %H:%M') }}", HELLO) == (
        "ok",
        "29 Nov 2026 12:00",
    )


def test_raise_exception_matches() -> None:
    outcome = assert_same("{{ raise_exception('No system role, ' + messages[0].role) }}", HELLO)
    assert outcome == ("error", "TemplateError", "No system role, user")


def test_syntax_error_matches() -> None:
    outcome = assert_same("{% for m in messages %}{{ m.content }}", HELLO)
    assert outcome[:2] == ("error", "TemplateSyntaxError")


# --- line numbers (ours only: transformers does not report them) ---------------------------


def test_syntax_error_reports_its_template_line() -> None:
    template = "{# one #}\n{% set x = 1 %}\n{% if x %}{{ x }\n{% endif %}\n"
    found = problem(template, HELLO)
    assert found.type == "TemplateSyntaxError"
    assert found.line == 3


def test_raise_exception_reports_its_template_line() -> None:
    template = "{% set role = messages[0].role %}\n{{ raise_exception('bad role ' + role) }}\n"
    found = problem(template, HELLO)
    assert (found.type, found.message, found.line) == ("TemplateError", "bad role user", 2)
