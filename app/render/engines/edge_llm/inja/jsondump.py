"""JSON text as Edge-LLM's `tojson` callback writes it.

Two writers: Edge-LLM's own `jsonString` (Python's `json.dumps` spacing by default,
`", "` and `": "`, or the separators a template passes) and nlohmann's `dump(indent)`,
which `tojson(indent=n)` uses. Both keep the objects' key order, write numbers as nlohmann
does and escape strings as nlohmann does (control characters as lowercase `\\u00xx`,
everything else raw unless `ensure_ascii`).
"""

from __future__ import annotations

from typing import Any

from app.render.engines.edge_llm.inja.jsonvalue import dump_scalar


def edge_tojson(
    value: Any, item_sep: str = ", ", key_sep: str = ": ", ensure_ascii: bool = False
) -> str:
    """Edge-LLM's `jsonString`: one line, with the given separators."""
    parts: list[str] = []
    _write_line(value, item_sep, key_sep, ensure_ascii, parts)
    return "".join(parts)


def _write_line(value: Any, item_sep: str, key_sep: str, ascii_: bool, out: list[str]) -> None:
    if isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(item_sep)
            _write_line(item, item_sep, key_sep, ascii_, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out.append(item_sep)
            out.append(dump_scalar(key, ascii_) + key_sep)
            _write_line(item, item_sep, key_sep, ascii_, out)
        out.append("}")
    else:
        out.append(dump_scalar(value, ascii_))


def dump(value: Any, indent: int) -> str:
    """nlohmann's `dump(indent, ' ', false)`: compact without spaces for a negative
    indent, else one member per line indented by `indent` spaces per level."""
    out: list[str] = []
    if indent < 0:
        _write_line(value, ",", ":", False, out)
    else:
        _write_pretty(value, indent, 0, out)
    return "".join(out)


def _write_pretty(value: Any, indent: int, level: int, out: list[str]) -> None:
    if isinstance(value, list | dict) and len(value) == 0:
        out.append("[]" if isinstance(value, list) else "{}")
        return
    if not isinstance(value, list | dict):
        out.append(dump_scalar(value))
        return
    inner = " " * (indent * (level + 1))
    close, opener = ("]", "[") if isinstance(value, list) else ("}", "{")
    out.append(opener + "\n")
    items = value if isinstance(value, list) else list(value.items())
    for index, item in enumerate(items):
        out.append(inner)
        if isinstance(value, dict):
            out.append(dump_scalar(item[0]) + ": ")
            item = item[1]
        _write_pretty(item, indent, level + 1, out)
        out.append(",\n" if index + 1 < len(items) else "\n")
    out.append(" " * (indent * level) + close)
