"""MiniCPM5: `<think>` reasoning and XML calls `<function name="..."><param name="...">`.

common_chat_params_init_minicpm5 (common/parsers/minicpm5.cpp, build b11434). After the generation
prompt `<|im_start|>assistant\\n` come `<think>...</think>` (required when reasoning is
extracted), content up to `<function`, then one or more calls

    <function name="NAME"><param name="KEY">value</param></function>

where a string parameter is raw text (or a CDATA section) and any other is JSON.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    foreach_function,
    function_name,
    tagged_args,
)
from app.render.engines.llamacpp.peg.peg_builder import P

ASSISTANT = "<|im_start|>assistant\n"
PARAM_END = "</param>"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag="<think>",
        thinking_end_tags=("</think>",),
        preserved_tokens=("<function", "<param", "</function>", PARAM_END, "<think>", "</think>"),
        generation_prompt=inputs.template.generation_prompt(inputs),
    )
    if inputs.has_continuation():
        data.generation_prompt = ASSISTANT + "<think>\n" + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += "\n</think>\n\n" + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _string_value(p: ChatBuilder) -> P:
    """Raw text up to </param>, or a CDATA section's inside (which may hold </param>)."""
    close = p.tool_arg_close(p.literal(PARAM_END))
    cdata = p.ac(p.tool_arg_string_value(p.until("]]>")) + p.literal("]]>"), "]]>")
    plain = p.ac(p.tool_arg_string_value(p.until(PARAM_END)) + close, PARAM_END)
    return p.choice(
        p.literal("<![CDATA[") + cdata + p.tool_arg_close(p.literal(PARAM_END)),
        p.negate(p.literal("<![CDATA[")) + plain,
    )


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    generation_prompt = p.literal(ASSISTANT)
    reasoning = p.eps()
    if inputs.extract_reasoning():
        reasoning = ("<think>" << p.reasoning(p.until("</think>")) << "</think>") + p.space()
    schema = inputs.json_schema
    if isinstance(schema, dict) and schema:
        content = p.content(p.schema(p.json(), "response-format", schema))
        return generation_prompt + reasoning + content  # no end(): as chat.cpp builds it
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return generation_prompt + reasoning + p.content(p.rest()) + p.end()
    string_value = _string_value(p)
    tool_choice = p.choice()
    for tool in foreach_function(inputs.tools):
        name = function_name(tool)
        args = tagged_args(p, tool, '<param name="', string_value, PARAM_END)
        opener = p.literal('<function name="') + p.tool_name(p.literal(name)) + p.literal('">')
        call = p.tool(
            p.tool_open(opener) << p.tool_args(args) << p.tool_close(p.literal("</function>"))
        )
        tool_choice |= p.rule(f"tool-{name}", call)
    most = -1 if inputs.parallel_tool_calls else 1
    calls = p.trigger_rule("tool-call", p.repeat(tool_choice + p.space(), 1, most))
    return generation_prompt + reasoning + p.content(p.until("<function")) + calls + p.end()
