"""Gemma 4's tool-call arguments to JSON, and Ollama's repairs of broken ones
(gemma4ArgsToJSON and repairGemma4* in model/parsers/gemma4.go at ollama/ollama
fb30760).

Gemma writes `{key:<|"|>text<|"|>,n:3}`: strings between `<|"|>`, keys bare. Ollama
turns that into JSON (the strings set aside, the bare keys quoted, the strings put
back JSON-encoded); when that does not decode, it tries repaired texts: single-quoted
values, an odd `<|"|>` closed, a missing `}` added, and a string property's raw value
quoted up to the next known key.
"""

from __future__ import annotations

import re
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers.message import is_space, trim_left, trim_right

Q = '<|"|>'
_QUOTED = re.compile(r'<\|"\|>(.*?)<\|"\|>', re.DOTALL)


def _word(ch: str) -> bool:
    """`_`, a letter or a digit (Go's unicode.IsLetter, unicode.IsDigit)."""
    return ch == "_" or ch.isalpha() or ch.isdecimal()


def skip_space(s: str, i: int) -> int:
    """The index of the first non-space at or after i."""
    while i < len(s) and is_space(s[i]):
        i += 1
    return i


def json_string_end(s: str, start: int) -> int:
    """The index after the JSON string starting at `start` ("), or -1."""
    escaped = False
    for i in range(start + 1, len(s)):
        if s[i] == '"' and not escaped:
            return i + 1
        escaped = s[i] == "\\" and not escaped
    return -1


def _copy_json_string(s: str, i: int, out: list[str]) -> int:
    """Copy the JSON string at i (if one starts there) to `out`: the index after it, or i."""
    end = json_string_end(s, i) if s[i] == '"' else -1
    if end == -1:
        return i
    out.append(s[i:end])
    return end


def quote_bare_keys(s: str) -> str:
    """Quote each bare key after `{` or `,` that a `:` follows."""
    out: list[str] = []
    i = 0
    while i < len(s):
        if (after := _copy_json_string(s, i, out)) != i:
            i = after
            continue
        out.append(s[i])
        i += 1
        if s[i - 1] not in "{,":
            continue
        start = i
        i = skip_space(s, i)
        out.append(s[start:i])
        key_end = i
        while key_end < len(s) and _word(s[key_end]):
            key_end += 1
        if i < key_end < len(s) and s[key_end] == ":":
            out.append(f'"{s[i:key_end]}":')
            i = key_end + 1
    return "".join(out)


def args_to_json(s: str) -> str:
    """gemma4ArgsToJSON: Gemma's argument text as JSON text."""
    strings: list[str] = []

    def aside(match: re.Match[str]) -> str:
        strings.append(match.group(1))
        return "\x00" + chr(len(strings) - 1) + "\x00"

    text = quote_bare_keys(_QUOTED.sub(aside, s))
    for i, value in enumerate(strings):
        text = text.replace("\x00" + chr(i) + "\x00", gojson.string(value))
    return text


def _right_space_index(s: str) -> int:
    """The length of `s` without its trailing space."""
    return len(trim_right(s))


def missing_string_delimiter(s: str) -> str:
    """Close an odd `<|"|>` before the closing bracket at the end."""
    if s.count(Q) % 2 == 0:
        return s
    at = _right_space_index(s)
    if at > 0 and s[at - 1] in "}]":
        at -= 1
    return s[:at] + Q + s[at:]


def missing_object_close(s: str) -> str:
    """Add the `}` an object that starts with `{` lacks at its end."""
    if not trim_left(s).startswith("{"):
        return s
    end = _right_space_index(s)
    if end > 0 and s[end - 1] == "}":
        return s
    return s[:end] + "}" + s[end:]


def _single_quoted(s: str, start: int) -> tuple[str, int] | None:
    """The text of a '...' value at `start` and the index after it, or None."""
    out, escaped = [], False
    for i in range(start + 1, len(s)):
        if s[i] == "'" and not escaped:
            return "".join(out), i + 1
        out.append(s[i])
        escaped = s[i] == "\\" and not escaped
    return None


def single_quoted_values(s: str) -> str:
    """Turn `key:'value'` into `key:<|"|>value<|"|>` (quoted strings left alone)."""
    out, i = [], 0
    while i < len(s):
        if s.startswith(Q, i):
            end = s.find(Q, i + len(Q))
            if end == -1:
                out.append(s[i:])
                break
            out.append(s[i : end + len(Q)])
            i = end + len(Q)
            continue
        if (after := _copy_json_string(s, i, out)) != i:
            i = after
            continue
        out.append(s[i])
        i += 1
        if s[i - 1] != ":":
            continue
        space_end = skip_space(s, i)
        out.append(s[i:space_end])
        i = space_end
        found = _single_quoted(s, i) if i < len(s) and s[i] == "'" else None
        if found is None:
            continue
        out.append(Q + found[0] + Q)
        i = found[1] + (len(Q) if s.startswith(Q, found[1]) else 0)
    return "".join(out)


def accepts_string(prop: dict[str, Any]) -> bool:
    """Whether a tool property's type (or one of its anyOf) is string."""
    kinds = prop.get("type") or []
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if any(k.lower() == "string" for k in kinds):
        return True
    return any(accepts_string(branch) for branch in prop.get("anyOf") or [])


def _value_start(s: str, key: str, start: int) -> int:
    """The index after `key:` (following `{` or `,`, outside strings), or -1."""
    i = start
    while i < len(s):
        if s.startswith(Q, i):
            end = s.find(Q, i + len(Q))
            if end == -1:
                return -1
            i = end + len(Q)
            continue
        end = json_string_end(s, i) if s[i] == '"' else -1
        if end != -1:
            i = end
            continue
        if s[i] in "{,":
            key_start = skip_space(s, i + 1)
            if s.startswith(key, key_start):
                colon = skip_space(s, key_start + len(key))
                if colon < len(s) and s[colon] == ":":
                    return colon + 1
        i += 1
    return -1


def _structured(s: str, pos: int) -> bool:
    """Whether a value at `pos` is quoted, an object, a list or a JSON literal."""
    if pos >= len(s):
        return False
    return s.startswith(Q, pos) or s[pos] in "'\"{[-0123456789tfn"


def _raw_value_end(s: str, start: int, props: dict[str, Any]) -> int:
    """Where a raw string value ends: before `,known_key:`, else before a final `}`."""
    for i in range(start, len(s)):
        if s[i] != ",":
            continue
        key_start = key_end = skip_space(s, i + 1)
        while key_end < len(s) and _word(s[key_end]):
            key_end += 1
        colon = skip_space(s, key_end)
        is_key = key_end > key_start and colon < len(s) and s[colon] == ":"
        if is_key and s[key_start:key_end] in props:
            return i
    end = _right_space_index(s)
    return end - 1 if end > start and s[end - 1] == "}" else len(s)


def raw_terminal_string_value(s: str, tool: str, tools: list[dict[str, Any]]) -> str | None:
    """Quote the raw value of the first string property that has one, or None."""
    fn = next((t["function"] for t in tools if t.get("function", {}).get("name") == tool), None)
    props = (fn or {}).get("parameters", {}).get("properties") if fn else None
    if props is None:
        return None
    for key, prop in props.items():
        if not accepts_string(prop):
            continue
        start = 0
        while start < len(s):
            value = _value_start(s, key, start)
            if value == -1:
                break
            if _structured(s, skip_space(s, value)):
                start = value
                continue
            end = _raw_value_end(s, value, props)
            return s[:value] + Q + s[value:end] + Q + s[end:]
    return None


def repair_candidates(s: str, tool: str, tools: list[dict[str, Any]]) -> list[str]:
    """The repaired texts Ollama tries, in order, each once."""
    out: list[str] = []

    def add(candidate: str, allow_close: bool) -> None:
        original = candidate
        candidate = missing_string_delimiter(single_quoted_values(candidate))
        if allow_close or candidate != original:
            candidate = missing_object_close(candidate)
        if candidate not in out:
            out.append(candidate)

    add(s, False)
    raw = raw_terminal_string_value(s, tool, tools)
    if raw is not None:
        add(raw, True)
    return out
