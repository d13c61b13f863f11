"""Kimi K2 (Instruct and Thinking): `<think>` reasoning and sections of tool calls.

common_chat_params_init_kimi_k2 (common/parsers/kimi-k2.cpp, build b11434). After the generation
prompt `<|im_assistant|>assistant<|im_middle|>` come an optional `<think>` block (which a
tool call may end without `</think>`), content, then calls

    <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>

with the section markers and `<|tool_call_end|>` optional; the call's id is
`functions.NAME:N` as written.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    foreach_function,
    function_name,
    function_parameters,
)
from app.render.engines.llamacpp.peg.peg_builder import P

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARGS_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
THINK_START, THINK_END = "<think>", "</think>"
#: The assistant turn's opening, which the parser reads before the completion.
GEN_PROMPT = "<|im_assistant|>assistant<|im_middle|>"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag=THINK_START,
        thinking_end_tags=(THINK_END,),
        preserved_tokens=(
            *(SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARGS_BEGIN, CALL_END),
            *(THINK_START, THINK_END),
        ),
        generation_prompt=inputs.template.generation_prompt(inputs),
    )
    if inputs.has_continuation():
        data.generation_prompt = GEN_PROMPT + THINK_START + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += THINK_END + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    end = p.end()
    reasoning = p.eps()
    if inputs.extract_reasoning():
        # The model may start calling tools at the end of its reasoning, unclosed.
        body = p.reasoning(p.until_one_of([THINK_END, SECTION_BEGIN, CALL_BEGIN]))
        reasoning = p.optional(THINK_START + body + p.optional(p.literal(THINK_END)))
    generation_prompt = p.literal(GEN_PROMPT)
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return generation_prompt + reasoning + p.content(p.rest()) + end
    tool_choice = p.choice()
    for tool in foreach_function(inputs.tools):
        name = function_name(tool)
        schema = function_parameters(tool)
        call_id = p.tool_id(
            p.literal("functions.")
            + p.tool_name(p.literal(name))
            + p.literal(":")
            + p.chars("[0-9]", 1, -1)
        )
        call = p.tool(
            p.tool_open(call_id + p.literal(ARGS_BEGIN))
            + p.tool_args(p.schema(p.json(), f"tool-{name}-schema", schema))
            + p.tool_close(p.optional(p.literal(CALL_END)))
        )
        tool_choice |= p.rule(f"tool-{name}", call)
    least = 1 if inputs.tool_choice == "required" else 0
    most = -1 if inputs.parallel_tool_calls else 1
    calls = p.rule(
        "tool-calls",
        p.optional(p.literal(SECTION_BEGIN))
        + p.trigger_rule(
            "tool-call",
            p.repeat(CALL_BEGIN + tool_choice, least, most) + p.optional(p.literal(SECTION_END)),
        ),
    )
    content = p.content(p.until_one_of([SECTION_BEGIN, CALL_BEGIN]))
    return generation_prompt + reasoning + content + calls + end
