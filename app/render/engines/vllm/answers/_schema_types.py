"""The schema-driven retyping vLLM's parser engine applies to tool-call arguments.

vLLM 0.33.0's engine-based tool parsers (kimi_k2, glm45, minimax_m2, qwen3_coder, ...)
read each argument value as text and then retype it from the request's tool schema: a
value the schema calls an integer becomes `5`, not `"5"`. When any value changes, vLLM
serialises the arguments again with `json.dumps(..., ensure_ascii=False)`; when none
does, the text is left as the parser produced it. This module reproduces that step.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: Type names vLLM reads as the JSON Schema type they stand for.
TYPE_ALIASES: dict[str, str] = {
    **dict.fromkeys(("str", "text", "varchar", "char", "enum"), "string"),
    **dict.fromkeys(
        ("int", "int32", "int64", "uint", "uint32", "uint64", "long", "short", "unsigned"),
        "integer",
    ),
    **dict.fromkeys(("float", "float32", "float64", "double"), "number"),
    "bool": "boolean",
    "dict": "object",
    **dict.fromkeys(("arr", "list", "sequence"), "array"),
}

#: The order in which a value is tried against the types its schema allows.
PRIORITY = ("null", "integer", "number", "boolean", "object", "array", "string")

#: How deep a schema's anyOf/oneOf/allOf is followed (a hostile schema is cut here).
MAX_SCHEMA_DEPTH = 32


def _function(tool: Any) -> dict[str, Any] | None:
    if not isinstance(tool, dict) or tool.get("type", "function") != "function":
        return None
    function = tool.get("function")
    return function if isinstance(function, dict) else None


def has_tool(tools: list[dict] | None, name: str) -> bool:
    """Whether the request declares a function tool called `name`."""
    return any((f := _function(tool)) and f.get("name") == name for tool in tools or ())


def tool_properties(tools: list[dict] | None, name: str) -> dict[str, Any]:
    """The `properties` of the first function tool called `name` ({} when none)."""
    for tool in tools or ():
        function = _function(tool)
        if function and function.get("name") == name:
            properties = (function.get("parameters") or {}).get("properties", {})
            return properties if isinstance(properties, dict) else {}
    return {}


def schema_types(schema: Any, depth: int = 0) -> set[str]:
    """The JSON types a schema allows: `type`, the types of its `enum` values, and those
    of its anyOf/oneOf/allOf branches; {"string"} when it says nothing."""
    if not isinstance(schema, dict) or depth > MAX_SCHEMA_DEPTH:
        return {"string"}
    types: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(t for t in declared if isinstance(t, str))
    enum = schema.get("enum")
    if isinstance(enum, list):
        for value in enum:
            types.add(_json_type(value))
    for branch in ("anyOf", "oneOf", "allOf"):
        choices = schema.get(branch)
        if isinstance(choices, list):
            for choice in choices:
                types.update(schema_types(choice, depth + 1))
    return types or {"string"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def retype(text: str, types: set[str]) -> Any:
    """A raw value read as the first of `types` (in vLLM's priority) it parses as;
    `text` itself (the same object) when it stays a string."""
    wanted = {TYPE_ALIASES.get(t.strip().lower(), t.strip().lower()) for t in types}
    for kind in PRIORITY:
        if kind not in wanted:
            continue
        if kind == "string":
            return text
        if kind == "null" and text.lower() == "null":
            return None
        if kind in ("integer", "number"):
            try:
                return int(text)
            except ValueError:
                pass
        if kind == "number":
            try:
                number = float(text)
            except ValueError:
                continue
            if math.isfinite(number):
                return number if number != int(number) else int(number)
        if kind == "boolean":
            word = text.lower().strip()
            if word in ("true", "1", "false", "0"):
                return word in ("true", "1")
        if kind in ("object", "array"):
            ok, parsed = _loads(text)
            if ok and _finite(parsed):
                return parsed
    ok, parsed = _loads(text)
    return parsed if ok and _finite(parsed) else text


def _retype_value(value: Any, schema: dict[str, Any], depth: int) -> tuple[Any, bool]:
    if depth > MAX_SCHEMA_DEPTH:
        return value, False
    if isinstance(value, str):
        new = retype(value, schema_types(schema))
        return new, new is not value
    if isinstance(value, dict):
        nested = schema.get("properties")
        if isinstance(nested, dict):
            return value, _retype_dict(value, nested, depth + 1)
        return value, False
    if isinstance(value, list):
        items = schema.get("items")
        changed = False
        if isinstance(items, dict):
            for i, item in enumerate(value):
                new, item_changed = _retype_value(item, items, depth + 1)
                if item_changed:
                    value[i] = new
                    changed = True
        return value, changed
    new = retype(json.dumps(value, ensure_ascii=False), schema_types(schema))
    return new, type(new) is not type(value) or new != value


def _retype_dict(args: dict[str, Any], properties: dict[str, Any], depth: int) -> bool:
    changed = False
    for key, value in args.items():
        schema = properties.get(key)
        if isinstance(schema, dict):
            new, value_changed = _retype_value(value, schema, depth)
            if value_changed:
                args[key] = new
                changed = True
    return changed


def fix_arguments(arguments: str, tools: list[dict] | None, name: str) -> str:
    """The arguments after vLLM's schema retyping (`_fix_arg_types`): re-serialised
    when a value changed type, else unchanged."""
    if not tools or not name:
        return arguments
    ok, args = _loads(arguments)
    if not ok or not isinstance(args, dict):
        return arguments
    properties = tool_properties(tools, name)
    if not properties or not _retype_dict(args, properties, 0):
        return arguments
    return json.dumps(args, ensure_ascii=False)
