"""What several of llama.cpp's specialized handlers share (common/parsers/parsers.cpp and
common/chat.cpp, build b11434).

`foreach_function` and `foreach_parameter` walk the request's tools as the helpers of
those names do; a parameter's schema is a node of the tree llama.cpp builds from the
parameters (`schema`), which decides whether an XML-style argument is read as raw text
or as JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.render.engines.llamacpp.peg.schema import foreach_parameter, tool_parameters

if TYPE_CHECKING:
    from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder
    from app.render.engines.llamacpp.peg.peg_builder import P

__all__ = [
    "copied",
    "foreach_function",
    "foreach_parameter",
    "function_name",
    "function_parameters",
    "tagged_args",
]


def foreach_function(tools: list[dict[str, Any]] | None) -> Iterator[dict[str, Any]]:
    """The tools that are functions (`type` "function" with a `function`), in order."""
    for tool in tools or ():
        if isinstance(tool, dict) and tool.get("type") == "function" and "function" in tool:
            yield tool


def function_name(tool: dict[str, Any]) -> str:
    """The tool's function name (llama.cpp reads `function.name` as a string)."""
    return str(tool["function"].get("name", ""))


def function_parameters(tool: dict[str, Any]) -> Any:
    """common_chat_tool_parameters: the function's `parameters` schema, or an empty object
    schema when they are missing, null or `{}`."""
    return tool_parameters(tool["function"])


def tagged_args(
    p: ChatBuilder, tool: dict[str, Any], opener: str, string_value: P, close: str
) -> P:
    """minicpm5's and muse-glimmer's arguments: any number of `OPENER"KEY">` tags, in any
    order, each followed by raw text when the parameter's schema may be a string (the
    caller's `string_value`, which reads the closing tag), else by JSON then `close`."""
    name = function_name(tool)
    arg_rules = []
    for prop in foreach_parameter(tool["function"]):
        if prop.schema.may_be_string():
            value = string_value
        else:
            rule_name = f"tool-{name}-arg-{prop.name}-schema"
            json_value = p.schema(p.json(), rule_name, prop.schema)
            value = p.tool_arg_json_value(json_value) + p.tool_arg_close(p.literal(close))
        tag = p.literal(opener) + p.tool_arg_name(p.literal(prop.name)) + '">'
        arg_rules.append(p.tool_arg(p.tool_arg_open(tag) + value))
    return p.zero_or_more(p.choice(*arg_rules) + p.space()) if arg_rules else p.eps()


def copied(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A deep copy of the messages, for the handlers that adjust them before rendering."""
    return copy.deepcopy(messages)
