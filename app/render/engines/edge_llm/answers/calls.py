"""How Edge-LLM's generic tool parser reads the calls out of one block (or, when it found
no block, out of the whole completion): `_parse_tool_block` and its helpers at 83f5f76.

The wrapper comes off (`markup.strip_tags`); then the first reading that yields calls
wins: Muse-Glimmer's `<atem:invoke>` calls, Qwen's `<function=NAME>` calls, a payload
that loads as JSON or else as a Python literal (an object with "name", or "function" with
a "name", or a list of them, or `{"tool_calls": [...]}`), and when it loads as neither,
lines that are Python calls `name(key=value, ...)`. Only calls to the request's tools
count (and only to the forced one when tool_choice names one).

Where Edge-LLM calls Python's `json` and `ast`, so do these, catching what it catches:
what it lets through fails the request (`ServerFailure`), as it fails Edge-LLM's.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.render.engines.edge_llm.answers.markup import strip_fence, strip_tags
from app.render.engines.edge_llm.answers.simple_calls import simple_call
from app.render.engines.edge_llm.answers.tags import named_tags, quoted_tags

#: What Edge-LLM wraps arguments in when they are a string that is not JSON.
RAW = "__raw__"
#: `json.dumps(value, ensure_ascii=False)`, as Edge-LLM writes arguments, made once.
_ENCODER = json.JSONEncoder(ensure_ascii=False)
#: What Edge-LLM catches when it loads a payload (`_loads_payload`).
LOAD_ERRORS = (ValueError, SyntaxError, TypeError)


class ServerFailure(Exception):
    """An exception Edge-LLM's parser lets escape: its server then answers an error.
    A TypeError, ValueError or KeyError becomes its HTTP 400 with the exception's text
    (serving_chat.py); anything else an engine error (engine_client.py, `EngineError`)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.kind = type(error).__name__
        self.client_error = isinstance(error, TypeError | ValueError | KeyError)


def guarded(function: Callable[..., Any], *args: Any, catch: tuple[type, ...] = ()) -> Any:
    """`function(*args)`, re-raising what Edge-LLM does not catch as `ServerFailure`.
    MemoryError counts: Python's parser raises it for nesting it cannot hold."""
    try:
        return function(*args)
    except catch:
        raise
    except (TypeError, ValueError, KeyError, RecursionError, MemoryError) as error:
        raise ServerFailure(error) from None


@dataclass(frozen=True)
class Tools:
    """The request's tools as the parser sees them (`ToolConfig`)."""

    #: The declared function names, and each one's parameter types (JSON schema "type").
    types: dict[str, dict[str, str]]
    #: The function tool_choice forces, if it forces one.
    forced: str | None = None

    def allowed(self, name: str) -> bool:
        if self.forced and name != self.forced:
            return False
        return not self.types or name in self.types


def tools_of(tools: list[dict[str, Any]], forced: str | None) -> Tools:
    """`Tools` for the request's (already checked) tools."""
    types: dict[str, dict[str, str]] = {}
    for tool in tools:
        function = tool["function"]
        if function["name"] in types:
            continue  # the first tool of a name gives its types
        properties = (function.get("parameters") or {}).get("properties")
        types[function["name"]] = (
            {
                key: value["type"]
                for key, value in properties.items()
                if isinstance(value, dict) and isinstance(value.get("type"), str)
            }
            if isinstance(properties, dict)
            else {}
        )
    return Tools(types, forced)


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str
    #: The id the payload gave it, when a string (else the server makes one up).
    id: str | None = None


@dataclass
class BlockReading:
    """The calls read from a block, and what the notes say when there are none."""

    calls: list[Call] = field(default_factory=list)
    #: Names of calls found but not to one of the request's tools (or not the forced one).
    refused: list[str] = field(default_factory=list)
    #: Why the payload did not load as JSON, when it did not load at all.
    json_error: str | None = None
    #: Whether the payload loaded (as JSON or a Python literal).
    loaded: bool = False


def read_block(block: str, tools: Tools) -> BlockReading:
    """The calls of one block, in Edge-LLM's order of readings."""
    body = strip_tags(block)
    reading = BlockReading()
    for reader in (_atem_calls, _xml_calls):
        reading.calls = reader(body, tools, reading)
        if reading.calls:
            return reading
    payload = _loaded(body, reading)
    if payload is None:
        reading.calls = _python_calls(body, tools, reading)
    else:
        reading.loaded = True
        reading.calls = _payload_calls(payload, tools, reading)
    return reading


def _atem_calls(text: str, tools: Tools, reading: BlockReading) -> list[Call]:
    calls = []
    for name, body in quoted_tags(text, "<atem:invoke", "</atem:invoke>"):
        if not tools.allowed(name):
            reading.refused.append(name)
            continue
        types = tools.types.get(name, {})
        arguments = {
            key: coerce(value, types.get(key))  # the value as written, not stripped
            for key, value in quoted_tags(body, "<atem:parameter", "</atem:parameter>")
        }
        calls.append(Call(name, arguments_json(arguments)))
    return calls


def _xml_calls(text: str, tools: Tools, reading: BlockReading) -> list[Call]:
    calls = []
    for raw_name, body in named_tags(text, "<function=", "</function>"):
        name = raw_name.strip()
        if not tools.allowed(name):
            reading.refused.append(name)
            continue
        types = tools.types.get(name, {})
        arguments: dict[str, Any] = {}
        for key, value in named_tags(body, "<parameter=", "</parameter>"):
            arguments[key.strip()] = coerce(value.strip(), types.get(key.strip()))
        calls.append(Call(name, arguments_json(arguments)))
    return calls


def _loaded(text: str, reading: BlockReading) -> Any:
    """The payload as JSON, else as a Python literal; None when neither (or when it is
    null: Edge-LLM cannot tell the two apart)."""
    body = strip_fence(text)
    try:
        return guarded(json.loads, body, catch=LOAD_ERRORS)
    except LOAD_ERRORS as error:
        reading.json_error = str(error)
    try:
        return guarded(ast.literal_eval, body, catch=LOAD_ERRORS)
    except LOAD_ERRORS:
        return None


def _payload_calls(payload: Any, tools: Tools, reading: BlockReading) -> list[Call]:
    if isinstance(payload, dict) and isinstance(payload.get("tool_calls"), list):
        payload = payload["tool_calls"]
    items = [payload] if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        return []
    calls = []
    for item in items:
        if isinstance(item, dict) and (call := _call_of(item, tools, reading)) is not None:
            calls.append(call)
    return calls


def _call_of(data: dict, tools: Tools, reading: BlockReading) -> Call | None:
    function = data.get("function")
    if isinstance(function, dict):
        name, arguments = function.get("name"), function.get("arguments", {})
    else:
        name = data.get("name")
        arguments = data.get("arguments", data.get("parameters", {}))
    if not isinstance(name, str):
        return None
    if not tools.allowed(name):
        reading.refused.append(name)
        return None
    given = data.get("id")
    return Call(name, arguments_json(arguments), given if isinstance(given, str) else None)


def _python_calls(text: str, tools: Tools, reading: BlockReading) -> list[Call]:
    """Lines `name(args)` (a trailing comma allowed), read as Python calls: a plain line
    by `simple_call`, to what the full reading gives."""
    calls = []
    for line in text.strip().splitlines():
        if (simple := simple_call(line)) is not None:
            name, arguments = simple
        elif (found := python_call(line)) is not None:
            name, arguments = found[0], None
        else:
            continue
        if not tools.allowed(name):
            reading.refused.append(name)
            continue
        if arguments is None:
            arguments = arguments_json(python_arguments(found[1]))
        calls.append(Call(name, arguments))
    return calls


#: A Python name as Edge-LLM's call lines allow it (ASCII), at the start of a call.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def python_call(line: str) -> tuple[str, str] | None:
    """`(name, arguments source)` when the line matches
    `\\s*([A-Za-z_][A-Za-z0-9_]*)\\((.*)\\)\\s*,?\\s*$`: the arguments run to the
    line's last ")", after which only whitespace and one comma may come."""
    at = len(line) - len(line.lstrip())
    name = _NAME.match(line, at)
    end = name.end() if name else at
    if name is None or not line.startswith("(", end):
        return None
    close = line.rfind(")")
    if close <= end or line[close + 1 :].strip() not in ("", ","):
        return None
    return line[at:end], line[end + 1 : close]


def python_arguments(source: str) -> dict[str, Any]:
    """The keyword arguments of the Python call `f(SOURCE)`: each value a Python literal,
    else its source as Python writes it back; `{"__raw__": SOURCE}` when it is no call."""
    try:
        tree = guarded(ast.parse, f"f({source})", "<unknown>", "eval", catch=(SyntaxError,))
    except SyntaxError:
        return {RAW: source}
    if not isinstance(tree.body, ast.Call):
        return {RAW: source}
    arguments: dict[str, Any] = {}
    for keyword in tree.body.keywords:
        if keyword.arg is None:
            continue  # **kwargs
        try:
            arguments[keyword.arg] = guarded(ast.literal_eval, keyword.value, catch=(ValueError,))
        except ValueError:
            arguments[keyword.arg] = guarded(ast.unparse, keyword.value)
    return arguments


def coerce(value: str, kind: str | None) -> Any:
    """An XML parameter's text as its schema type says (`_coerce_param`); the text as
    given when the type is another or the conversion fails."""
    text = value.strip()
    try:
        if kind == "integer":
            return guarded(int, text, catch=(ValueError,))
        if kind == "number":
            number = guarded(float, text, catch=(ValueError,))
            return int(number) if number.is_integer() else number
        if kind == "boolean":
            return text.lower() in ("true", "1", "yes")
        if kind in ("array", "object"):
            return guarded(json.loads, text, catch=(ValueError,))
    except ValueError:
        return value
    return value


def arguments_json(arguments: Any) -> str:
    """The arguments as the API sends them (`_arguments_to_json`): a string that is JSON
    as it is, another string as `{"__raw__": ...}`, anything else through `json.dumps`
    (an empty or false value as `{}`)."""
    if isinstance(arguments, str):
        try:
            guarded(json.loads, arguments, catch=(ValueError,))
        except ValueError:
            return json.dumps({RAW: arguments}, ensure_ascii=False)
        return arguments
    return guarded(_ENCODER.encode, arguments or {})
