"""LFM2 and LFM2.5: `<think>` reasoning and Python-style calls in `<|tool_call_start|>[...]`.

common_chat_params_init_lfm2 (common/parsers/lfm2.cpp, build b11434), chosen for templates with
`<|tool_list_start|>`/`<|tool_list_end|>` (LFM2) or a plain "List of tools: [" (LFM2.5).
After `<|im_start|>assistant\\n` come an optional `<think>` block (only when the template
knows `<think>`), content up to `<|tool_call_start|>`, then

    <|tool_call_start|>[name(arg="text", n=1, flag=true), other()]<|tool_call_end|>

with declared names and arguments only, and nothing after it.
"""

from __future__ import annotations

from app.render.engines.llamacpp import hooks
from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import copied
from app.render.engines.llamacpp.peg.peg_builder import P

TOOL_CALL_START, TOOL_CALL_END = "<|tool_call_start|>", "<|tool_call_end|>"
TOOL_LIST_START, TOOL_LIST_END = "<|tool_list_start|>", "<|tool_list_end|>"
THINK_START, THINK_END = "<think>", "</think>"
#: The assistant turn's opening, which the parser reads before the completion.
GEN_PROMPT = "<|im_start|>assistant\n"


#: The template reads reasoning from `thinking` (the prompt's adjustment too:
#: `families.FAMILIES`).
ADJUST = hooks.copy_thinking(drop_content_beside_calls=False)


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    adjusted = ADJUST(copied(inputs.messages), [])
    list_tokens = TOOL_LIST_START in source and TOOL_LIST_END in source
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag=THINK_START,
        thinking_end_tags=(THINK_END,),
        preserved_tokens=(TOOL_CALL_START, TOOL_CALL_END, THINK_START, THINK_END)
        + ((TOOL_LIST_START, TOOL_LIST_END) if list_tokens else ()),
        generation_prompt=inputs.template.generation_prompt(inputs, messages=adjusted),
    )
    if inputs.has_continuation():
        data.generation_prompt = GEN_PROMPT + THINK_START + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += THINK_END + inputs.continue_content()
    extract = inputs.extract_reasoning() and THINK_START in source
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs, extract))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs, extract: bool) -> P:
    generation_prompt = p.literal(GEN_PROMPT)
    end = p.end()
    reasoning = p.eps()
    if extract:
        reasoning = p.optional(THINK_START + p.reasoning(p.until(THINK_END)) + THINK_END)
    if not inputs.has_tools() or inputs.tool_choice == "none":
        if isinstance(inputs.json_schema, dict):
            schema = inputs.json_schema
            answer = p.content(p.schema(p.json(), "response-format-schema", schema))
            return generation_prompt + reasoning + answer + end
        return generation_prompt + reasoning + p.content(p.rest()) + end
    calls = p.rule(
        "tool-calls",
        p.trigger_rule(
            "tool-call",
            p.literal(TOOL_CALL_START)
            + p.python_style_tool_calls(inputs.tools, inputs.parallel_tool_calls, True)
            + p.literal(TOOL_CALL_END),
        ),
    )
    return generation_prompt + reasoning + p.content(p.until(TOOL_CALL_START)) + calls + end
