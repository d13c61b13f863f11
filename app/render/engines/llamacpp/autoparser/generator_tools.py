"""The autoparser's tool-call grammars for the tagged formats.

`build_tool_parser_tag_json`, `build_tool_parser_tag_tagged` and their shared
`build_func_parser` (common/chat-auto-parser-generator.cpp): one rule per declared
tool, a function-name opening, an optional call id, the arguments (JSON, or one tag
per argument), the closing; then the calls between the section or per-call markers.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.llamacpp.apply.types import ParseInputs
from app.render.engines.llamacpp.autoparser.analysis import ToolAnalysis
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder
from app.render.engines.llamacpp.peg.peg_builder import P
from app.render.engines.llamacpp.peg.schema import foreach_parameter, tool_parameters


def _functions(inputs: ParseInputs) -> list[tuple[str, Any]]:
    """foreach_function: (name, parameters) of each function tool."""
    result = []
    for tool in inputs.tools or ():
        if not isinstance(tool, dict) or tool.get("type") != "function" or "function" not in tool:
            continue
        function = tool["function"]
        result.append((str(function.get("name", "")), tool_parameters(function)))
    return result


def _func_parser(
    p: ChatBuilder,
    tools: ToolAnalysis,
    name: str,
    call_id: P,
    have_call_id: bool,
    args: P,
    peek: P | None,
) -> P:
    """build_func_parser: opening, call id, arguments, closing, atomic where it must be."""
    opening = p.tool_open(tools.name_prefix + p.tool_name(p.literal(name)) + tools.name_suffix)
    if tools.args_separator:
        opening = opening + p.space() + p.literal(tools.args_separator)
    atomic = True
    if tools.name_suffix:
        parser = opening + call_id + p.space() + args
    elif have_call_id:
        parser = p.atomic(opening + call_id) + p.space() + args
    elif peek is not None:
        parser = p.atomic(opening + call_id + p.space() + peek) + args
    else:
        parser = opening + call_id + p.space() + args
        atomic = False
    if tools.close:
        parser = parser + p.space() + p.tool_close(p.literal(tools.close))
    elif tools.per_call_end:
        ahead = p.literal(tools.per_call_end)
        if tools.tolerate_intertag_whitespace:
            ahead = p.space() + ahead
        parser = parser + p.tool_close(p.peek(ahead))
    else:
        # An empty close still runs the mapper's closing of the call.
        parser = parser + p.tool_close(p.space())
    return parser if atomic else p.atomic(parser)


def _call_id(p: ChatBuilder, tools: ToolAnalysis, tagged: bool) -> tuple[P, bool]:
    """The call-id section, when the id sits between the name and the arguments."""
    if not (
        tools.call_id_pos == "BETWEEN_FUNC_AND_ARGS"
        and tools.call_id_prefix
        and (tools.call_id_suffix or tools.args_start)
    ):
        return p.eps(), False
    prefix, suffix = tools.call_id_prefix, tools.call_id_suffix
    if suffix:
        if tagged:
            return p.optional(prefix + p.tool_id(p.until(suffix)) + suffix), True
        # TAG_WITH_JSON keeps the suffix outside the optional part, as the C++ does.
        return p.optional(prefix + p.tool_id(p.until(suffix))) + suffix, True
    return p.optional(prefix + p.tool_id(p.until(tools.args_start))), True


def _calls(p: ChatBuilder, inputs: ParseInputs, tools: ToolAnalysis, choice: P, tagged: bool) -> P:
    """The calls between the per-call and section markers (both tagged builders)."""
    parallel = inputs.parallel_tool_calls
    if tools.per_call_start:
        pad = p.space() if tagged else p.eps()
        wrapped = tools.per_call_start + pad + choice + pad + tools.per_call_end
        calls = wrapped + p.zero_or_more(p.space() + wrapped) if parallel else wrapped
        if tagged:
            calls = calls + p.space()
        calls = p.trigger_rule("tool-call", calls)
        if tools.section_start:
            if not tools.section_end:
                end = p.end()
            elif tagged:
                end = p.literal(tools.section_end) + p.space()
            else:
                end = p.literal(tools.section_end)
            calls = p.trigger_rule(
                "tool-calls",
                p.literal(tools.section_start) + p.space() + calls + p.space() + end,
            )
    else:
        pad = p.space() if tagged else p.eps()
        more = p.zero_or_more(", " + choice) if parallel else p.eps()
        calls = p.trigger_rule(
            "tool-call", tools.section_start + pad + choice + more + pad + tools.section_end
        )
    if inputs.tool_choice != "required":
        calls = p.optional(calls)
    return calls


def _finish(p: ChatBuilder, tools: ToolAnalysis, reasoning: P, calls: P) -> P:
    trigger = tools.section_start or tools.per_call_start
    before = p.until(trigger) if trigger else p.eps()
    return reasoning + p.optional(p.content(before)) + calls + p.end()


def tag_json(p: ChatBuilder, inputs: ParseInputs, tools: ToolAnalysis, reasoning: P) -> P:
    """build_tool_parser_tag_json: tags around JSON arguments."""
    choice = p.choice()
    for name, schema in _functions(inputs):
        call_id, have_call_id = _call_id(p, tools, tagged=False)
        args = p.tool_args(p.schema(p.json(), f"tool-{name}-schema", schema))
        if tools.args_start:
            args = p.literal(tools.args_start) + args
        if tools.args_end:
            args = args + p.literal(tools.args_end)
        peek = p.peek(p.literal(tools.args_start)) if tools.args_start else None
        choice = choice | p.rule(
            f"tool-{name}", _func_parser(p, tools, name, call_id, have_call_id, args, peek)
        )
    return _finish(p, tools, reasoning, _calls(p, inputs, tools, choice, tagged=False))


def tag_tagged(p: ChatBuilder, inputs: ParseInputs, tools: ToolAnalysis, reasoning: P) -> P:
    """build_tool_parser_tag_tagged: one tag per argument."""
    until_suffix = p.rule("until-suffix", p.until(tools.arg_value_suffix))
    choice = p.choice()
    for name, params in _functions(inputs):
        required, optional = [], []
        for prop in foreach_parameter({"parameters": params}):
            param = prop.name
            opening = p.tool_arg_open(
                tools.arg_name_prefix + p.tool_arg_name(p.literal(param)) + tools.arg_name_suffix
            )
            close = p.tool_arg_close(p.literal(tools.arg_value_suffix))
            if prop.schema.may_be_string():
                value = p.ac(p.tool_arg_string_value(until_suffix) + close, tools.arg_value_suffix)
            else:
                rule_name = f"tool-{name}-arg-{param}-schema"
                value = p.tool_arg_json_value(p.schema(p.json(), rule_name, prop.schema)) + close
            arg = p.tool_arg(opening + tools.arg_value_prefix + value)
            named = p.rule(f"tool-{name}-arg-{param}", arg)
            (required if prop.required else optional).append(named)
        args = p.eps()
        for index, parser in enumerate(required):
            args = args + p.space() + parser if index else args + parser
        if optional:
            any_optional = p.choice()
            for parser in optional:
                any_optional = any_optional | parser
            args = args + p.repeat(p.space() + any_optional, 0, -1)
        if tools.args_start:
            args = p.literal(tools.args_start) + args
        if tools.args_end:
            args = args + p.literal(tools.args_end)
        call_id, have_call_id = _call_id(p, tools, tagged=True)
        peek = (
            p.peek(p.literal(tools.arg_name_prefix)) if tools.arg_name_prefix and required else None
        )
        choice = choice | p.rule(
            f"tool-{name}", _func_parser(p, tools, name, call_id, have_call_id, args, peek)
        )
    return _finish(p, tools, reasoning, _calls(p, inputs, tools, choice, tagged=True))
