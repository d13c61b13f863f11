"""Cohere2 MoE ("North Code"): a thinking block, then text or a JSON array of calls.

common_chat_params_init_cohere2moe (common/parsers/cohere2moe.cpp, build b11434). After
the generation prompt's stable prefix `<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>` come
`<|START_THINKING|>...<|END_THINKING|>` (read as content without reasoning extraction),
then either `<|START_TEXT|>...<|END_TEXT|>` or

    <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {...}}]<|END_ACTION|>

and an optional `<|END_OF_TURN_TOKEN|>`. Text and calls never come together.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.peg.peg_builder import P

TURN_START, TURN_END = "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>"
CHATBOT, USER, SYSTEM = "<|CHATBOT_TOKEN|>", "<|USER_TOKEN|>", "<|SYSTEM_TOKEN|>"
THINK_START, THINK_END = "<|START_THINKING|>", "<|END_THINKING|>"
TEXT_START, TEXT_END = "<|START_TEXT|>", "<|END_TEXT|>"
ACTION_START, ACTION_END = "<|START_ACTION|>", "<|END_ACTION|>"
RESULT_START, RESULT_END = "<|START_TOOL_RESULT|>", "<|END_TOOL_RESULT|>"
GEN_PREFIX = TURN_START + CHATBOT


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag=THINK_START,
        thinking_end_tags=(THINK_END,),
        preserved_tokens=(
            *(TURN_START, TURN_END, CHATBOT, USER, SYSTEM, THINK_START, THINK_END),
            *(TEXT_START, TEXT_END, ACTION_START, ACTION_END, RESULT_START, RESULT_END),
        ),
        generation_prompt=inputs.template.generation_prompt(inputs),
    )
    if inputs.has_continuation():
        data.generation_prompt = GEN_PREFIX + THINK_START + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += THINK_END + TEXT_START + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    generation_prompt, end = p.literal(GEN_PREFIX), p.end()
    stops = [THINK_END, TEXT_START, ACTION_START]
    if inputs.extract_reasoning():
        reasoning = p.optional(
            p.literal(THINK_START)
            + p.reasoning(p.until_one_of(stops))
            + p.optional(p.literal(THINK_END))
        )
    else:  # the whole block, markers included, stays in the content
        block = p.literal(THINK_START) + p.until_one_of(stops) + p.optional(p.literal(THINK_END))
        reasoning = p.optional(p.content(block))
    schema = inputs.json_schema
    if isinstance(schema, dict) and schema:
        text = p.content(p.schema(p.json(), "response-format-schema", schema))
    else:
        text = p.content(p.until(TEXT_END))
    text_content = p.literal(TEXT_START) + text + p.optional(p.literal(TEXT_END))
    turn_end = p.optional(p.literal(TURN_END))
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return generation_prompt + reasoning + text_content + turn_end + end
    tool_calls = p.standard_json_tools(
        ACTION_START,
        ACTION_END,
        inputs.tools,
        inputs.parallel_tool_calls,
        True,
        name_key="tool_name",
        args_key="parameters",
        array_wrapped=True,
        gen_call_id_key="tool_call_id",
        parameters_order=("tool_call_id", "tool_name", "parameters"),
    )
    body = tool_calls if inputs.tool_choice == "required" else p.choice(tool_calls, text_content)
    return generation_prompt + reasoning + body + turn_end + end
