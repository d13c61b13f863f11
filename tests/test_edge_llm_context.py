"""Edge-LLM's request shaping (`app.render.engines.edge_llm.context`) against the real code.

For every shared template × conversation the recorder sent Edge-LLM's own
`ChatTemplate::apply` (a recording of Edge-LLM's own code: docs/engines/edge-llm.md),
the context we build must equal the JSON object Edge-LLM handed to Inja, key order
included (templates can see the order through `tojson`, `items` and loops over a
mapping). Then a few rules on their own.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.edge_llm.context import edge_context
from app.render.engines.edge_llm.inja.render import RenderError, load, render
from app.render.engines.edge_llm.messages import expects_content_blocks, supports_developer_role
from app.render.limits import DEFAULT_LIMITS
from oracles.edge_llm import RECORDED, recorded, system_only_context
from tests.support.corpus import PINNED_NOW, case_request, load_conversations
from tests.support.shared_data import needs_shared, template_files
from tests.support.timing import cpu_seconds

pytestmark = pytest.mark.skipif(not RECORDED.exists(), reason="no Edge-LLM recording")

#: The defaults the recording gives its own conversations.
EXTRA_DEFAULTS: dict[str, Any] = {
    "tools": None,
    "documents": None,
    "add_generation_prompt": False,
    "continue_final_message": False,
    "kwargs": {},
    "special_tokens": {"bos_token": "<s>", "eos_token": "</s>"},
}


def conversations() -> dict[str, dict[str, Any]]:
    """Every conversation the recorder sent, by name."""
    cases = load_conversations()
    if RECORDED.exists():
        cases += [{**EXTRA_DEFAULTS, **case} for case in recorded()["extra_conversations"]]
    return {case["name"]: case for case in cases}


def recorded_cases() -> list[tuple[str, str]]:
    """(template stem, case name) of every recorded render that reached Inja."""
    if not RECORDED.exists():
        return []
    return [
        (stem, name)
        for stem, entry in recorded()["templates"].items()
        for name, render in entry.get("renders", {}).items()
        if "context" in render
    ]


def context_for(stem: str, name: str) -> dict[str, Any]:
    """Our context for a recorded case (`name@parsed-string-args`: arguments parsed)."""
    suffix = recorded()["string_argument_variants"]
    base, parsed = (name[: -len(suffix)], True) if name.endswith(suffix) else (name, False)
    templates = {path.stem: path for path in template_files()}
    source = templates[stem].read_text(encoding="utf-8")
    request = case_request(conversations()[base], source)
    return edge_context(request, checked=False, parse_string_arguments=parsed)[0]


@needs_shared
@pytest.mark.parametrize(("stem", "name"), recorded_cases())
def test_context_equals_edge_llm(stem: str, name: str) -> None:
    """The context, serialised in key order, is the one Edge-LLM's apply built."""
    render = recorded()["templates"][stem]["renders"][name]
    expected = recorded()["contexts"][render["context"]]
    ours = context_for(stem, name)
    assert json.dumps(ours, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)


@needs_shared
def test_template_facts_equal_edge_llm() -> None:
    """detectContentBlocks and supportsDeveloperRole agree with the loader's verdicts."""
    templates = {path.stem: path for path in template_files()}
    wrong = []
    for stem, entry in recorded()["templates"].items():
        if not entry["load"]["ok"]:
            continue
        source = templates[stem].read_text(encoding="utf-8")
        facts = (expects_content_blocks(source), supports_developer_role(source))
        load = entry["load"]
        if facts != (load["expects_content_blocks"], load["supports_developer_role"]):
            wrong.append(stem)
    assert wrong == []


def request(messages: list[dict[str, Any]], template: str = "{{ messages }}", **fields: Any):
    """A request with defaults for the rules below."""
    return RenderRequest(template=template, messages=messages, **fields)


USER = {"role": "user", "content": "Hi"}
BLOCKS_TEMPLATE = "{% for m in messages %}{% for part in m.content %}{% endfor %}{% endfor %}"


def test_always_present_keys_in_order() -> None:
    """Edge-LLM's fixed keys, with its defaults, and reasoning_effort left out."""
    context, _ = edge_context(request([USER]))
    assert list(context) == [
        "messages",
        "tools",
        "add_generation_prompt",
        "bos_token",
        "eos_token",
        "strftime_now",
        "enable_thinking",
        "parallel_tool_calls",
        "tool_choice",
        "continue_final_message",
    ]
    assert context["tools"] is None and context["strftime_now"] is True
    assert (context["enable_thinking"], context["parallel_tool_calls"]) == (False, True)
    # The server's tool choice when a request offers no tools and names none.
    assert (context["tool_choice"], context["continue_final_message"]) == ("none", False)
    assert context["bos_token"] == context["eos_token"] == ""


def test_what_edge_llm_leaves_out_is_said() -> None:
    """Special tokens besides BOS and EOS, and an empty tools list (passed as null)."""
    context, rewrites = edge_context(
        request(
            [USER],
            kwargs={"reasoning_effort": "low"},
            special_tokens={"bos_token": "<s>", "unk_token": "<unk>"},
            tools=[],
        )
    )
    assert context["bos_token"] == "<s>" and context["reasoning_effort"] == "low"
    assert context["tools"] is None
    said = " | ".join(rewrites)
    assert "special tokens unk_token dropped" in said and "tools [] passed as null" in said


def test_developer_merged_into_first_system_in_blocks_mode() -> None:
    """Merging happens before shaping: the merged message becomes one text block."""
    messages = [
        USER,
        {
            "role": "developer",
            "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
        },
        {"role": "system", "content": "C"},
    ]
    context, rewrites = edge_context(request(messages, BLOCKS_TEMPLATE))
    assert context["messages"][0] == {
        "role": "system",
        "content": [{"type": "text", "text": "A\nB\n\nC"}],
    }
    assert [m["role"] for m in context["messages"]] == ["system", "user"]
    assert any("merged into the system message" in text for text in rewrites)
    # A template naming the role keeps it as it is.
    kept, _ = edge_context(request(messages, BLOCKS_TEMPLATE + "{# 'developer' #}"))
    assert [m["role"] for m in kept["messages"]] == ["user", "developer", "system"]


def test_message_fields_for_any_role_and_tool_results_as_strings() -> None:
    """Key order, reasoning under both names, ids for any role, tool content a string,
    and an empty tool_calls left out (the server passes none)."""
    call = {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "x", "name": "ann", "tool_call_id": "t", "thinking": "?"},
        {"role": "assistant", "content": None, "reasoning": "r", "tool_calls": []},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "t",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
    ]
    context, rewrites = edge_context(request(messages, BLOCKS_TEMPLATE))
    first, second, _, fourth = context["messages"]
    assert list(first) == ["role", "content", "tool_call_id", "name"]
    assert second == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "r",
        "reasoning": "r",
    }
    assert fourth["content"] == "a\nb"
    assert any("tool message content joined" in text for text in rewrites)
    assert any("thinking dropped" in text for text in rewrites)
    assert any("empty tool_calls left out" in text for text in rewrites)


def test_tool_call_arguments() -> None:
    """String arguments stay text unless parsed; objects come back parsed, in order."""
    call = {"id": "c", "function": {"name": "f", "arguments": '{"b": 1, "a": 2}'}}
    messages = [USER, {"role": "assistant", "tool_calls": [call]}]
    kept, _ = edge_context(request(messages))
    parsed, _ = edge_context(request(messages), parse_string_arguments=True)
    assert kept["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"b": 1, "a": 2}'
    assert list(parsed["messages"][1]["tool_calls"][0]["function"]["arguments"]) == ["b", "a"]
    assert parsed["messages"][1]["tool_calls"][0]["type"] == "function"
    bad = {"id": "c", "function": {"name": "f", "arguments": "NaN"}}
    odd, _ = edge_context(
        request([{"role": "assistant", "tool_calls": [bad]}]), parse_string_arguments=True
    )
    assert odd["messages"][0]["tool_calls"][0]["function"]["arguments"] == "NaN"


def test_tools_keep_only_edge_fields() -> None:
    """Absent fields are left out, not null; extra keys are dropped and said."""
    tools = [{"type": "function", "function": {"name": "f", "defer_loading": True}}]
    context, rewrites = edge_context(request([USER], tools=tools))
    assert context["tools"] == [{"type": "function", "function": {"name": "f"}}]
    assert any("defer_loading" in text for text in rewrites)


def test_request_fields() -> None:
    """tool_choice forms as the runtime writes them back, and a non-boolean flag refused."""
    tools = [{"type": "function", "function": {"name": "f"}}]
    choice = {"type": "function", "function": {"name": "f", "x": 1}}
    context, _ = edge_context(request([USER], tools=tools, kwargs={"tool_choice": choice}))
    assert context["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    by_name, _ = edge_context(request([USER], tools=tools, kwargs={"tool_choice": "f"}))
    assert by_name["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    offered, _ = edge_context(request([USER], tools=tools))
    assert offered["tool_choice"] == "auto"
    with pytest.raises(TemplateProblem) as caught:
        edge_context(request([USER], kwargs={"enable_thinking": "yes"}))
    assert caught.value.type == "InvalidRequest"
    assert caught.value.message.endswith("chat_template_kwargs.enable_thinking must be a bool")


def test_refusals() -> None:
    """No messages is refused by the server (by the C++ code without it); media with a
    string template fails apply, and an image part reaches a blocks template as `image`."""
    with pytest.raises(TemplateProblem) as caught:
        edge_context(request([]))
    assert (
        caught.value.message == "Edge-LLM's server refuses the request: messages must not be empty"
    )
    with pytest.raises(TemplateProblem) as caught:
        edge_context(request([]), checked=False)
    assert caught.value.message == "Request must contain at least one message"
    media = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}]
    with pytest.raises(RenderError) as failed:
        edge_context(request(media))
    assert failed.value.message == (
        "provider string-content template requires a model-specific media processor"
    )
    blocks, _ = edge_context(request(media, BLOCKS_TEMPLATE))
    assert blocks["messages"][0]["content"] == [{"type": "image", "image": ""}]


def test_content_block_detection_is_a_text_scan() -> None:
    """detectContentBlocks' forms, and its stop at an unclosed statement."""
    assert expects_content_blocks("{%- for x in message['content'] if x -%}")
    assert expects_content_blocks("{% for x in content | list %}")
    assert not expects_content_blocks("{% for x in contents %}")
    assert not expects_content_blocks("{% if x %{% for p in m.content %}")
    assert not expects_content_blocks("{% for p in m.content")
    # A loop inside a comment or a string counts: the scan does not parse.
    assert expects_content_blocks("{# {% for p in m.content %} #}")


def test_hostile_templates_scan_in_linear_time() -> None:
    """The content-block scan grows with the template, not with its square."""

    def cost(source: str) -> float:
        return cpu_seconds(lambda: [expects_content_blocks(source) for _ in range(5)])

    for unit in ("{% for a in b %}", "{%", "{% for x in y if z ", "%}{%"):
        small, large = unit * (10_000 // len(unit)), unit * (100_000 // len(unit))
        assert cost(large) < 40 * max(cost(small), 1e-4), unit


@needs_shared
@pytest.mark.parametrize(
    "stem",
    [stem for stem, entry in recorded()["templates"].items() if entry["load"]["ok"]]
    if RECORDED.exists()
    else [],
)
def test_our_context_renders_edge_llm_prompt(stem: str) -> None:
    """End to end with the interpreter: our context gives Edge-LLM's prompt or error, and
    the system-only render gives the prefix Edge-LLM kept (`system_prompt_length`)."""
    now = PINNED_NOW.replace(tzinfo=UTC).timestamp()
    source = {path.stem: path for path in template_files()}[stem].read_text(encoding="utf-8")
    template = load(source)
    wrong = []
    for name, render_ in recorded()["templates"][stem]["renders"].items():
        context = context_for(stem, name)
        try:
            prompt = render(template, context, DEFAULT_LIMITS, now)
        except RenderError as error:
            if render_["outcome"] != "error" or error.message != render_["error"]:
                wrong.append(name)
            continue
        if render_["outcome"] != "ok" or prompt != render_["prompt"]:
            wrong.append(name)
            continue
        kept = 0
        if context["messages"][0]["role"] == "system":
            try:
                prefix = render(template, system_only_context(context), DEFAULT_LIMITS, now)
                kept = len(prefix) if prompt.startswith(prefix) else 0
            except RenderError:
                pass  # Edge-LLM skips the reuse when the system-only render fails
        if kept != render_["system_prompt_length"]:
            wrong.append(f"{name} (system prefix)")
    assert wrong == []
