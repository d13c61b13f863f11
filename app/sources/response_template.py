"""A tokenizer config's `response_template`, bounded at upload and kept as JSON text.

transformers reads a model's answers with the declarative `response_template` of
`tokenizer_config.json` (the transformers engine reproduces that reading, in the sandbox).
The web process never reads it: it keeps the template's JSON text, which costs what its
characters cost and crosses to a sandbox worker as one string, where a parsed object of
two million empty objects cost each web worker 150 MB and seconds of CPU per request.

At upload, in the source worker, a template is refused (422, naming the limit) when it
holds more than `PLAYGROUND_RESPONSE_TEMPLATE_ITEMS` values, nests deeper than the
config may (`PLAYGROUND_JSON_DEPTH`, checked as the file is read), is longer as JSON than
a template may be (`PLAYGROUND_TEMPLATE_KB`), or has a field whose opener and closer
both match empty text: transformers would open and close that field at the end of every
answer forever. Anything else, even a template transformers refuses, is kept: the
Response view shows transformers' own error for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.sources.hf import HFFileError
from app.sources.limits import SourceLimits

CONFIG = "tokenizer_config.json"


def kept_response_template(config: dict[str, Any], limits: SourceLimits) -> str | None:
    """The config's `response_template` as JSON text, when it is an object (transformers
    reads no other); raises `HFFileError` naming the limit it is over."""
    template = config.get("response_template")
    if not isinstance(template, dict):
        return None
    _check_values(template, limits.response_template_items)
    text = json.dumps(template, ensure_ascii=False)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.template_bytes:
        raise HFFileError(
            CONFIG,
            f"its response_template is {size:,} bytes as JSON; a template may have "
            f"{limits.template_bytes // 1024:,} KiB (PLAYGROUND_TEMPLATE_KB)",
            "template_kb",
        )
    _check_fields_move_on(template)
    return text


def _check_values(template: dict[str, Any], limit: int) -> None:
    """Refuse a template of more than `limit` values, counted without recursion and
    stopped as soon as the count is past it."""
    count, pending = 0, [template]
    while pending:
        value = pending.pop()
        count += 1
        if count > limit:
            raise HFFileError(
                CONFIG,
                f"its response_template holds more than {limit:,} values (objects, lists,"
                " strings, numbers), the limit (PLAYGROUND_RESPONSE_TEMPLATE_ITEMS);"
                " real ones hold under 100",
                "response_template_items",
            )
        if isinstance(value, dict):
            pending += value.values()
        elif isinstance(value, list):
            pending += value


def _check_fields_move_on(template: dict[str, Any]) -> None:
    """Refuse a field whose `open_pattern` and `close_pattern` both match empty text.

    transformers opens such a field with an empty match and closes it with another at
    the same place, then opens it there again, forever, at the end of every answer (and
    wherever both match empty). A pair that matches empty text only before some text
    (`(?=<x>)`) loads: the reading says where it would loop (the engine's NeverReturns).
    """
    fields = template.get("fields")
    if not isinstance(fields, dict):
        return
    for name, field in fields.items():
        if not isinstance(field, dict):
            continue
        opener, closer = field.get("open_pattern"), field.get("close_pattern")
        if _matches_empty(opener) and _matches_empty(closer):
            raise HFFileError(
                CONFIG,
                f"response_template field {name!r}: its open_pattern and close_pattern both"
                " match empty text, so parse_response never returns on an answer (it opens"
                " and closes the field at the same place, forever)",
            )


def _matches_empty(pattern: Any) -> bool:
    """Whether a pattern matches the empty text (one that does not compile: transformers
    says so when it reads an answer, so it is no reason to refuse here)."""
    if not isinstance(pattern, str):
        return False
    try:
        return re.compile(pattern, re.DOTALL).search("") is not None
    except (re.error, RecursionError, OverflowError, ValueError):
        return False
