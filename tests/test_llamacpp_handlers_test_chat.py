"""llama.cpp's specialized handlers gigachat_v3, cohere2moe, deepseek_v3_2, kimi_k3,
minimax_m3, muse_glimmer and minicpm5, run on cases of llama.cpp's tests/test-chat.cpp.

Each case (oracles/llamacpp/test_chat_handler_cases.json) names a template of llama.cpp's
collection, the request options, the model's output and the message upstream expects;
the handler derives the parser and generation prompt from the template, and
common_chat_peg_parse (`peg_parse`) reads the output with them.
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
from oracles.llamacpp import TEST_CHAT_HANDLERS, load
from tests.support.shared_data import TEMPLATES_DIR, require_shared
from tests.support.timing import cpu_seconds

require_shared()

FIXTURE = load(TEST_CHAT_HANDLERS)
CASES = FIXTURE["cases"]
USER = {"role": "user", "content": "Hey there!"}


def inputs_for(source: str, options: dict[str, Any]) -> ParseInputs:
    """The request of a peg_tester case, as common_chat_templates_apply_jinja hands it on."""
    options = dict(options)
    tools = [FIXTURE["tools"][name] for name in options.pop("tools", [])] or None
    prefill = options.pop("messages", None)
    continued = FIXTURE["prefills"][prefill] if prefill else None
    return ParseInputs(
        template=ChatTemplate(source),
        messages=[USER],
        tools=tools,
        reasoning_format=options.pop("reasoning_format", "none"),
        parallel_tool_calls=options.pop("parallel_tool_calls", False),
        continue_msg=continued,
        **options,
    )


def arguments(text: str) -> Any:
    """Tool arguments as upstream compares them: as JSON when they are JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@pytest.mark.parametrize("case", CASES, ids=[f"{c['template']}:{c['input'][:40]!r}" for c in CASES])
def test_handler_case(case: dict[str, Any]) -> None:
    source = (TEMPLATES_DIR / case["template"]).read_text()
    handler = handlers.select(source)
    assert handler is not None
    data = handler.params(source, inputs_for(source, case["options"]))
    msg = peg_parse(data.parser, case["input"], False, data.format, data.generation_prompt)
    expect = case["expect"]
    assert (msg.content, msg.reasoning_content) == (expect["content"], expect["reasoning_content"])
    got = [(c.name, arguments(c.arguments), c.id) for c in msg.tool_calls]
    want = [(c["name"], arguments(c["arguments"]), c["id"]) for c in expect["tool_calls"]]
    assert got == want


@pytest.mark.parametrize(
    ("template", "name"),
    [
        ("GigaChat3-10B-A1.8B.jinja", "gigachat_v3"),
        ("GigaChat3.1-10B-A1.8B.jinja", None),  # its <|function_call|> token: the autoparser
        ("Cohere2MoE.jinja", "cohere2moe"),
        ("deepseek-ai-DeepSeek-V3.2.jinja", "deepseek_v3_2"),
        ("deepseek-ai-DeepSeek-V4.jinja", "deepseek_v3_2"),
        ("deepseek-ai-DeepSeek-V4-Flash-0731.jinja", "deepseek_v3_2"),
        ("Kimi-K3.jinja", "kimi_k3"),
        ("MiniMax-M3.jinja", "minimax_m3"),
        ("muse-glimmer.jinja", "muse_glimmer"),
        ("openbmb-MiniCPM5-1B.jinja", "minicpm5"),
    ],
)
def test_detection(template: str, name: str | None) -> None:
    """Each template goes to the handler common_chat_try_specialized_template picks."""
    handler = handlers.select((TEMPLATES_DIR / template).read_text())
    assert (handler.key if handler else None) == name


#: For each template, the opening of a call (or section) its parser looks for, repeated
#: into a hostile completion that opens many and closes none.
OPENERS = {
    "GigaChat3-10B-A1.8B.jinja": '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": ',
    "Cohere2MoE.jinja": '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "python", ',
    "deepseek-ai-DeepSeek-V3.2.jinja": '<｜DSML｜function_calls>\n<｜DSML｜invoke name="python">\n',
    "Kimi-K3.jinja": '<|open|>tools<|sep|><|open|>call tool="python" index="1"<|sep|>',
    "MiniMax-M3.jinja": ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="python">',
    "muse-glimmer.jinja": "<|eom|><|start|>assistant to=python<|message|><atem:function_calls>",
    "openbmb-MiniCPM5-1B.jinja": '<function name="python"><param name="code">',
}


@pytest.mark.parametrize("template", OPENERS)
def test_hostile_completion_parses_in_linear_time(template: str) -> None:
    """100 kB of unclosed calls: an answer (or llama.cpp's error) in about ten times the
    time of 10 kB, not a hundred."""
    source = (TEMPLATES_DIR / template).read_text()
    handler = handlers.select(source)
    options = {"tools": ["special_function", "python"], "reasoning_format": "auto"}
    data = handler.params(source, inputs_for(source, options))
    opener = OPENERS[template]

    def seconds(size: int) -> float:
        text = opener * (size // len(opener))

        def parse() -> None:
            with contextlib.suppress(ChatParseError, DepthError):  # an error is an answer too
                peg_parse(data.parser, text, False, data.format, data.generation_prompt)

        return cpu_seconds(parse)

    ratio = seconds(100_000) / max(seconds(10_000), 2e-3)
    assert ratio < 30, f"10x the text took {ratio:.0f}x the time"
