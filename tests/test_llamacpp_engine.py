"""The llama.cpp engine against a real llama-server: every recorded /apply-template render.

The recordings (`renders-b10573.json`, see tests/support/shared_data.py) hold what llama-server
b10573 answered for each template and conversation. Every pair must render to the same
string (or fail where the server failed), except the pairs listed in
`KNOWN_DIFFERENCES`, which must still differ so that the list stays honest.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from functools import cache
from typing import Any

import pytest

from app.problems import TemplateProblem
from app.render.core import Rendered, RenderRequest, render_with
from app.render.engines.llamacpp.render import KNOWN_DIFFERENCES, LlamaCppEngine
from tests.support.shared_data import LLAMA_SERVER_RENDERS, TEMPLATES_DIR, require_shared

require_shared()

#: The day the recordings were made: templates that print the date printed this one.
RECORDED_ON = datetime(2026, 11, 29, 12, 0, 0)


def render_llamacpp(
    request: RenderRequest,
    *,
    add_bos_token: bool = False,
    add_eos_token: bool = False,
    bos_token: str | None = None,
    eos_token: str | None = None,
) -> Rendered:
    """Render `request` as llama-server would, with what it reads from the model: whether
    its vocabulary adds BOS/EOS, and their texts (default: the request's special tokens)."""
    tokens = dict(request.special_tokens)
    for name, text in (("bos_token", bos_token), ("eos_token", eos_token)):
        if text is not None:
            tokens[name] = text
    request = replace(
        request, special_tokens=tokens, add_bos_token=add_bos_token, add_eos_token=add_eos_token
    )
    return render_with(LlamaCppEngine(), request)


@cache
def recordings() -> dict[str, Any]:
    return json.loads(LLAMA_SERVER_RENDERS.read_text(encoding="utf-8"))


def pairs() -> list[tuple[str, str]]:
    data = recordings()
    return [(name, case["name"]) for name in data["templates"] for case in data["cases"]]


def render_pair(template_name: str, case_name: str) -> str | TemplateProblem:
    """What we render for one recorded pair, with the recording run's vocabulary settings."""
    data = recordings()
    case = next(c for c in data["cases"] if c["name"] == case_name)
    request = RenderRequest(
        template=(TEMPLATES_DIR / template_name).read_text(encoding="utf-8"),
        messages=case["messages"],
        tools=case.get("tools"),
        add_generation_prompt=case["add_generation_prompt"],
        kwargs=case.get("kwargs", {}),
        now=RECORDED_ON,
    )
    try:
        return render_llamacpp(
            request,
            add_bos_token=True,
            bos_token=data["bos_token"],
            eos_token=data["eos_token"],
        ).prompt
    except TemplateProblem as problem:
        return problem


def matches(template_name: str, case_name: str) -> bool:
    expected = recordings()["templates"][template_name]["renders"][case_name]
    actual = render_pair(template_name, case_name)
    if isinstance(expected, str):
        return actual == expected
    return isinstance(actual, TemplateProblem)  # llama-server answered an error


@pytest.mark.parametrize(("template_name", "case_name"), pairs())
def test_render_matches_llama_server(template_name: str, case_name: str) -> None:
    if (template_name, case_name) in KNOWN_DIFFERENCES:
        assert not matches(template_name, case_name), "a known difference is gone: remove it"
        return
    expected = recordings()["templates"][template_name]["renders"][case_name]
    actual = render_pair(template_name, case_name)
    if isinstance(expected, str):
        assert not isinstance(actual, TemplateProblem), f"llama-server rendered: {actual}"
        assert actual == expected
    else:
        assert isinstance(actual, TemplateProblem), "llama-server answered an error here"


def test_known_differences_are_recorded_pairs_with_causes() -> None:
    recorded = set(pairs())
    for pair, cause in KNOWN_DIFFERENCES.items():
        assert pair in recorded
        assert cause.strip()
    # The bar: at least 99% of the recorded pairs match exactly.
    assert len(KNOWN_DIFFERENCES) <= len(recorded) // 100


def render(template: str, messages: list[dict[str, Any]], **options: Any) -> Rendered:
    request_options = {
        k: options.pop(k) for k in ("tools", "add_generation_prompt", "kwargs") if k in options
    }
    request = RenderRequest(template=template, messages=messages, **request_options)
    return render_llamacpp(request, **options)


PLAIN = (
    "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}"
)


def test_developer_becomes_system_and_is_reported() -> None:
    result = render(PLAIN, [{"role": "developer", "content": "Be brief."}])
    assert result.prompt == "[system]Be brief."
    assert "developer message turned into system" in result.rewrites


def test_system_is_merged_where_the_template_has_no_system_role() -> None:
    template = (
        "{% for m in messages %}{% if m.role == 'user' %}[u]{{ m.content }}{% endif %}{% endfor %}"
    )
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    result = render(template, messages)
    assert result.prompt == "[u]Be brief.\nHi"
    assert any("merged into the first user message" in r for r in result.rewrites)


def test_string_arguments_are_parsed_for_templates_that_read_objects() -> None:
    template = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}"
    )
    call = {"type": "function", "function": {"name": "calc", "arguments": '{"expr": "2^10"}'}}
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call]}]
    messages.append({"role": "tool", "content": "1024"})
    result = render(template, messages)
    assert result.prompt == '{"expr": "2^10"}'
    assert "tool arguments parsed from a JSON string" in result.rewrites


def test_bos_and_eos_are_stripped_only_when_the_vocabulary_adds_them() -> None:
    template = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}"
    messages = [{"role": "user", "content": "Hi"}]
    kept = render(template, messages, bos_token="<s>", eos_token="</s>")
    assert kept.prompt == "<s>Hi</s>"
    cut = render(
        template,
        messages,
        bos_token="<s>",
        eos_token="</s>",
        add_bos_token=True,
        add_eos_token=True,
    )
    assert cut.prompt == "Hi"
    assert "leading BOS stripped: the vocabulary adds it" in cut.rewrites
    assert "trailing EOS stripped: the vocabulary adds it" in cut.rewrites


def test_a_final_assistant_message_is_continued() -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hel"}]
    result = render(PLAIN, messages)
    assert result.prompt == "[user]Hi[assistant]Hel"
    assert any("prefill" in r for r in result.rewrites)


def test_variables_are_llama_servers() -> None:
    template = "{{ datetime }}|{{ date_string }}|{{ enable_thinking }}|{{ add_generation_prompt }}"
    request = RenderRequest(
        template=template, messages=[{"role": "user", "content": "Hi"}], now=RECORDED_ON
    )
    # No reasoning in this template: llama-server turns thinking off; no generation
    # prompt asked for: the variable is not defined at all.
    assert render_llamacpp(request).prompt == "Nov 29 2026|29 Nov 2026|False|"


def test_llama_engine_semantics() -> None:
    template = (
        "{{ none_var.field.deeper }}|{{ 'a' + missing }}|{{ x | default('d') }}"
        "|{{ {'b': 1, 'a': [1, 2]} | tojson }}|{{ items | map(attribute='n') | list }}"
    )
    kwargs = {"x": None, "items": [{"n": 1}, {"n": 2}]}
    result = render(template, [{"role": "user", "content": "Hi"}], kwargs=kwargs)
    assert result.prompt == '|a|d|{"b": 1, "a": [1, 2]}|[1, 2]'
    with pytest.raises(TemplateProblem):
        render("{{ {'a': 1} | tojson(sort_keys=true) }}", [{"role": "user", "content": "Hi"}])


def test_requests_llama_server_refuses() -> None:
    two_assistants = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]
    with pytest.raises(TemplateProblem, match="2 or more assistant messages"):
        render(PLAIN, two_assistants)
    with pytest.raises(TemplateProblem, match="must contain 'content'"):
        render(PLAIN, [{"role": "user"}])
    with pytest.raises(TemplateProblem, match="enable_thinking"):
        render(PLAIN, [{"role": "user", "content": "Hi"}], kwargs={"enable_thinking": "yes"})


#: Constructs llama.cpp's Jinja engine (common/jinja/value.cpp, b10573) refuses where Python's
#: Jinja renders, each with the message a llama-server user reads (its not_implemented_exception
#: prefixes "NotImplemented: ").
REFUSED_CONSTRUCTS = {
    "sameas test": ("{{ none is sameas none }}", "NotImplemented: sameas test not implemented"),
    "filter test": ("{{ 'upper' is filter }}", "NotImplemented: filter test not implemented"),
    "escaped test": (
        "{{ 'foo'|safe is escaped }}",
        "NotImplemented: escaped test not implemented",
    ),
    "replace filter with a count": (
        "{{ 'a-a-a' | replace('-', '+', 1) }}",
        "NotImplemented: String replace with count argument not implemented",
    ),
    "replace method with a count": (
        "{{ 'a-a-a'.replace('-', '+', 2) }}",
        "NotImplemented: String replace with count argument not implemented",
    ),
    "format with a numbered field": (
        "{{ '{0}'.format('x') }}",
        "NotImplemented: format() only supports simple '{}' placeholders",
    ),
    "format with a named field": (
        "{{ '{name}'.format(name='x') }}",
        "NotImplemented: format() only supports simple '{}' placeholders",
    ),
    "format with a format spec": (
        "{{ '{:>5}'.format(1) }}",
        "NotImplemented: format() only supports simple '{}' placeholders",
    ),
    "map through a filter": (
        "{{ ['1', '2'] | map('int') | list }}",
        "NotImplemented: map: filter-mapping not implemented",
    ),
    "min by attribute": (
        "{{ (items | min(attribute='n')).n }}",
        "NotImplemented: min: attribute not implemented",
    ),
    "max by attribute": (
        "{{ (items | max(attribute='n')).n }}",
        "NotImplemented: max: attribute not implemented",
    ),
}


@pytest.mark.parametrize("construct", REFUSED_CONSTRUCTS)
def test_constructs_llama_cpp_refuses_raise_its_message(construct: str) -> None:
    template, message = REFUSED_CONSTRUCTS[construct]
    kwargs = {"items": [{"n": 2}, {"n": 1}]}
    with pytest.raises(TemplateProblem) as raised:
        render(template, [{"role": "user", "content": "Hi"}], kwargs=kwargs)
    assert (raised.value.type, raised.value.message) == ("NotImplementedError", message)
    assert raised.value.line == 1


def test_what_llama_cpp_accepts_of_those_constructs_still_renders() -> None:
    # The plain forms of the same builtins: '{}' placeholders (tencent-Hy3 relies on them and
    # llama-server rendered it), replace without a count, map by attribute, min/max of values.
    template = (
        "{{ '<a{}b{}>'.format(1, 'x') }}|{{ 'a-a' | replace('-', '+') }}"
        "|{{ items | map(attribute='n') | list }}|{{ [3, 1, 2] | min }}{{ [3, 1, 2] | max }}"
    )
    result = render(template, [{"role": "user", "content": "Hi"}], kwargs={"items": [{"n": 2}]})
    assert result.prompt == "<a1bx>|a+a|[2]|13"
