"""The content parsers and transforms of transformers' response templates (5.23.0).

Each region's text becomes a value: `text` (stripped unless `strip` is false), `int`,
`float`, `bool`, `json` (with knobs for quirky model JSON: bare keys, custom string
quotes, text kept when it is not JSON), `xml-inline` (`<key>value</key>`-like pairs
found by a pattern with `key` and `value` groups) and `kv-lines` (`key: value` lines).
A `transform` puts the value (`{content}`) and the delimiters' named groups into a
shape (`{"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}`).
With tools, string arguments are cast to the types their parameters declare.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Markers transformers swaps custom-quoted strings for while it rewrites JSON.
LAX_OPEN, LAX_CLOSE = "\x01", "\x02"
PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")


def _text(text: str, args: dict) -> str:
    return text.strip() if args.get("strip", True) else text


#: A string taken out by `_take_strings`, as it stands in the text meanwhile.
_MARKER = re.compile(f"{LAX_OPEN}([0-9]+){LAX_CLOSE}")


def _json(text: str, args: dict) -> Any:
    delims = args.get("string_delims", [])
    if delims and (LAX_OPEN in text or LAX_CLOSE in text):
        raise ValueError(
            "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse safely."
        )
    working, captured = text, []
    for open_d, close_d in delims:
        working = _take_strings(working, open_d, close_d, captured)
    if args.get("unquoted_keys", False):
        working = re.sub(r"(?<=[{,])(\w+):", r'"\1":', working)
    # Each marker once, as JSON text (transformers rewrites the whole text once per
    # string, which is quadratic; a string's JSON text never holds a marker, so one
    # pass gives the same text).
    if captured:
        working = _MARKER.sub(lambda m: json.dumps(captured[int(m[1])]), working)
    try:
        return json.loads(working)
    except json.JSONDecodeError as error:
        if args.get("allow_non_json"):
            return _text(text, args)
        if working == text:
            raise ValueError(
                f"json parser could not parse region as JSON.\nContent: {text!r}\nError: {error}"
            ) from None
        raise ValueError(
            "json: could not parse after dialect transforms.\n"
            f"Original: {text!r}\nTransformed: {working!r}\nError: {error}"
        ) from None


def _take_strings(text: str, open_d: str, close_d: str, captured: list[str]) -> str:
    """`re.sub(escape(open_d) + "(.*?)" + escape(close_d), marker, text, flags=DOTALL)` as
    transformers writes it, each string taken out into `captured` and a marker left in its
    place, in linear time: the regular expression searches the rest of the text from every
    opener that has no closer after it, which is quadratic. With `str.find` the same
    leftmost matches: once a closer is missing after an opener, it is missing after every
    later one too, so the search stops."""
    pattern = re.escape(open_d) + r"(.*?)" + re.escape(close_d)  # its errors, for bad delims
    if not open_d and not close_d:
        return re.sub(pattern, lambda m: _marker(m[1], captured), text, flags=re.DOTALL)
    pieces, position = [], 0
    while (start := text.find(open_d, position)) >= 0:
        end = text.find(close_d, start + len(open_d))
        if end < 0:
            break
        pieces += [text[position:start], _marker(text[start + len(open_d) : end], captured)]
        position = end + len(close_d)
    return "".join(pieces) + text[position:]


def _marker(string: str, captured: list[str]) -> str:
    captured.append(string)
    return f"{LAX_OPEN}{len(captured) - 1}{LAX_CLOSE}"


def _sub_parse(raw: str, value_parser: dict | None) -> Any:
    if value_parser is None:
        return raw
    return parse_content(raw, value_parser.get("name", "text"), value_parser.get("args", {}))


def _xml_inline(text: str, args: dict) -> dict:
    pattern = args.get("tag_pattern")
    if pattern is None:
        raise ValueError("xml-inline: 'tag_pattern' content_arg is required")
    out: dict[str, Any] = {}
    for match in re.finditer(pattern, text, flags=re.DOTALL):
        groups = match.groupdict()
        if (key := groups.get("key")) is None:
            raise ValueError(
                f"xml-inline: tag_pattern must have a named group 'key'. Pattern: {pattern}"
            )
        value = _sub_parse(groups.get("value", ""), args.get("value_parser"))
        if key in out and args.get("merge_duplicates", False):
            if not isinstance(out[key], list):
                out[key] = [out[key]]
            out[key].append(value)
        else:
            out[key] = value
    return out


def _kv_lines(text: str, args: dict) -> dict:
    kv_sep = args.get("kv_sep", ":")
    out: dict[str, Any] = {}
    for line in text.split(args.get("line_sep", "\n")):
        line = _text(line, args)
        if line and kv_sep in line:
            key, value = line.split(kv_sep, 1)
            out[_text(key, args)] = _sub_parse(_text(value, args), args.get("value_parser"))
    return out


CONTENT_PARSERS = {
    "text": _text,
    "int": lambda text, args: int(_text(text, args)),
    "float": lambda text, args: float(_text(text, args)),
    "bool": lambda text, args: _text(text, args).lower() in ("true", "1"),
    "json": _json,
    "xml-inline": _xml_inline,
    "kv-lines": _kv_lines,
}


def parse_content(text: str, name: str, args: dict) -> Any:
    """`text` through the content parser `name`."""
    return CONTENT_PARSERS[name](text, args)


def _apply(transform: Any, scope: dict) -> Any:
    if isinstance(transform, dict):
        return {k: _apply(v, scope) for k, v in transform.items()}
    if isinstance(transform, list):
        return [_apply(v, scope) for v in transform]
    if not isinstance(transform, str) or not (whole := PLACEHOLDER.fullmatch(transform)):
        return transform
    path = whole.group(1)
    root, *keys = path.split(".")
    if root not in scope:
        raise KeyError(
            f"transform placeholder '{{{path}}}' is not defined. Available: {sorted(scope)}"
        )
    value = scope[root]
    for key in keys:
        if not isinstance(value, dict):
            kind = type(value).__name__
            raise ValueError(
                f"transform placeholder '{{{path}}}' cannot index into {kind} at '{key}'"
            )
        if key not in value:
            available = sorted(value)
            raise ValueError(
                f"transform placeholder '{{{path}}}' is missing key '{key}'. Available: {available}"
            )
        value = value[key]
    return value


def validate_transform(scope: str, transform: Any) -> None:
    """Refuse a transform string that mixes a `{placeholder}` with literal text."""
    if isinstance(transform, dict):
        transform = list(transform.values())
    if isinstance(transform, list):
        for value in transform:
            validate_transform(scope, value)
    elif (
        isinstance(transform, str)
        and PLACEHOLDER.search(transform)
        and not PLACEHOLDER.fullmatch(transform)
    ):
        raise ValueError(
            f"{scope}: transform string {transform!r} mixes a {{placeholder}} with literal text. "
            'Use either a whole-string placeholder (e.g. "{content}") or a plain literal; '
            "string interpolation is not supported."
        )


def process_field(body: str, field: Any, captures: dict) -> Any:
    """A region's value: its content parsed, then transformed (each item, with
    `transform_each`)."""
    value = parse_content(body, field.content, field.content_args)
    if field.transform is None:
        return value
    if not field.transform_each:
        return _apply(field.transform, {**captures, "content": value})
    if not isinstance(value, list):
        raise ValueError(
            f"Field '{field.name}': transform_each requires the parsed content to be a list, "
            f"got {type(value).__name__}."
        )
    out = []
    for item in value:
        if not isinstance(item, dict):
            raise ValueError(
                f"Field '{field.name}': transform_each requires each list element to be a dict, "
                f"got {type(item).__name__}."
            )
        out.append(_apply(field.transform, {**captures, **item}))
    return out


def _types(schema: Any) -> tuple[str, ...]:
    if not isinstance(schema, dict):
        return ()
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else []
    if isinstance(declared, list):
        types += [t for t in declared if isinstance(t, str)]
    for union in ("anyOf", "oneOf"):
        for choice in schema.get(union) or []:
            types += _types(choice)
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    return tuple(types)


def _coerce(raw: str, types: tuple[str, ...]) -> Any:
    for kind in types:
        try:
            if kind == "integer":
                try:
                    return int(raw)
                except ValueError:
                    number = float(raw)  # whole numbers written as floats count ("3.0")
                    if number.is_integer():
                        return int(number)
                    continue
            if kind == "number":
                number = float(raw)
                if number != number or number in (float("inf"), float("-inf")):
                    continue
                return int(number) if number.is_integer() and "." not in raw else number
            if kind == "boolean" and raw.strip().lower() in ("true", "1", "false", "0"):
                return raw.strip().lower() in ("true", "1")
            if kind == "null" and raw.strip() in ("null", "None"):
                return None
            if kind in ("object", "array"):
                decoded = json.loads(raw)
                if isinstance(decoded, dict if kind == "object" else list):
                    return decoded
        except ValueError:
            continue
    return raw


def coerce_tool_calls(value: Any, params: dict[str, dict]) -> Any:
    """Tool calls with string arguments cast to their parameters' declared types."""
    if isinstance(value, list):
        return [coerce_tool_calls(item, params) for item in value]
    fn = value.get("function") if isinstance(value, dict) else None
    if not isinstance(fn, dict):
        return value
    name, arguments = fn.get("name"), fn.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return value
    if properties := params.get(name):
        for key, argument in arguments.items():
            if key not in properties or not (types := _types(properties[key])):
                continue
            if isinstance(argument, str):
                arguments[key] = _coerce(argument, types)
            elif isinstance(argument, list) and "array" not in types:
                arguments[key] = [_coerce(a, types) if isinstance(a, str) else a for a in argument]
    return value
