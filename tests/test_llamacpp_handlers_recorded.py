"""llama.cpp's specialized handlers against the real library's recorded answers.

For the handlers ministral_3, qwen3_coder, gpt_oss, gemma4, functionary_v3_2, kimi_k2 and
lfm2, byte for byte: the chat format, the generation prompt and the parsed message (or
the error) of

- the PEG cases of llama.cpp's tests/test-chat.cpp, as the real library (b11434) parsed
  them (`oracles/llamacpp/test_chat_parse_cases.json`);
- the page's menu of completions for every template and option set, as the real library
  read them for llama-server (`oracles/llamacpp/answers.json`).

Requests are shaped as the app shapes them (`apply.apply_for_completion`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from app.render.core import RenderRequest
from app.render.engines.llamacpp import families as handlers
from app.render.engines.llamacpp.apply.templates_apply import apply_for_completion
from app.render.engines.llamacpp.apply.types import ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg_mapper import ChatParseError, peg_parse
from app.render.engines.llamacpp.templates_init import patched_source
from app.render.limits import DEFAULT_LIMITS
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()

#: The handlers tested here (the others are tested beside their author's modules).
OURS = ("ministral_3", "qwen3_coder", "gpt_oss", "gemma4", "functionary_v3_2", "kimi_k2", "lfm2")
LOADED = {family.key: family for family in handlers.FAMILIES}


def _handler_of(template: str) -> str | None:
    """The handler our detection picks for a shared template (None: the autoparser)."""
    source = patched_source((TEMPLATES_DIR / template).read_text(encoding="utf-8"))
    chosen = handlers.select(source)
    return chosen.key if chosen else None


# --- Upstream's cases, as the real library parses them --------------------------------

#: test-chat.cpp's PEG cases with the real library's own parse of each (helper data
#: recorded from llama.cpp b11434: oracles/llamacpp/test_chat_parse_cases.json).
RECORDED = json.loads((REPO / "oracles/llamacpp/test_chat_parse_cases.json").read_text("utf-8"))[
    "cases"
]
#: common_chat_continuation and common_chat_tool_choice, by their C++ numbers.
CONTINUATION: dict[int, bool | str] = {0: False, 1: True, 2: "reasoning_content", 3: "content"}
TOOL_CHOICE = {0: "auto", 1: "required", 2: "none"}


OUR_RECORDED = [
    case
    for case in RECORDED
    if "skipped" not in case["verified"]
    and case.get("actual")
    and _handler_of(case["template"]) in OURS
]


def _recorded_inputs(case: dict[str, Any]) -> ParseInputs:
    """The case's request shaped as llama-server shapes it (`apply.apply_for_completion`), with
    the fields test-chat.cpp sets directly."""
    request = RenderRequest(
        template=(TEMPLATES_DIR / case["template"]).read_text(encoding="utf-8"),
        messages=case["messages"],
        tools=case["tools"],
        add_generation_prompt=case["add_generation_prompt"],
        continue_final_message=CONTINUATION[case["continue_final_message"]],
    )
    overrides: dict[str, Any] = {
        "enable_thinking": case["enable_thinking"],
        "parallel_tool_calls": case["parallel_tool_calls"],
        "tool_choice": TOOL_CHOICE[case["tool_choice"]],
    }
    if case["json_schema"]:
        overrides["json_schema"] = json.loads(case["json_schema"])
    return apply_for_completion(request, DEFAULT_LIMITS, case["reasoning_format"], overrides).inputs


@pytest.mark.parametrize(
    "case", OUR_RECORDED, ids=[f"{c['template']}#{c['index']}" for c in OUR_RECORDED]
)
def test_recorded_upstream_cases(case: dict[str, Any]) -> None:
    """Format, generation prompt and message equal the library's, byte for byte."""
    inputs = _recorded_inputs(case)
    chat = LOADED[_handler_of(case["template"])].params(inputs.source, inputs)
    assert (chat.format, chat.generation_prompt) == (case["format"], case["generation_prompt"])
    msg = peg_parse(
        chat.parser, case["input"], fmt=chat.format, generation_prompt=chat.generation_prompt
    )
    actual = case["actual"]
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in msg.tool_calls]
    assert (msg.content, msg.reasoning_content, calls) == (
        actual["content"],
        actual["reasoning_content"],
        actual["tool_calls"],
    )


def test_every_handler_has_recorded_cases() -> None:
    counts = {name: 0 for name in OURS}
    for case in OUR_RECORDED:
        counts[_handler_of(case["template"])] += 1
    assert all(counts.values()), counts


# --- The real library's answers to the page's completions ------------------------------

ANSWERS = json.loads((REPO / "oracles/llamacpp/answers.json").read_text("utf-8"))
#: The handler names llama.cpp logs ("Using specialized template: ..."), ours only.
LOGGED = {
    "Ministral/Magistral Large 3": "ministral_3", "GPT-OSS": "gpt_oss",
    "Functionary v3.2": "functionary_v3_2", "Kimi K2 Thinking": "kimi_k2", "LFM2": "lfm2",
    "LFM2.5": "lfm2", "Gemma4": "gemma4", "Qwen3-Coder": "qwen3_coder",
}  # fmt: skip
REQUESTS = {r["id"]: r for r in ANSWERS["requests"] if "handler" in r}
OUR_REQUESTS = [r for r in REQUESTS.values() if r["handler"] in LOGGED]


def _answer_inputs(request: dict[str, Any]) -> ParseInputs:
    """The recorded request (the page's question, its tools, the options asked for) as
    llama-server shapes it."""
    asked = request["asked"]
    kwargs = (
        {} if asked["enable_thinking"] is None else {"enable_thinking": asked["enable_thinking"]}
    )
    render = RenderRequest(
        template=(TEMPLATES_DIR / request["template"]).read_text(encoding="utf-8"),
        messages=ANSWERS["question"],
        tools=ANSWERS["tool_definitions"] if request["tools"] else None,
        add_generation_prompt=True,
        special_tokens=ANSWERS["special_tokens"],
        kwargs=kwargs,
        now=datetime(2026, 1, 15, 9, 30),
    )
    overrides = {}
    if asked["parallel_tool_calls"] is not None:
        overrides["parallel_tool_calls"] = asked["parallel_tool_calls"]
    return apply_for_completion(render, DEFAULT_LIMITS, asked["reasoning_format"], overrides).inputs


@pytest.mark.parametrize("request_", OUR_REQUESTS, ids=[r["id"] for r in OUR_REQUESTS])
def test_recorded_answers(request_: dict[str, Any]) -> None:
    """Every completion of the page's menu reads as the real library read it: the same
    format and generation prompt, the same message or the same error."""
    inputs = _answer_inputs(request_)
    chat = LOADED[LOGGED[request_["handler"]]].params(inputs.source, inputs)
    assert (chat.format, chat.generation_prompt) == (
        request_["format"],
        request_["generation_prompt"],
    )
    for case in (c for c in ANSWERS["cases"] if c["request"] == request_["id"]):
        try:
            msg = peg_parse(
                chat.parser,
                case["completion"],
                fmt=chat.format,
                generation_prompt=chat.generation_prompt,
            )
        except ChatParseError as error:
            assert str(error) == case.get("error"), case["kind"]
            continue
        assert "result" in case, (case["kind"], case.get("error"))
        calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in msg.tool_calls]
        result = case["result"]
        expected = (result["content"], result["reasoning_content"], result["tool_calls"])
        assert (msg.content, msg.reasoning_content, calls) == expected, case["kind"]
