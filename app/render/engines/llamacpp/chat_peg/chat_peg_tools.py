"""The tool-call layouts of llama.cpp's chat PEG builder (common/chat-peg-parser.cpp).

`standard_json_tools` (a JSON object per call: flat keys, nested "function.name" keys,
or the function name as the key), `standard_constructed_tools` (XML-style tags) and
`python_style_tool_calls`. The builder (`chat_peg.ChatBuilder`) calls these with itself,
built on the tags and helpers of `chat_peg_tags`; tools are the request's tools as JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.render.engines.llamacpp.chat_peg.chat_peg_tags import ChatTagBuilder
from app.render.engines.llamacpp.peg.schema import tool_parameters

if TYPE_CHECKING:
    from app.render.engines.llamacpp.peg.peg_builder import P


def _functions(tools: Any) -> list[tuple[str, dict[str, Any]]]:
    """(name, parameters) of each tool that has a "function"."""
    found = []
    for tool in tools:
        if isinstance(tool, dict) and "function" in tool:
            function = tool["function"]
            found.append((function["name"], tool_parameters(function)))
    return found


def _properties(params: Any) -> dict[str, Any]:
    props = params.get("properties") if isinstance(params, dict) else None
    return props if isinstance(props, dict) else {}


def _id_field(p: ChatTagBuilder, key: str, numbers: bool) -> P:
    """`"key": "<id>"` (or a number when `numbers`), atomic."""
    quoted = p.literal('"') + p.tool_id(p.string_content('"')) + p.literal('"')
    value = p.choice(quoted, p.tool_id(p.json_number())) if numbers else quoted
    return p.atomic(p.literal(f'"{key}"') + p.space() + p.literal(":") + p.space() + value)


def _args(p: ChatTagBuilder, name: str, params: Any) -> P:
    return p.tool_args(p.schema(p.json(), f"tool-{name}-schema", params))


def _key(p: ChatTagBuilder, key: str) -> P:
    return p.literal(f'"{key}"') + p.space() + p.literal(":") + p.space()


def _function_is_key(p: ChatTagBuilder, tools: Any, args_key: str, effective_args_key: str,
                     call_id_key: str, gen_call_id_key: str) -> P:  # fmt: skip
    choices = p.choice()
    for name, params in _functions(tools):
        fields = []
        if call_id_key:
            id_parser = _id_field(p, call_id_key, False)
            fields.append(
                p.optional(id_parser + p.space() + p.optional(p.literal(",") + p.space()))
            )
        if gen_call_id_key:
            gen_parser = _id_field(p, gen_call_id_key, True)
            fields.append(
                p.optional(gen_parser + p.space() + p.optional(p.literal(",") + p.space()))
            )
        args = _args(p, name, params)
        fields.append(args if not args_key else _key(p, effective_args_key) + args)
        if not args_key and len(fields) == 1:
            inner = fields[0]
        else:
            inner = p.literal("{") + p.space()
            for i, item in enumerate(fields):
                inner = inner + item
                if i < len(fields) - 1:
                    inner = inner + p.space()
            inner = inner + p.space() + p.literal("}")
        body = (
            p.tool_open(p.literal("{")) + p.space() + p.literal('"') + p.tool_name(p.literal(name))
            + p.literal('"') + p.space() + p.literal(":") + p.space() + inner + p.space()
            + p.tool_close(p.literal("}"))
        )  # fmt: skip
        choices = choices | p.rule(f"tool-{name}", p.tool(body))
    return choices


def _split_key(key: str) -> tuple[str, str]:
    """ "function.name" -> ("function", "name"); "name" -> ("", "name")."""
    head, dot, tail = key.partition(".")
    return (head, tail) if dot else ("", key)


def _nested_keys(p: ChatTagBuilder, tools: Any, name_key: str, args_key: str,
                 call_id_key: str, gen_call_id_key: str) -> P:  # fmt: skip
    name_spec, args_spec = _split_key(name_key), _split_key(args_key)
    prefix = name_spec[0] or args_spec[0]
    name_field = name_spec[1] if name_spec[0] else name_key
    args_field = args_spec[1] if args_spec[0] else args_key
    choices = p.choice()
    for name, params in _functions(tools):
        nested_name = _key(p, name_field) + p.atomic(
            p.literal('"') + p.tool_name(p.literal(name)) + p.literal('"')
        )
        nested_args = _key(p, args_field) + _args(p, name, params)
        nested = (
            p.literal("{") + p.space() + nested_name + p.space() + p.literal(",") + p.space()
            + nested_args + p.space() + p.literal("}")
        )  # fmt: skip
        body = p.tool_open(p.literal("{")) + p.space()
        for key, numbers in ((call_id_key, False), (gen_call_id_key, True)):
            if key and not _split_key(key)[0]:
                field = _id_field(p, key, numbers)
                body = body + p.optional(field + p.space() + p.literal(",") + p.space())
        body = body + _key(p, prefix) + nested + p.space() + p.tool_close(p.literal("}"))
        choices = choices | p.rule(f"tool-{name}", p.tool(body))
    return choices


def _flat_keys(p: ChatTagBuilder, tools: Any, name_key: str, args_key: str, call_id_key: str,
               gen_call_id_key: str, order: list[str], openai_wrapper: bool) -> P:  # fmt: skip
    choices = p.choice()
    for name, params in _functions(tools):
        quoted_name = p.atomic(p.literal('"') + p.tool_name(p.literal(name)) + p.literal('"'))
        pairs = [
            (_key(p, name_key) + quoted_name, name_key),
            (_key(p, args_key) + _args(p, name, params), args_key),
        ]
        if call_id_key:
            pairs.append((p.optional(_id_field(p, call_id_key, True)), call_id_key))
        if gen_call_id_key:
            pairs.append((p.optional(_id_field(p, gen_call_id_key, True)), gen_call_id_key))
        # std::sort is not stable, but with distinct ranks (and the unlisted last, in
        # their order for the 2 to 4 fields here) a stable sort gives the same order.
        pairs.sort(key=lambda pair: order.index(pair[1]) if pair[1] in order else len(order))
        body = p.tool_open(p.literal("{")) + p.space()
        if openai_wrapper:
            body = body + p.optional(
                _key(p, "type") + p.literal('"function"') + p.space() + p.literal(",") + p.space()
            )
        for i, (parser, _) in enumerate(pairs):
            body = body + parser
            if i < len(pairs) - 1:
                body = body + p.space() + p.literal(",") + p.space()
        body = body + p.space() + p.tool_close(p.literal("}"))
        choices = choices | p.rule(f"tool-{name}", p.tool(body))
    return choices


def standard_json_tools(p: ChatTagBuilder, section_start: str, section_end: str, tools: Any,
                        parallel_tool_calls: bool, force_tool_calls: bool, name_key: str,
                        args_key: str, array_wrapped: bool, function_is_key: bool,
                        call_id_key: str, gen_call_id_key: str, parameters_order: list[str],
                        accept_openai_wrapper: bool) -> P:  # fmt: skip
    """JSON tool calls in a section; eps() without tools."""
    if not isinstance(tools, list) or not tools:
        return p.eps()
    name_key_ = name_key or "name"
    args_key_ = args_key or "arguments"
    if function_is_key:
        calls = _function_is_key(p, tools, args_key, args_key_, call_id_key, gen_call_id_key)
    elif _split_key(name_key_)[0] or _split_key(args_key_)[0]:
        calls = _nested_keys(p, tools, name_key_, args_key_, call_id_key, gen_call_id_key)
    else:
        calls = _flat_keys(p, tools, name_key_, args_key_, call_id_key, gen_call_id_key,
                           parameters_order, accept_openai_wrapper)  # fmt: skip
    if parallel_tool_calls:
        calls = calls + p.zero_or_more(p.space() + p.literal(",") + p.space() + calls)
    if array_wrapped:
        calls = p.literal("[") + p.space() + calls + p.space() + p.literal("]")
    body = p.literal(section_start) + p.space() + calls + p.space() + p.literal(section_end)
    section = p.trigger_rule("tool-call", body)
    return section if force_tool_calls else p.optional(section)


def standard_constructed_tools(p: ChatTagBuilder, markers: dict[str, str], tools: Any,
                               parallel_tool_calls: bool, force_tool_calls: bool) -> P:  # fmt: skip
    """<tool_call><function=name><param=key>value</param></function></tool_call>, with
    the markers renamed by `markers`; eps() without tools."""
    if not isinstance(tools, list) or not tools:
        return p.eps()
    defaults = {
        "tool_call_start_marker": "<tool_call>", "tool_call_end_marker": "</tool_call>",
        "function_opener": "<function=", "function_name_suffix": ">",
        "function_closer": "</function>", "parameter_key_prefix": "<param=",
        "parameter_key_suffix": ">", "parameter_closer": "</param>",
    }  # fmt: skip
    m = {key: markers.get(key, value) for key, value in defaults.items()}
    choices = p.choice()
    for name, params in _functions(tools):
        args = p.eps()
        props = _properties(params)
        if props:
            arg_choice = p.choice()
            for prop in props:
                arg_name = p.choice(p.literal(prop), p.literal(f'"{prop}"'), p.literal(f"'{prop}'"))
                arg = p.tool_arg(
                    p.tool_arg_open(p.literal(m["parameter_key_prefix"]))
                    + p.tool_arg_name(arg_name)
                    + p.literal(m["parameter_key_suffix"])
                    + p.tool_arg_value(p.until(m["parameter_closer"]))
                    + p.tool_arg_close(p.literal(m["parameter_closer"]))
                )  # fmt: skip
                arg_choice = arg_choice | arg
            args = p.zero_or_more(arg_choice + p.space())
        opener = p.literal(m["function_opener"]) + p.tool_name(p.literal(name))
        call = p.tool(
            p.tool_open(opener + p.literal(m["function_name_suffix"])) + p.space()
            + p.tool_args(args) + p.space() + p.tool_close(p.literal(m["function_closer"]))
        )  # fmt: skip
        choices = choices | p.rule(f"tool-{name}", call)
    start, end = p.literal(m["tool_call_start_marker"]), p.literal(m["tool_call_end_marker"])
    calls = p.one_or_more(choices + p.space()) if parallel_tool_calls else choices + p.space()
    section = p.trigger_rule("tool-call", start + p.space() + calls + end)
    return section if force_tool_calls else p.optional(section)


def python_or_json_value(p: ChatTagBuilder) -> P:
    """A Python value whose leaves also take JSON's true/false/null (LFM2)."""

    def build() -> P:
        ws, value = p.space(), python_or_json_value(p)
        member = p.sequence(p.python_string(), ws, ":", ws, value)
        members = p.sequence(member, p.zero_or_more(p.sequence(ws, ",", ws, member)))
        dict_ = p.rule(
            "python-or-json-dict",
            lambda: p.sequence("{", ws, p.choice("}", p.sequence(members, ws, "}")), ws),
        )
        elements = p.sequence(value, p.zero_or_more(p.sequence(",", ws, value)))
        array = p.rule(
            "python-or-json-array",
            lambda: p.sequence("[", ws, p.choice("]", p.sequence(elements, ws, "]")), ws),
        )
        return p.choice(
            dict_, array, p.python_string(), p.python_number(), p.python_bool(),
            p.python_null(), p.json_bool(), p.json_null(),
        )  # fmt: skip

    return p.rule("python-or-json-value", build)


def python_style_tool_calls(p: ChatTagBuilder, tools: Any, parallel_tool_calls: bool,
                            allow_json_literals: bool) -> P:  # fmt: skip
    """[name(arg="value", n=1), ...]; eps() without tools."""
    if not isinstance(tools, list) or not tools:
        return p.eps()
    choices = p.choice()
    for name, params in _functions(tools):
        args = p.eps()
        props = _properties(params)
        if props:
            arg_choice = p.choice()
            for prop, definition in props.items():
                is_string = isinstance(definition, dict) and definition.get("type") == "string"
                if is_string:
                    quoted = p.choice(
                        p.literal('"') + p.string_content('"') + p.literal('"'),
                        p.literal("'") + p.string_content("'") + p.literal("'"),
                    )
                    value = p.tool_arg_value(quoted)
                else:
                    inner = python_or_json_value(p) if allow_json_literals else p.python_value()
                    value = p.tool_arg_value(inner)
                opener = p.tool_arg_open(p.tool_arg_name(p.literal(prop)) + p.literal("="))
                arg_choice = arg_choice | p.tool_arg(opener + value + p.tool_arg_close(p.eps()))
            args = arg_choice + p.zero_or_more("," + p.space() + arg_choice)
        call = p.tool(
            p.tool_open(p.tool_name(p.literal(name)) + p.literal("(")) + p.space()
            + p.tool_args(args) + p.space() + p.tool_close(p.literal(")"))
        )  # fmt: skip
        choices = choices | p.rule(f"tool-{name}", call)
    if parallel_tool_calls:
        return (
            "[" + p.space() + choices + p.zero_or_more("," + p.space() + choices) + p.space() + "]"
        )
    return "[" + p.space() + choices + p.space() + "]"
