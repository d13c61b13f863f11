"""llama.cpp's specialized handlers (`app.render.engines.llamacpp.families`).

Checked here for the handlers of ministral_3, qwen3_coder, gpt_oss, gemma4,
functionary_v3_2, kimi_k2 and lfm2 (the comparison with the real library's recorded
answers is in `test_llamacpp_handlers_recorded.py`):

- detection: the handler each of llama.cpp's shared templates gets is the one the real
  library (b11434) used, as recorded in `oracles/llamacpp/answers.json`;
- parsing: cases of our own, written from the grammars of common/chat.cpp, including
  continued (prefilled) messages and llama.cpp's quirks;
- hostile completions: 100 kB of repeated markup or deep nesting returns (a message or
  llama.cpp's error) in time close to a linear scan of the text.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from app.render.engines.llamacpp import families as handlers
from app.render.engines.llamacpp.apply.types import ChatTemplate, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg_mapper import ChatParseError, peg_parse
from app.render.engines.llamacpp.peg.peg import DepthError
from app.render.engines.llamacpp.templates_init import patched_source
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR, require_shared, template_files
from tests.support.timing import cpu_seconds

require_shared()

ANSWERS = REPO / "oracles/llamacpp/answers.json"
#: The handler names llama.cpp logs ("Using specialized template: ..."), as our modules.
LOGGED = {
    "Ministral/Magistral Large 3": "ministral_3", "GPT-OSS": "gpt_oss",
    "Muse Glimmer": "muse_glimmer", "Functionary v3.2": "functionary_v3_2",
    "Kimi K2 Thinking": "kimi_k2", "Kimi K3": "kimi_k3", "Cohere2 MoE": "cohere2moe",
    "LFM2": "lfm2", "LFM2.5": "lfm2", "GigaChatV3": "gigachat_v3", "MiniMax-M3": "minimax_m3",
    "DeepSeek V3.2/V4": "deepseek_v3_2", "Gemma4": "gemma4", "MiniCPM5": "minicpm5",
    "Qwen3-Coder": "qwen3_coder", "autoparser": None,
}  # fmt: skip
#: The handler the real library (b11434) used for each shared template, as recorded.
EXPECTED_HANDLER = {
    r["template"]: LOGGED[r["handler"]]
    for r in json.loads(ANSWERS.read_text("utf-8"))["requests"]
    if "handler" in r
}

#: This module's handlers (the others are tested beside their author's modules).
OURS = ("ministral_3", "qwen3_coder", "gpt_oss", "gemma4", "functionary_v3_2", "kimi_k2", "lfm2")
LOADED = {family.key: family for family in handlers.FAMILIES}

TEMPLATES = [path.name for path in template_files()]


def source_of(name: str) -> str:
    """A shared template as llama.cpp uses it (patched as common_chat_templates_init does)."""
    return patched_source((TEMPLATES_DIR / name).read_text(encoding="utf-8"))


def test_every_template_has_a_recorded_handler() -> None:
    assert sorted(EXPECTED_HANDLER) == TEMPLATES


def test_handlers_are_in_llamas_order() -> None:
    names = [family.key for family in handlers.FAMILIES]
    assert names == [name for name in handlers.ORDER if name in names]
    assert set(OURS) <= set(names)


@pytest.mark.parametrize("name", TEMPLATES)
def test_detection_matches_llamacpp(name: str) -> None:
    """The first handler whose check matches is the real library's (skipped where that
    handler's module is not written yet, since a later one could then match)."""
    expected = EXPECTED_HANDLER.get(name)
    if expected is not None and expected not in LOADED:
        pytest.skip(f"handler {expected} not written yet")
    chosen = handlers.select(source_of(name))
    assert (chosen.key if chosen else None) == expected


@pytest.mark.parametrize("handler", OURS)
def test_each_handler_matches_its_templates_only(handler: str) -> None:
    """`matches` alone (order aside) is true for the handler's templates, and for any other
    only where an earlier handler takes the template first."""
    module = LOADED[handler]
    earlier = handlers.ORDER[: handlers.ORDER.index(handler)]
    for name in TEMPLATES:
        if EXPECTED_HANDLER.get(name) == handler:
            assert module.matches(source_of(name)), name
        elif module.matches(source_of(name)):
            assert EXPECTED_HANDLER.get(name) in earlier, name


# --- Parsing ---------------------------------------------------------------------------

USER = {"role": "user", "content": "What time is it?"}
TOOL_CLOCK = {
    "type": "function",
    "function": {
        "name": "clock",
        "description": "The time in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "hours": {"type": "integer"}},
            "required": ["city"],
        },
    },
}


def parse(
    template: str, completion: str, tools: list[dict[str, Any]] | None = None, **options: Any
) -> tuple[str, str, list[tuple[str, str, str]]]:
    """(content, reasoning_content, [(name, arguments, id)]) as the template's handler
    reads the completion; raises ChatParseError where llama.cpp answers an error."""
    source = source_of(template)
    inputs = ParseInputs(template=ChatTemplate(source), messages=[USER], tools=tools, **options)
    handler = handlers.select(source)
    assert handler is not None
    chat = handler.params(source, inputs)
    msg = peg_parse(
        chat.parser, completion, fmt=chat.format, generation_prompt=chat.generation_prompt
    )
    calls = [(call.name, call.arguments, call.id) for call in msg.tool_calls]
    return msg.content, msg.reasoning_content, calls


#: (template, completion, tools, options, expected (content, reasoning, calls) or None for
#: llama.cpp's "does not match the expected format" error), written from the grammars in
#: chat.cpp; the recorded cases below are the real library's answers.
OWN_CASES = [
    ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", "[THINK]Hm.[/THINK]It is noon.",
     None, {}, ("It is noon.", "Hm.", [])),
    ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", "[THINK]Hm.[/THINK]It is noon.",
     None, {"reasoning_format": "none"}, ("[THINK]Hm.[/THINK]It is noon.", "", [])),
    ("mistralai-Ministral-3-14B-Reasoning-2512.jinja",
     'Let me look.[TOOL_CALLS]clock[ARGS]{"city": "Oslo"}', [TOOL_CLOCK], {},
     ("Let me look.", "", [("clock", '{"city": "Oslo"}', "")])),
    ("Qwen3-Coder.jinja",
     "<tool_call>\n<function=clock>\n<parameter=city>\nOslo\n</parameter>\n<parameter=hours>\n"
     "3\n</parameter>\n</function>\n</tool_call>", [TOOL_CLOCK], {},
     ("", "", [("clock", '{"city":"Oslo","hours":3}', "")])),
    # Optional arguments come after the required ones: this call does not parse, and the
    # text the parser did not reach is dropped (llama.cpp does not check for leftovers).
    ("Qwen3-Coder.jinja",
     "Hi<tool_call>\n<function=clock>\n<parameter=hours>\n3\n</parameter>\n<parameter=city>\n"
     "Oslo\n</parameter>\n</function>\n</tool_call>", [TOOL_CLOCK], {}, ("Hi", "", [])),
    ("Qwen3-Coder.jinja",
     "<function=clock>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>",
     [TOOL_CLOCK], {}, ("", "", [("clock", '{"city":"Oslo"}', "")])),
    ("Qwen3.5-4B.jinja", "Hm.\n</think>\n\nIt is noon.", None, {}, ("It is noon.", "Hm.\n", [])),
    ("openai-gpt-oss-120b.jinja",
     "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|message|>Noon.",
     None, {}, ("Noon.", "Hm.", [])),
    ("openai-gpt-oss-120b.jinja",
     '<|channel|>commentary to=functions.clock <|constrain|>json<|message|>{"city": "Oslo"}',
     [TOOL_CLOCK], {}, ("", "", [("clock", '{"city": "Oslo"}', "")])),
    ("openai-gpt-oss-120b.jinja",
     "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant to=python<|channel|>commentary"
     "<|message|>print(1)<|end|>", None, {}, ("", "Hm.", [])),
    ("google-gemma-4-31B-it.jinja",
     '<|channel>thought\nHm.<channel|>Let me look.<|tool_call>call:clock{city:<|"|>Oslo<|"|>,'
     "hours:3}<tool_call|>", [TOOL_CLOCK], {},
     ("Let me look.", "Hm.", [("clock", '{"city":"Oslo","hours":3}', "")])),
    ("google-gemma-4-31B-it.jinja", "Noon.<|channel>thought\n<channel|>", None, {},
     ("Noon.", "", [])),
    ("meetkai-functionary-medium-v3.2.jinja", 'clock\n{"city": "Oslo"}',
     [TOOL_CLOCK], {}, ("", "", [("clock", '{"city": "Oslo"}', "")])),
    # Content then a call: the grammar's content stops before `>>>` but its call does not
    # read the `>>>`, so only the content-to-the-end branch matches.
    ("meetkai-functionary-medium-v3.2.jinja", 'all\nLet me look.>>>clock\n{"city": "Oslo"}',
     [TOOL_CLOCK], {}, ('Let me look.>>>clock\n{"city": "Oslo"}', "", [])),
    ("meetkai-functionary-medium-v3.2.jinja", "It is noon.", None, {}, None),
    ("Kimi-K2-Thinking.jinja",
     "<think>Hm.<|tool_calls_section_begin|><|tool_call_begin|>functions.clock:0"
     '<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>',
     [TOOL_CLOCK], {}, ("", "Hm.", [("clock", '{"city": "Oslo"}', "functions.clock:0")])),
    ("LFM2.5-8B-A1B.jinja",
     "<think>Hm.</think>Sure.<|tool_call_start|>[clock(city='Oslo', hours=3)]<|tool_call_end|>",
     [TOOL_CLOCK], {}, ("Sure.", "Hm.", [("clock", '{"city":"Oslo","hours":3}', "")])),
    ("LFM2.5-8B-A1B.jinja", "Sure.<|tool_call_start|>[nowhere()]<|tool_call_end|>",
     [TOOL_CLOCK], {}, None),
]  # fmt: skip


@pytest.mark.parametrize(("template", "completion", "tools", "options", "expected"), OWN_CASES)
def test_own_cases(
    template: str,
    completion: str,
    tools: list[dict[str, Any]] | None,
    options: dict[str, Any],
    expected: tuple[str, str, list[tuple[str, str, str]]] | None,
) -> None:
    if expected is None:
        with pytest.raises(ChatParseError, match="does not match the expected peg-native"):
            parse(template, completion, tools, **options)
        return
    assert parse(template, completion, tools, **options) == expected


#: A final assistant message being continued (prefill): its content and its reasoning.
PREFILL = {"role": "assistant", "content": "It is ", "reasoning_content": "Hm."}
CONTENT = {"continue_final_message": "content", "continue_msg": PREFILL}
REASONING = {"continue_final_message": "reasoning", "continue_msg": {**PREFILL, "content": ""}}

#: (template, completion, options, expected): each handler writes the continued message's
#: opening itself, and its parser reads it back before the completion.
CONTINUATIONS = [
    ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", "noon.", CONTENT, ("It is noon.", "Hm.")),
    ("mistralai-Ministral-3-14B-Reasoning-2512.jinja", " Ok.[/THINK]Noon.", REASONING,
     ("Noon.", "Hm. Ok.")),
    ("Qwen3.5-4B.jinja", "noon.", CONTENT, ("It is noon.", "Hm.\n")),
    ("Qwen3-Coder.jinja", "noon.", CONTENT, ("It is noon.", "")),
    ("openai-gpt-oss-120b.jinja", "noon.", CONTENT, ("It is noon.", "Hm.")),
    ("openai-gpt-oss-120b.jinja", " Ok.<|end|><|start|>assistant<|channel|>final<|message|>Noon.",
     REASONING, ("Noon.", "Hm. Ok.")),
    ("google-gemma-4-31B-it.jinja", "noon.", CONTENT, ("It is noon.", "Hm.")),
    ("meetkai-functionary-medium-v3.2.jinja", "noon.", CONTENT, ("It is noon.", "")),
    ("Kimi-K2-Thinking.jinja", "noon.", CONTENT, ("It is noon.", "Hm.")),
    ("LFM2.5-8B-A1B.jinja", "noon.", CONTENT, ("It is noon.", "Hm.")),
]  # fmt: skip


@pytest.mark.parametrize(("template", "completion", "options", "expected"), CONTINUATIONS)
def test_continuations(
    template: str, completion: str, options: dict[str, Any], expected: tuple[str, str]
) -> None:
    options = {**options, "add_generation_prompt": False, "reasoning_format": "auto"}
    assert parse(template, completion, **options) == (*expected, [])


# --- Hostile completions ---------------------------------------------------------------

#: One template per handler of ours.
HANDLER_TEMPLATES = {
    "ministral_3": "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
    "qwen3_coder": "Qwen3.5-4B.jinja",
    "gpt_oss": "openai-gpt-oss-120b.jinja",
    "gemma4": "google-gemma-4-31B-it.jinja",
    "functionary_v3_2": "meetkai-functionary-medium-v3.2.jinja",
    "kimi_k2": "Kimi-K2-Thinking.jinja",
    "lfm2": "LFM2.5-8B-A1B.jinja",
}

#: About 100 kB each: repeated openers of every family, unclosed and deeply nested values.
HOSTILE = {
    "tool_call": "<tool_call>\n<function=clock>\n<parameter=city>\n" * 2000,
    "mistral": "[TOOL_CALLS]clock[ARGS]{" * 4000,
    "harmony": "<|start|>assistant<|channel|>analysis<|message|>x<|end|>" * 2000,
    "gemma": "<|tool_call>call:clock{hours:" + "[" * 100_000,
    "channels": "<channel|><|channel>thought\n" * 4000,
    "functionary": ">>>clock\n{" * 10_000,
    "kimi": "<|tool_call_begin|>functions.clock:0<|tool_call_argument_begin|>{" * 1500,
    "lfm": "<|tool_call_start|>[clock(hours=" + "{'a': " * 15_000,
    "think": "<think>[THINK]<|channel>" * 4000,
    "braces": '{"a":' * 20_000,
}


def _linear_scan(text: str) -> float:
    """CPU seconds a plain Python loop takes over the text: the yardstick."""
    return max(cpu_seconds(lambda: sum(char == "<" for char in text), repeat=1), 1e-4)


@pytest.mark.parametrize("handler", OURS)
@pytest.mark.parametrize("with_tools", [False, True])
def test_hostile_completions_return_quickly(handler: str, with_tools: bool) -> None:
    source = source_of(HANDLER_TEMPLATES[handler])
    tools = [TOOL_CLOCK] if with_tools else None
    inputs = ParseInputs(template=ChatTemplate(source), messages=[USER], tools=tools)
    chat = LOADED[handler].params(source, inputs)
    for label, text in HOSTILE.items():

        def parse(text: str = text) -> None:
            # llama.cpp's own error, or nesting deeper than it could take, is an answer too.
            with contextlib.suppress(ChatParseError, DepthError):
                peg_parse(
                    chat.parser, text, fmt=chat.format, generation_prompt=chat.generation_prompt
                )

        ratio = cpu_seconds(parse, repeat=1) / _linear_scan(text)
        assert ratio < 300, f"{label}: {ratio:.0f}x a linear scan"
