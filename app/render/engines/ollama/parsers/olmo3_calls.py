"""The function calls Ollama's olmo3 parser reads inside `<function_calls>`, one a line:
`name(k="v", n=1, xs=[1, 2], o={"a": 1})` (model/parsers/olmo3.go at ollama/ollama
fb30760: parseOlmo3FunctionCalls and its helpers).

A value is a quoted string (its \\\\, \\", \\', \\n, \\t, \\r undone), `true`/`True`,
`false`/`False`, `null`/`None`/`nil`, a Go integer (int64) or float, a `[...]` list or
`{k: v}` object of such values, else the text as it is.
"""

from __future__ import annotations

import re
from typing import Any

from app.render.engines.ollama.parsers.lfm2_calls import go_number
from app.render.engines.ollama.parsers.message import trim_left, trim_right
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

#: Go's `^(\w+)\((.*)\)$`: \w is ASCII, `.` no newline.
CALL = re.compile(r"([0-9A-Za-z_]+)\(([^\n]*)\)")
ESCAPES = (("\\\\", "\x00"), ('\\"', '"'), ("\\'", "'"), ("\\n", "\n"), ("\\t", "\t"))
ESCAPES += (("\\r", "\r"), ("\x00", "\\"))


def _trim(text: str) -> str:
    """strings.TrimSpace."""
    return trim_left(trim_right(text))


def split(text: str) -> list[str]:
    """splitArguments: split at commas outside quotes and brackets."""
    parts, current, depth, quote, escaped = [], [], 0, "", False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\" and quote:
            escaped = True
        elif ch in "\"'" and not quote:
            quote = ch
        elif ch == quote:
            quote = ""
        elif not quote and ch in "([{":
            depth += 1
        elif not quote and ch in ")]}":
            depth -= 1
        elif not quote and ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if current:
        parts.append("".join(current))
    return parts


def _quoted(text: str) -> bool:
    """Whether text starts and ends with the same quote."""
    return any(text.startswith(q) and text.endswith(q) for q in "\"'")


def value(text: str) -> Any:
    """parseOlmo3Value."""
    text = _trim(text)
    if _quoted(text):
        inner = text[1:-1]
        for old, new in ESCAPES:
            inner = inner.replace(old, new)
        return inner
    words = {"true": True, "True": True, "false": False, "False": False}
    if text in words:
        return words[text]
    if text in ("null", "None", "nil"):
        return None
    number = go_number(text)
    if number is not None:
        return number
    if text.startswith("[") and text.endswith("]"):
        inner = _trim(text[1:-1])
        return [value(part) for part in split(inner)] if inner else []
    if text.startswith("{") and text.endswith("}"):
        return _object(text[1:-1])
    return text


def _pairs(text: str, sep: str, what: str) -> list[tuple[str, str]]:
    """The `key<sep>value` parts of text (empty parts skipped), split at the first sep."""
    pairs = []
    for part in split(_trim(text)):
        part = _trim(part)
        if not part:
            continue
        if sep not in part:
            raise ToolCallError(f"invalid {what}: {part}")
        key, raw = part.split(sep, 1)
        pairs.append((_trim(key), raw))
    return pairs


def _object(text: str) -> dict[str, Any]:
    """parseOlmo3Object: `key: value` entries (a key's quotes dropped)."""
    return {(k[1:-1] if _quoted(k) else k): value(v) for k, v in _pairs(text, ":", "object entry")}


def arguments(text: str) -> dict[str, Any]:
    """parseOlmo3Arguments: `key=value` parts."""
    return {key: value(raw) for key, raw in _pairs(text, "=", "argument format")}


def parse_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """parseOlmo3FunctionCalls: a call per non-empty line; any bad line fails them all."""
    calls = []
    for line in _trim(text).split("\n"):
        line = _trim(line)
        if not line:
            continue
        match = CALL.fullmatch(line)
        if match is None:
            raise ToolCallError(f"failed to parse function call {line!r}")
        calls.append((match[1], arguments(match[2])))
    return calls
