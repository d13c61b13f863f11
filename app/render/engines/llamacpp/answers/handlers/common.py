"""What several of llama.cpp's specialized handlers share (common/chat.cpp, build b10568).

`foreach_function` and `foreach_parameter` walk the request's tools as chat.cpp's helpers
of those names do; `resolves_to_string` is `common_schema_info::resolves_to_string`
(common/json-schema-to-grammar.cpp), which decides whether an XML-style argument is read
as raw text or as JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

#: The string formats `resolves_to_string` counts as strings (besides any "uuid..." one).
_STRING_FORMATS = frozenset(
    ("date", "time", "date-time", "uri", "email", "hostname", "ipv4", "ipv6", "uuid")
)


def foreach_function(tools: list[dict[str, Any]] | None) -> Iterator[dict[str, Any]]:
    """The tools that are functions (`type` "function" with a `function`), in order."""
    for tool in tools or ():
        if isinstance(tool, dict) and tool.get("type") == "function" and "function" in tool:
            yield tool


def function_name(tool: dict[str, Any]) -> str:
    """The tool's function name (llama.cpp reads `function.name` as a string)."""
    return str(tool["function"].get("name", ""))


def function_parameters(tool: dict[str, Any]) -> Any:
    """The function's `parameters` schema, or an empty object when it has none."""
    parameters = tool["function"].get("parameters")
    return parameters if parameters is not None else {}


def foreach_parameter(function: dict[str, Any]) -> Iterator[tuple[str, Any, bool]]:
    """(name, schema, required) for each property of the function's parameters."""
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        return
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return
    required = parameters.get("required")
    names = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    for name, schema in properties.items():
        yield name, schema, name in names


def _pointer(root: Any, ref: str) -> tuple[bool, Any]:
    """The target of a local `#/a/b` reference inside `root`, as resolve_refs finds it."""
    target = root
    for token in ref[ref.find("#") + 1 :].split("/")[1:]:
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return False, None
    return True, target


def resolves_to_string(schema: Any, root: Any) -> bool:
    """Whether any branch of `schema` allows a string; `$ref`s resolve inside `root`
    (the function's parameters, which llama.cpp resolves references against)."""
    visited: set[str] = set()
    budget = [10_000]  # a schema is small, but its references may form a cycle

    def check(node: Any) -> bool:
        budget[0] -= 1
        if budget[0] < 0 or not isinstance(node, dict):
            return False
        if "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or ref in visited or not ref.startswith("#/"):
                return False
            visited.add(ref)
            found, target = _pointer(root, ref)
            return found and check(target)
        kind = node.get("type")
        if kind == "string" or (isinstance(kind, list) and "string" in kind):
            return True
        for key in ("oneOf", "anyOf"):
            if isinstance(node.get(key), list) and any(check(alt) for alt in node[key]):
                return True
        parts = node.get("allOf")
        if isinstance(parts, list) and all(check(part) for part in parts):
            return True
        if isinstance(node.get("const"), str):
            return True
        enum = node.get("enum")
        if isinstance(enum, list) and any(isinstance(v, str) for v in enum):
            return True
        if any(key in node for key in ("pattern", "minLength", "maxLength")):
            return True
        fmt = node.get("format")
        return isinstance(fmt, str) and (fmt in _STRING_FORMATS or fmt.startswith("uuid"))

    return check(schema)


def copied(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A deep copy of the messages, for the handlers that adjust them before rendering."""
    return copy.deepcopy(messages)
