"""Ollama's Go test values as the JSON its API speaks: field names, its tests' helper
calls and named types (read by `goliteral`), for the recorders `record.py` and
`record_steps.py`."""

from __future__ import annotations

import json
from typing import Any

#: Go field name -> the JSON name Ollama's api package gives it.
JSON_NAMES = {
    "Role": "role",
    "Content": "content",
    "Thinking": "thinking",
    "ToolCalls": "tool_calls",
    "ToolName": "tool_name",
    "ToolCallID": "tool_call_id",
    "Images": "images",
    "ID": "id",
    "Function": "function",
    "Index": "index",
    "Name": "name",
    "Arguments": "arguments",
    "Type": "type",
    "Items": "items",
    "AnyOf": "anyOf",
    "Description": "description",
    "Enum": "enum",
    "Properties": "properties",
    "Required": "required",
    "Defs": "$defs",
    "Parameters": "parameters",
    "Value": "value",
}


def normalize(value: Any) -> Any:
    """A Go value read by goliteral, as the JSON Ollama's API would write it."""
    if isinstance(value, list):
        return [normalize(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "$call" in value:
        return _call(value["$call"], value["args"])
    if "$type" in value:
        return _typed(value["$type"], value["value"])
    if "$expr" in value:
        return {"$unsupported": value["$expr"]}
    out = {}
    for key, item in value.items():
        if key.startswith("."):
            key = JSON_NAMES.get(key[1:], key[1:])
        out[key] = normalize(item)
    return out


def _call(name: str, args: list[Any]) -> Any:
    """The value of a call of one of the tests' helpers."""
    if name in ("testArgs", "testPropsMap", "api.NewToolCallFunctionArguments"):
        return normalize(args[0]) if args else {}
    if name in ("args", "propsMap") and isinstance(args[0], str):
        return json.loads(args[0])
    if name in ("testArgsOrdered", "testPropsOrdered"):
        return dict(_pair(normalize(pair)) for pair in args[0])
    if name in ("float64", "int64", "int") and isinstance(args[0], (int, float)):
        return float(args[0]) if name == "float64" else int(args[0])
    if name == "api.ImageData" and isinstance(args[0], str):  # image bytes: kept as text
        return args[0]
    if name == "len" and isinstance(args[0], str):
        return len(args[0].encode("utf-8", errors="surrogateescape"))
    if name == "tool":  # qwen3coder_test.go's helper: a function tool with these properties
        parameters = {"type": "object", "properties": normalize(args[1])}
        return {"type": "function", "function": {"name": args[0], "parameters": parameters}}
    if name == "gemma4TestStringTool":  # gemma4_test.go's helper: string arguments by name
        props = {arg: {"type": ["string"]} for arg in args[1:]}
        parameters = {"type": "object", "properties": props}
        return {"type": "function", "function": {"name": args[0], "parameters": parameters}}
    return {"$unsupported": f"{name}(...)"}


def _pair(pair: Any) -> tuple[Any, Any]:
    """An ordered pair: typed ([key, value]) or with its type left out ({Key, Value})."""
    if isinstance(pair, dict):
        return pair.get("Key"), pair.get("value")
    return pair[0], pair[1]


def _typed(name: str, value: Any) -> Any:
    """The value of a literal of a type the recorder must know by name."""
    if name == "api.ThinkValue":
        return normalize(value.get(".Value")) if isinstance(value, dict) else None
    if name in ("orderedArg", "orderedProp"):
        if isinstance(value, dict):
            return [value[".Key"], normalize(value[".Value"])]
        return [value[0], normalize(value[1])]
    if "Event" in name:  # a parser event: its type, then its fields
        return {"event": name.split(".")[-1], **normalize(value or {})}
    return normalize(value)


def unsupported(value: Any) -> list[str]:
    """The Go source pieces left in a case that are not data."""
    if isinstance(value, dict):
        if "$unsupported" in value:
            return [value["$unsupported"]]
        return [text for item in value.values() for text in unsupported(item)]
    if isinstance(value, list):
        return [text for item in value for text in unsupported(item)]
    return []
