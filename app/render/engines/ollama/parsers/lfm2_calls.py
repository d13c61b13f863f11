"""The Python-style tool calls Ollama's lfm2 parser reads (`[name(k='v', n=1), other()]`,
model/parsers/lfm2.go at ollama/ollama fb30760: parseToolCallsContent and its helpers).

A value is a quoted string (its escapes kept as written), else a token up to the next
comma outside brackets and quotes: `true`/`True`, `false`/`False`, `null`/`None`, a
Go integer (int64) or float, a JSON list or object (Python's quotes and constants
turned into JSON first if need be, numbers then floats as Go decodes them), else the
token as text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.render.engines.ollama.parsers.message import is_space, trim_left, trim_right
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

CALL_OPEN, CALL_CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
    r"|(?i:inf|infinity|nan))"
)


def _trim(text: str) -> str:
    """strings.TrimSpace."""
    return trim_left(trim_right(text))


def _go_json(text: str) -> Any:
    """json.Unmarshal into `any`: numbers as floats, no NaN or Infinity."""

    def refuse(name: str) -> None:
        raise ValueError(f"invalid character in {name}")

    return json.loads(text, parse_int=float, parse_constant=refuse)


def go_number(token: str) -> Any:
    """strconv.ParseInt(token, 10, 64), else ParseFloat(token, 64), else None."""
    if _INT.fullmatch(token) and -(2**63) <= int(token) < 2**63:
        return int(token)
    if _FLOAT.fullmatch(token):
        value = float.fromhex(token) if "x" in token.lower() else float(token)
        if value not in (float("inf"), float("-inf")) or "n" in token.lower():
            return value  # an overflow is an error to Go; a written "Inf" is not
    return None


def _in_string(ch: str, quote: str, escaped: bool) -> tuple[str, bool]:
    """Inside a quoted string, after `ch`: (the quote still open, or "" once closed;
    whether the next character is escaped)."""
    if escaped:
        return quote, False
    if ch == "\\":
        return quote, True
    return ("" if ch == quote else quote), False


def python_to_json(text: str) -> str:
    """pythonLiteralToJSON: quotes made double, True/False/None outside strings as JSON."""
    out, quote, escaped, i = [], "", False, 0
    while i < len(text):
        ch = text[i]
        if quote:
            after, was_escaped = _in_string(ch, quote, escaped), escaped
            escaped = after[1]
            if not after[0]:
                ch = '"'  # the closing quote, made double
            elif quote == "'" and ch == '"' and not was_escaped:
                ch = '\\"'
            out.append(ch)
            quote = after[0]
        elif ch in "'\"":
            quote = ch
            out.append('"')
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            j = i + 1
            while j < len(text) and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append({"True": "true", "False": "false", "None": "null"}.get(word, word))
            i = j - 1
        else:
            out.append(ch)
        i += 1
    if quote:
        raise ToolCallError("unterminated string")
    return "".join(out)


def literal(token: str) -> Any:
    """parsePythonLiteral."""
    words = {"": "", "true": True, "True": True, "false": False, "False": False}
    if token in words:
        return words[token]
    if token in ("null", "None"):
        return None
    number = go_number(token)
    if number is not None:
        return number
    if token.startswith(("[", "{")):
        for convert in (lambda t: t, python_to_json):
            try:
                return _go_json(convert(token))
            except ValueError:
                continue
    return token


def _quoted(text: str, i: int) -> tuple[str, int]:
    """A quoted string starting at i: its body as written, and the index after it."""
    quote, i = text[i], i + 1
    start = i
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text[i] == quote:
            return text[start:i], i + 1
        i += 1
    raise ToolCallError("invalid argument: unterminated string")


def value(text: str, i: int) -> tuple[Any, int]:
    """parsePythonArgValue: the value starting at i, and where it ends."""
    if text[i] in "'\"":
        return _quoted(text, i)
    start, depth, quote, escaped = i, {"(": 0, "[": 0, "{": 0}, "", False
    closers = {")": "(", "]": "[", "}": "{"}
    while i < len(text):
        ch = text[i]
        if quote:
            quote, escaped = _in_string(ch, quote, escaped)
        elif ch in "'\"":
            quote = ch
        elif ch in depth:
            depth[ch] += 1
        elif ch in closers:
            depth[closers[ch]] = max(0, depth[closers[ch]] - 1)
        elif ch == "," and not any(depth.values()):
            break
        i += 1
    return literal(_trim(text[start:i])), i


def arguments(text: str) -> dict[str, Any]:
    """parsePythonArgs: `key=value` pairs separated by commas (a key set twice keeps its
    first place and its last value)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(text):
        while i < len(text) and (text[i] == "," or is_space(text[i])):
            i += 1
        if i >= len(text):
            break
        start = i
        while i < len(text) and text[i] not in "=,":
            i += 1
        if i >= len(text) or text[i] != "=":
            raise ToolCallError("invalid argument: expected '='")
        key = _trim(text[start:i])
        if not key:
            raise ToolCallError("invalid argument: empty key")
        i += 1
        while i < len(text) and is_space(text[i]):
            i += 1
        if i >= len(text):
            raise ToolCallError("invalid argument: missing value")
        out[key], i = value(text, i)
        if i < len(text) and text[i] == ",":
            i += 1
    return out


def matching_paren(text: str, open_at: int) -> int:
    """findMatchingParen: the `)` closing the `(` at open_at (quotes skipped), or -1."""
    depth, i = 1, open_at + 1
    while i < len(text) and depth > 0:
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch in "'\"":
            i += 1
            while i < len(text) and text[i] != ch:
                i += 2 if text[i] == "\\" and i + 1 < len(text) else 1
        i += 1
    return -1


def parse_calls(content: str) -> list[tuple[str, dict[str, Any]]]:
    """parseToolCallsContent: the calls, or ToolCallError."""
    content = _trim(_trim(content).removeprefix(CALL_OPEN))
    content = _trim(_trim(content.removesuffix(CALL_CLOSE)))
    if content.startswith("[") and content.endswith("]"):
        content = content[1:-1]
    calls = []
    while content:
        content = _trim(content)
        if content.startswith(","):
            content = _trim(content[1:])
        if not content:
            break
        paren = content.find("(")
        if paren == -1:
            raise ToolCallError("invalid tool call: no opening parenthesis")
        name = _trim(content[:paren])
        if not name:
            raise ToolCallError("invalid tool call: empty function name")
        close = matching_paren(content, paren)
        if close == -1:
            raise ToolCallError("invalid tool call: no matching closing parenthesis")
        inside = content[paren + 1 : close]
        calls.append((name, arguments(inside) if inside else {}))
        content = content[close + 1 :]
    if not calls:
        raise ToolCallError("no tool calls found")
    return calls
