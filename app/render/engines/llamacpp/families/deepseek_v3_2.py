"""DeepSeek V3.2 and V4: `<think>` reasoning and DSML-tagged tool calls.

common_chat_params_init_deepseek_v3_2 (common/parsers/deepseek.cpp, build b11434). After the
generation prompt `<｜Assistant｜>` come reasoning, content and a block of calls

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">text</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

(V4 names the block `tool_calls`); a string parameter is raw text, any other JSON.
Required parameters come first in schema order, then the optional ones in any order.
With thinking on, the calls may follow the reasoning without a `</think>`.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    copied,
    foreach_function,
    foreach_parameter,
    function_name,
)
from app.render.engines.llamacpp.peg.peg_builder import P

DSML = "｜DSML｜"
THINK_START, THINK_END = "<think>", "</think>"
GEN_PROMPT = "<｜Assistant｜>"
TC_SEPARATOR = "\n\n"


def sort_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """deepseek_v4_sort_tool_results: in each run of user/tool messages, the tool results
    reordered (stably) by their call's position in the assistant message before."""
    adjusted = copied(messages)
    order: dict[str, int] = {}
    i = 0
    while i < len(adjusted):
        role = adjusted[i].get("role", "")
        calls = adjusted[i].get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            order = {
                c.get("id"): k for k, c in enumerate(calls) if isinstance(c, dict) and c.get("id")
            }
            i += 1
            continue
        if role not in ("user", "tool"):
            i += 1
            continue
        end, positions = i, []
        while end < len(adjusted) and adjusted[end].get("role", "") in ("user", "tool"):
            if adjusted[end].get("role") == "tool":
                positions.append(end)
            end += 1
        if len(positions) > 1 and order:
            results = sorted(
                (adjusted[k] for k in positions),
                key=lambda m: order.get(m.get("tool_call_id", ""), 0),
            )
            for k, result in zip(positions, results, strict=True):
                adjusted[k] = result
        i = end
    return adjusted


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    is_v4 = "function_calls" not in source
    messages = sort_tool_results(inputs.messages) if is_v4 else None
    has_format = isinstance(inputs.json_schema, dict)
    extra = {"response_format": inputs.json_schema} if is_v4 and has_format else None
    block = "tool_calls" if is_v4 else "function_calls"
    fc_start = f"<{DSML}{block}>"
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag=THINK_START,
        thinking_end_tags=(THINK_END, fc_start),
        preserved_tokens=(DSML, THINK_START, THINK_END),
        generation_prompt=inputs.template.generation_prompt(inputs, messages, None, extra),
    )
    if inputs.has_continuation():
        content = inputs.continue_final_message == "content"
        if is_v4 and not inputs.continue_reasoning():
            data.generation_prompt = GEN_PROMPT + THINK_END
            if content:
                data.generation_prompt += inputs.continue_content()
        else:
            data.generation_prompt = GEN_PROMPT + THINK_START + inputs.continue_reasoning()
            if content:
                data.generation_prompt += THINK_END + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs, is_v4, block))
    return data


def _invoke(p: ChatBuilder, tool: dict[str, Any]) -> P:
    name = function_name(tool)
    needed, optional = [], []
    for prop in foreach_parameter(tool["function"]):
        key, is_string = prop.name, prop.schema.may_be_string()
        flag = "true" if is_string else "false"
        opener = (
            p.literal(f'<{DSML}parameter name="')
            + p.tool_arg_name(p.literal(key))
            + p.literal(f'" string="{flag}">')
        )
        close = f"</{DSML}parameter>"
        if is_string:
            value = p.tool_arg_string_value(p.until(close))
        else:
            rule_name = f"tool-{name}-arg-{key}-schema"
            value = p.tool_arg_json_value(p.schema(p.json(), rule_name, prop.schema))
        arg = p.tool_arg(p.tool_arg_open(opener) + value + p.tool_arg_close(p.literal(close)))
        (needed if prop.required else optional).append(p.rule(f"tool-{name}-arg-{key}", arg))
    args = p.eps()
    for i, arg in enumerate(needed):
        args = args + p.space() + arg if i > 0 else args + arg
    if optional:
        any_optional = p.choice()
        for arg in optional:
            any_optional |= arg
        args = args + p.repeat(p.space() + any_optional, 0, -1)
    opener = p.literal(f'<{DSML}invoke name="') + p.tool_name(p.literal(name)) + p.literal('">\n')
    call = p.tool(
        p.tool_open(opener) + args + p.space() + p.tool_close(p.literal(f"</{DSML}invoke>"))
    )
    return p.rule(f"tool-{name}", call)


def _grammar(p: ChatBuilder, inputs: ParseInputs, is_v4: bool, block: str) -> P:
    fc_start, fc_end = f"<{DSML}{block}>", f"</{DSML}{block}>"
    generation_prompt, end = p.literal(GEN_PROMPT), p.end()
    has_calls = inputs.has_tools() and inputs.tool_choice != "none"
    tool_choice = p.choice()
    if has_calls:
        for tool in foreach_function(inputs.tools):
            tool_choice |= _invoke(p, tool)
    more = p.zero_or_more(p.space() + tool_choice) if inputs.parallel_tool_calls else p.eps()
    body = p.literal(fc_start) + p.space() + tool_choice + more + p.space() + p.literal(fc_end)
    obligatory = tool_calls = p.trigger_rule("tool-call", body)
    if inputs.tool_choice != "required":
        tool_calls = p.optional(tool_calls)
    reasoning = reasoning_with_calls = p.eps()
    with_calls = False
    if inputs.extract_reasoning() and inputs.enable_thinking:
        reasoning = p.optional(THINK_START + p.reasoning(p.until(THINK_END)) + THINK_END)
        stops = [TC_SEPARATOR + fc_start, fc_start, THINK_END]
        reasoning_with_calls = (
            THINK_START + p.reasoning(p.until_one_of(stops)) + p.space() + obligatory
        )
        with_calls = True
    elif inputs.extract_reasoning():
        # Thinking off: the prompt's empty <think></think> (V3.2) or bare </think> (V4).
        if is_v4:
            reasoning = p.optional(p.literal(THINK_END))
        else:
            reasoning = p.optional(
                p.literal(THINK_START) + p.until(THINK_END) + p.literal(THINK_END)
            )
    if isinstance(inputs.json_schema, dict):
        schema = p.schema(p.json(), "response-format-schema", inputs.json_schema)
        response = p.rule(
            "response-format",
            p.literal("```json") + p.space() + p.content(schema) + p.space() + p.literal("```"),
        )
        return generation_prompt + reasoning + response + end
    if not has_calls:
        return generation_prompt + reasoning + p.content(p.rest()) + end
    before = (
        p.negate(p.literal(THINK_START))
        + p.content(p.until_one_of([TC_SEPARATOR + fc_start, fc_start]))
        + p.space()
    )
    if with_calls:
        return generation_prompt + (reasoning_with_calls | (reasoning + before + tool_calls)) + end
    return generation_prompt + reasoning + before + tool_calls + end
