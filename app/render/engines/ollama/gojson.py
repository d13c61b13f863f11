"""Go's `encoding/json` and `fmt` `%v` for the values Ollama's renderers print.

Ollama's renderers write tool schemas and arguments with `json.Marshal` and, for
plain values, `fmt.Sprintf("%v")` (read at ollama/ollama fb30760). Go's output differs
from Python's `json.dumps`: no spaces, `<`, `>`, `&` escaped as `\\u003c` ..., the keys of
a plain map sorted (Ollama's ordered maps, arguments and properties, keep their order),
floats in shortest form without a trailing `.0`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES |= {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_ESCAPES |= {"\u2028": "\\u2028", "\u2029": "\\u2029"}


def string(text: str) -> str:
    """A Go JSON string literal (HTML-safe, as `json.Marshal` writes it)."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _digits(number: float) -> tuple[str, int]:
    """The shortest decimal digits of `number` and the exponent of its first digit."""
    _, digits, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    text = "".join(map(str, digits))
    return text, len(text) + int(exponent) - 1


def _exponent_form(digits: str, exp: int, negative: bool) -> str:
    """Go's `%e`-style shortest form: 1.5e+06, 1e-07."""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return ("-" if negative else "") + f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _plain_form(digits: str, exp: int, negative: bool) -> str:
    """The shortest form without an exponent: 1500000, 0.000015."""
    if exp >= 0:
        whole = digits[: exp + 1].ljust(exp + 1, "0")
        frac = digits[exp + 1 :]
    else:
        whole, frac = "0", "0" * (-exp - 1) + digits
    return ("-" if negative else "") + whole + ("." + frac if frac else "")


def number(value: float) -> str:
    """A float as `json.Marshal` writes it (exponent below 1e-6 and from 1e21)."""
    if value == 0:
        return "0"
    digits, exp = _digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = _exponent_form(digits, exp, value < 0)
        return text.replace("e-0", "e-").replace("e+0", "e+")
    return _plain_form(digits, exp, value < 0)


def marshal(value: Any, keep_order: bool = False) -> str:
    """`json.Marshal` of decoded JSON data; `keep_order` for an ordered map at the top."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, dict):
        keys = list(value) if keep_order else sorted(value)
        return "{" + ",".join(f"{string(k)}:{marshal(value[k])}" for k in keys) + "}"
    return "[" + ",".join(marshal(item) for item in value) + "]"


def sprint(value: Any) -> str:
    """`fmt.Sprintf("%v", value)` for decoded JSON data."""
    if value is None:
        return "<nil>"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float):
        if value == 0:
            return "0"
        digits, exp = _digits(value)
        # %v is %g with the shortest digits: an exponent below 1e-4 and from 1e6.
        if exp < -4 or exp >= 6:
            return _exponent_form(digits, exp, value < 0)
        return _plain_form(digits, exp, value < 0)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint(item) for item in value) + "]"
    return str(value)


def _property(prop: dict[str, Any]) -> str:
    """An api.ToolProperty as Go writes it: its fields in order, empty ones left out."""
    parts = []
    if prop.get("anyOf"):
        parts.append('"anyOf":[' + ",".join(_property(p) for p in prop["anyOf"]) + "]")
    kind = prop.get("type")
    if kind:
        kind = [kind] if isinstance(kind, str) else kind
        parts.append('"type":' + marshal(kind[0] if len(kind) == 1 else kind))
    for key in ("items", "description", "enum"):
        if prop.get(key) not in (None, "", []):
            parts.append(f'"{key}":' + marshal(prop[key]))
    if prop.get("properties") is not None:
        parts.append('"properties":' + properties(prop["properties"]))
    if prop.get("required"):
        parts.append('"required":' + marshal(prop["required"]))
    return "{" + ",".join(parts) + "}"


def properties(props: dict[str, Any] | None) -> str:
    """An api.ToolPropertiesMap: in its order, `null` when it is not there."""
    if props is None:
        return "null"
    return "{" + ",".join(f"{string(k)}:{_property(v)}" for k, v in props.items()) + "}"


def parameters(params: dict[str, Any] | None) -> str:
    """An api.ToolFunctionParameters as Go writes it."""
    params = params or {}
    parts = ['"type":' + string(params.get("type", ""))]
    for key in ("$defs", "items"):
        if params.get(key) is not None:
            parts.append(f'"{key}":' + marshal(params[key]))
    if params.get("required"):
        parts.append('"required":' + marshal(params["required"]))
    parts.append('"properties":' + properties(params.get("properties")))
    return "{" + ",".join(parts) + "}"


def function(value: dict[str, Any]) -> str:
    """An api.ToolFunction as Go writes it (the description left out when empty)."""
    body = '"name":' + string(value.get("name", ""))
    if value.get("description"):
        body += ',"description":' + string(value["description"])
    return "{" + body + ',"parameters":' + parameters(value.get("parameters")) + "}"


def tool(value: dict[str, Any]) -> str:
    """An api.Tool as Go writes it."""
    head = '{"type":' + string(value.get("type", ""))
    if value.get("items") is not None:
        head += ',"items":' + marshal(value["items"])
    return head + ',"function":' + function(value.get("function", {})) + "}"


def spaced(raw: str) -> str:
    """Go JSON with a space after every `:` and `,` outside strings (Ollama's
    marshalWithSpaces, and HF's `tojson` separators that some renderers copy)."""
    out, in_string, escaped = [], False, False
    for ch in raw:
        out.append(ch)
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in ":,":
            out.append(" ")
    return "".join(out)


_HTML = {"\\u003c": "<", "\\u003e": ">", "\\u0026": "&"}


def unescape_html(raw: str) -> str:
    """Go JSON as an Encoder with SetEscapeHTML(false) writes it: `<`, `>`, `&` kept
    (U+2028 and U+2029 stay escaped, as Go always escapes them)."""
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\":
            pair = raw[i : i + 6]
            out.append(_HTML.get(pair, raw[i : i + 2]))
            i += 6 if pair in _HTML else 2
            continue
        out.append(raw[i])
        i += 1
    return "".join(out)


def think_bool(think: bool | str | None) -> bool:
    """api.ThinkValue.Bool: true, or a level ("high", "medium", "low", "max")."""
    if isinstance(think, str):
        return think in ("high", "medium", "low", "max")
    return think is True
