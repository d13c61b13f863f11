"""Qwen3-Coder XML tool calls (also Qwen3.5, Nemotron Nano 3, StepFun 3.5 Flash).

common_chat_params_init_qwen3_coder (common/parsers/qwen3-coder.cpp, build b11434). The
parser reads `<|im_start|>assistant\\n` (the generation prompt it expects), an optional
`<think>` block that `</think>` or a `<tool_call>` ends, content up to the first tool
call, then

    <tool_call>\\n<function=NAME>\\n<parameter=ARG>\\nVALUE\\n</parameter>\\n...</function>\\n</tool_call>

with the declared arguments only: required ones in any order, then optional ones. A value
whose schema is a string only is raw text; one that cannot be a string is JSON; a union
with a string is JSON when the text reads as one of the union's other types (`null`,
`42`, `{...}`), else raw text. For Qwen3-Coder itself (a template without `<think>`) the
first call may lack its `<tool_call>`, or start with a bare `<function=NAME>` (its
models drop the wrapper).
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    foreach_function,
    foreach_parameter,
    function_name,
)
from app.render.engines.llamacpp.peg.peg_builder import P
from app.render.engines.llamacpp.peg.schema import Node

#: The assistant turn's opening, which the parser reads before the completion.
GEN_PREFIX = "<|im_start|>assistant\n"
#: What ends every argument value.
ARG_END = "\n</parameter>\n"
#: How a template writes the tags without a newline between them (excluded).
JOINED_TAGS = "'<tool_call><function=' ~ tool_call.name ~ '>'"
#: The JSON alternatives a union with a string tries first, by the types they read.
UNION_JSON = (
    ("object", "json_object"),
    ("array", "json_array"),
    ("number", "json_number"),
    ("integer", "json_number"),
    ("boolean", "json_bool"),
    ("null", "json_null"),
)


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    thinking = "<think>" in source
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=thinking,
        generation_prompt=inputs.template.generation_prompt(inputs),
        preserved_tokens=("<tool_call>", "</tool_call>")
        + (("<think>", "</think>") if thinking else ()),
    )
    if thinking:
        data.thinking_start_tag = "<think>"
        data.thinking_end_tags = ("\n</think>", "</think>", "<tool_call>")
    if inputs.has_continuation():
        data.generation_prompt = GEN_PREFIX
        if thinking:
            data.generation_prompt += "<think>\n" + inputs.continue_reasoning()
            if inputs.continue_final_message == "content":
                data.generation_prompt += "\n</think>\n\n"
        if inputs.continue_final_message == "content":
            data.generation_prompt += inputs.continue_content()

    # Qwen3-Coder itself (no thinking): a bare `<function=NAME>` also starts a call (only
    # for declared names, so that text such as `#include <functional>` stays content).
    names = [function_name(tool) for tool in foreach_function(inputs.tools)]
    bare = [] if thinking else [f"<function={name}>" for name in names]
    starts = ["<tool_call>", *bare]

    def build(p: ChatBuilder) -> P:
        generation_prompt = p.literal(GEN_PREFIX)
        reasoning = p.eps()
        if thinking and inputs.extract_reasoning():
            ending = p.literal("</think>") | p.peek(p.literal("<tool_call>"))
            body = p.reasoning(p.until_one_of(["</think>", "<tool_call>"]))
            reasoning = p.optional("<think>" + p.space() + body + ending)
        if isinstance(inputs.json_schema, dict) and inputs.json_schema:
            answer = p.content(p.schema(p.json(), "response-format", inputs.json_schema))
            return generation_prompt + (reasoning << answer)
        if inputs.has_tools() and inputs.tool_choice != "none":
            calls = _tool_calls(p, inputs, optional_wrapper=not thinking)
            return generation_prompt + (reasoning << p.content(p.until_one_of(starts)) << calls)
        return generation_prompt + (reasoning << p.content(p.rest()))

    data.parser = build_chat_peg_parser(build)
    return data


def _tool_calls(p: ChatBuilder, inputs: ParseInputs, optional_wrapper: bool) -> P:
    """One call, or several when parallel calls are on, each `<tool_call>`-wrapped (the
    first one's wrapper optional for Qwen3-Coder itself)."""
    arg_close = p.tool_arg_close(p.literal(ARG_END))
    arg_string = p.rule(
        "xml-arg-string", p.ac(p.tool_arg_string_value(p.until(ARG_END)) + arg_close, ARG_END)
    )
    tool_choice = p.choice()
    for tool in foreach_function(inputs.tools):
        name = function_name(tool)
        required, optional = [], []
        for prop in foreach_parameter(tool["function"]):
            rule_name = f"tool-{name}-arg-{prop.name}"
            arg_name = p.tool_arg_name(p.literal(prop.name))
            arg_open = p.tool_arg_open("<parameter=" + arg_name + ">\n")
            value = _arg_value(p, prop.schema, rule_name, arg_close, arg_string)
            rule = p.rule(rule_name, p.tool_arg(arg_open + value))
            (required if prop.required else optional).append(rule)
        # Qwen does not always keep the declared order of the required arguments.
        args = p.permute(f"tool-{name}-args", required)
        if optional:
            args = args + p.zero_or_more(p.choice(*optional))
        func = p.tool(
            p.tool_open("<function=" + p.tool_name(p.literal(name)) + ">\n")
            + p.tool_args(args)
            + p.tool_close(p.literal("</function>\n"))
        )
        tool_choice |= p.rule(f"tool-{name}", func)
    least = 1 if inputs.tool_choice == "required" else 0
    body = tool_choice + "</tool_call>" + p.space()
    later = p.rule("tool-call", "<tool_call>\n" + body)
    first = later
    if optional_wrapper:
        first = p.rule("tool-call-first", p.optional(p.literal("<tool_call>\n")) + body)
    calls = first + p.zero_or_more(later) if inputs.parallel_tool_calls else first
    return p.trigger_rule("tool-call-root", p.repeat(calls, least, 1))


def _arg_value(p: ChatBuilder, schema: Node, rule_name: str, arg_close: P, arg_string: P) -> P:
    """An argument's value: JSON, raw text, or for a union with a string, JSON of the
    union's other types when it reads as one (atomically, up to the closing tag), else text."""
    types = schema.value_types()
    if "string" not in types:
        json_value = p.schema(p.json(), rule_name + "-schema", schema)
        return p.tool_arg_json_value(json_value) + arg_close
    if types == {"string"}:
        return arg_string
    json_value = p.choice()
    for kind, parser in UNION_JSON:
        if kind in types and not (kind == "integer" and "number" in types):
            json_value |= getattr(p, parser)()
    typed = p.atomic(p.tool_arg_json_value(json_value) + arg_close)
    return p.gbnf(typed | arg_string, "xml-arg-string")
