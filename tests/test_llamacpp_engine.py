"""The llama.cpp engine against llama.cpp's own code: every recorded /apply-template render.

The recording (`oracles/llamacpp/renders.json`, see oracles/llamacpp/__init__.py)
holds what llama-server's /apply-template answers at the engine's build for each shared
template and conversation, taken with llama.cpp's own library through the same steps.
Every pair must render to the same string (or fail where the server fails), except the
pairs listed in `KNOWN_DIFFERENCES`, which must still differ so that the list stays honest.
The recording itself is checked against what a real llama-server of an earlier build
rendered (`renders-b10573.json` in the shared data) where the two builds' code agrees.
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
from app.render.engines.llamacpp.engine import LlamaCppEngine
from oracles.llamacpp import CONSTRUCTS, KNOWN_DIFFERENCES, RENDERS, load
from tests.support.shared_data import LLAMA_SERVER_RENDERS, TEMPLATES_DIR, require_shared

require_shared()

#: The day the recordings were made: templates that print the date printed this one.
RECORDED_ON = datetime(2026, 11, 29, 12, 0, 0)
#: The recording's vocabulary (ggml-vocab-llama-spm.gguf): its BOS and EOS, BOS added.
BOS, EOS = "<s>", "</s>"


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


def recordings() -> dict[str, Any]:
    return load(RENDERS)


@cache
def real_server_recordings() -> dict[str, Any]:
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
            bos_token=BOS,
            eos_token=EOS,
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


def _typed_parts(case: dict[str, Any]) -> bool:
    """Whether a conversation sends some content as a list of typed parts."""
    return any(isinstance(m.get("content"), list) for m in case["messages"])


def test_recording_agrees_with_a_real_llama_server_where_the_builds_agree() -> None:
    # The recording is llama.cpp's library driven by our harness, not a running server:
    # where the two builds' code is the same, it must answer what a real llama-server
    # answered. Between b10573 and b11434 only caps.cpp's typed-content check changed
    # (a template that tests `content is string` and reads an empty list as a list now
    # takes typed parts), so only those templates may differ, on conversations with parts.
    ours, server = recordings(), real_server_recordings()
    assert ours["cases"] == server["cases"]
    typed = [c["name"] for c in server["cases"] if _typed_parts(c)]
    assert typed
    for name, theirs in server["templates"].items():
        mine = ours["templates"][name]
        changed = {k for k in theirs["caps"] if theirs["caps"][k] != mine["caps"][k]}
        assert changed <= {"supports_typed_content"}, name
        for case, expected in theirs["renders"].items():
            actual = mine["renders"][case]
            if changed and case in typed:
                continue
            if isinstance(expected, str):
                assert actual == expected, (name, case)
            else:
                assert isinstance(actual, dict) and "error" in actual, (name, case)


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


def constructs() -> dict[str, Any]:
    return load(CONSTRUCTS)


@pytest.mark.parametrize("name", list(constructs()["constructs"]))
def test_constructs_render_as_llama_cpp_renders_them(name: str) -> None:
    # Where llama.cpp's Jinja engine differs from Python's (what it refuses, prints or
    # computes its own way), as its library answered at the engine's build. A refusal
    # answers the same message, which llama-server wraps in its own words.
    recorded = constructs()["constructs"][name]
    request = RenderRequest(
        template=recorded["template"],
        messages=[{"role": "user", "content": "Hi"}],
        kwargs=constructs()["kwargs"],
    )
    if "prompt" in recorded:
        assert render_llamacpp(request).prompt == recorded["prompt"]
        return
    with pytest.raises(TemplateProblem) as raised:
        render_llamacpp(request)
    assert raised.value.message in recorded["error"]
    assert raised.value.line == 1


@pytest.mark.parametrize("name", list(constructs()["requests"]))
def test_requests_are_parsed_as_llama_server_parses_them(name: str) -> None:
    # What llama-server's request parsing does with a conversation (rewrites it, or
    # answers HTTP 400 with its message), and how the handler a template's markers pick
    # continues a final message, as its library answered at the engine's build.
    recorded = constructs()["requests"][name]
    request = RenderRequest(
        template=recorded.get("template", constructs()["request_template"]),
        messages=recorded["messages"],
        kwargs=recorded["kwargs"],
        add_generation_prompt=True,  # the request sends none: the server's default
    )
    if "prompt" in recorded:
        assert render_llamacpp(request).prompt == recorded["prompt"]
        return
    with pytest.raises(TemplateProblem) as raised:
        render_llamacpp(request)
    assert (raised.value.type, raised.value.message) == ("InvalidRequest", recorded["error"])
