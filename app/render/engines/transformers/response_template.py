"""transformers' declarative `response_template` (5.23.0, `utils/chat_parsing`) on text.

A response template names the message's fields (`content`, `reasoning_content`,
`tool_calls`, ...), each a region of the answer between an `open` and a `close`
delimiter (literal strings, or `open_pattern` / `close_pattern` regular expressions);
the one field without an opener is the implicit region that takes whatever text no
other region holds. The prompt (`prefix`) is cut after its last `start_anchor`, and
what is left of it is read first, so that a region the template opened in the prompt
(`<think>`) is still open when the completion starts. Each region's text goes through a
content parser (`text`, `int`, `float`, `bool`, `json`, `xml-inline`, `kv-lines`) and an
optional `transform` that reshapes it.

transformers compiles the delimiters with the `regex` package and scans as a stream; a
whole answer read at once gives the same regions, which is what this does with Python's
`re` (patterns the `re` module does not know fail with a `ResponseTemplateError`).
"""

from __future__ import annotations

import re
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from app.render.engines.transformers.content_parsers import (
    CONTENT_PARSERS,
    coerce_tool_calls,
    process_field,
    validate_transform,
)

TEMPLATE_KEYS = {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"}
FIELD_KEYS = {"open", "open_pattern", "close", "close_pattern", "content", "content_args"}
FIELD_KEYS |= {"repeats", "join", "optional", "transform", "transform_each"}


class ResponseTemplateError(ValueError):
    """transformers' ValueError for a template it refuses or an answer it cannot parse."""


@dataclass(frozen=True)
class Field:
    name: str
    open_re: re.Pattern | None
    close_re: re.Pattern | None
    content: str
    content_args: dict
    repeats: bool
    join: str | None
    optional: bool
    transform: Any
    transform_each: bool


@dataclass(frozen=True)
class Template:
    defaults: dict
    fields: dict[str, Field]
    anchor: re.Pattern
    implicit: str | None


def _anchor(scope: str, spec: dict, literal_key: str, pattern_key: str) -> re.Pattern | None:
    if literal_key in spec and pattern_key in spec:
        raise ResponseTemplateError(
            f"{scope}: cannot specify both '{literal_key}' and '{pattern_key}'"
        )
    if literal_key in spec:
        raw = spec[literal_key]
        if isinstance(raw, str):
            literals = [raw]
        elif isinstance(raw, list):
            if not raw:
                raise ResponseTemplateError(
                    f"{scope}: '{literal_key}' list must contain at least one literal"
                )
            if not all(isinstance(s, str) for s in raw):
                raise ResponseTemplateError(
                    f"{scope}: '{literal_key}' list must contain only strings"
                )
            literals = list(dict.fromkeys(raw))
        else:
            kind = type(raw).__name__
            raise ResponseTemplateError(
                f"{scope}: '{literal_key}' must be a string or list of strings, got {kind}"
            )
        if "" in literals:
            raise ResponseTemplateError(
                f"{scope}: '{literal_key}' literals cannot be empty strings"
            )
        # Longest first, so that of two literals that both match the longer one wins.
        ordered = sorted(literals, key=len, reverse=True)
        return re.compile("|".join(re.escape(s) for s in ordered), re.DOTALL)
    if pattern_key in spec:
        try:
            return re.compile(spec[pattern_key], re.DOTALL)
        except (re.error, TypeError) as error:
            raise ResponseTemplateError(f"{scope}: invalid {pattern_key} regex: {error}") from None
    return None


def _field(name: str, spec: Any) -> Field:
    scope = f"Field '{name}'"
    if not isinstance(spec, dict):
        raise ResponseTemplateError(f"{scope} must be a dict")
    if unknown := set(spec) - FIELD_KEYS:
        raise ResponseTemplateError(f"{scope}: unknown keys {sorted(unknown)}")
    content = spec.get("content", "text")
    if content not in CONTENT_PARSERS:
        available = sorted(CONTENT_PARSERS)
        raise ResponseTemplateError(
            f"{scope}: unknown content parser '{content}'. Available: {available}"
        )
    open_re = _anchor(scope, spec, "open", "open_pattern")
    close_re = _anchor(scope, spec, "close", "close_pattern")
    join = spec.get("join")
    if join is not None and not isinstance(join, str):
        raise ResponseTemplateError(f"{scope}: 'join' must be a string, got {type(join).__name__}")
    if join is not None and not spec.get("repeats", False):
        raise ResponseTemplateError(f"{scope}: 'join' requires 'repeats': true")
    transform, each = spec.get("transform"), spec.get("transform_each", False)
    if not isinstance(each, bool):
        raise ResponseTemplateError(
            f"{scope}: transform_each must be a bool, got {type(each).__name__}"
        )
    if each and transform is None:
        raise ResponseTemplateError(f"{scope}: transform_each is set but no transform was provided")
    if transform is not None:
        validate_transform(scope, transform)
    else:
        groups = set(open_re.groupindex if open_re else ()) | set(
            close_re.groupindex if close_re else ()
        )
        if groups:
            raise ResponseTemplateError(
                f"{scope}: open_pattern/close_pattern declares named group(s) {sorted(groups)}, "
                "but the field has no 'transform'. Named captures are only surfaced through a "
                "'transform' template (where they appear alongside 'content'). Either add a "
                "'transform' that uses the captures, or remove the named groups from the pattern."
            )
    return Field(
        name, open_re, close_re, content, spec.get("content_args", {}),
        spec.get("repeats", False), join, spec.get("optional", True), transform, each,
    )  # fmt: skip


def load(spec: Any) -> Template:
    """The template checked and compiled as transformers' `load_response_template` does."""
    if not isinstance(spec, dict):
        raise ResponseTemplateError(f"response_template must be a dict, got {type(spec).__name__}")
    if (version := spec.get("version", 1)) != 1:
        raise ResponseTemplateError(f"Unsupported response_template version: {version}")
    if unknown := set(spec) - TEMPLATE_KEYS:
        raise ResponseTemplateError(f"Unknown keys in response_template: {sorted(unknown)}")
    if not isinstance(spec.get("defaults", {}), dict):
        raise ResponseTemplateError("response_template.defaults must be a dict")
    raw_fields = spec.get("fields", {})
    if not isinstance(raw_fields, dict) or not raw_fields:
        raise ResponseTemplateError("response_template.fields must be a non-empty dict")
    fields = {name: _field(name, raw) for name, raw in raw_fields.items()}
    implicit = [name for name, f in fields.items() if f.open_re is None]
    if len(implicit) > 1:
        raise ResponseTemplateError(
            "At most one field may omit 'open'/'open_pattern' (that field becomes the "
            f"implicit-open / leftover sink). Found: {', '.join(implicit)}"
        )
    anchor = _anchor("response_template", spec, "start_anchor", "start_anchor_pattern")
    if anchor is None:
        raise ResponseTemplateError(
            "response_template must define 'start_anchor' or 'start_anchor_pattern'."
        )
    return Template(
        deepcopy(spec.get("defaults", {})), fields, anchor, implicit[0] if implicit else None
    )


def _after_last_anchor(template: Template, prefix: str) -> str:
    last = None
    for match in template.anchor.finditer(prefix):
        last = match.end()
    return prefix if last is None else prefix[last:]


def parse(spec: Any, text: str, prefix: str, tools: list[dict] | None = None) -> dict:
    """transformers' `parse_response(text, spec, prefix=prefix, tools=tools)`: the message."""
    template = load(spec)
    params = _tool_params(tools)
    rest = _after_last_anchor(template, prefix) if prefix else ""
    buffer = rest + text
    output: dict[str, Any] = deepcopy(template.defaults)
    current, captures, body, opened, pos = template.implicit, {}, "", False, 0
    found: dict[int, re.Match | None] = {}  # each delimiter's next match, searched once
    # The pieces of each `join` field, joined once at the end: transformers adds each
    # match to the text so far, which copies it every time (quadratic).
    joined: dict[str, list[str]] = {}
    # The reading's states since the text last moved on: the same state twice at the
    # same place is a loop that never ends.
    seen: list[tuple] = []

    def close() -> None:
        nonlocal current, captures, body, opened
        if current is not None and opened:
            field = template.fields[current]
            value = process_field(body, field, captures)
            if params:
                value = coerce_tool_calls(value, params)
            if field.join is not None:
                if not isinstance(value, str):
                    raise ResponseTemplateError(
                        f"Field '{field.name}': 'join' requires each match to parse to a string, "
                        f"got {type(value).__name__}."
                    )
                _join(output, joined, current, field.join, value)
            elif field.repeats:
                output.setdefault(current, []).append(value)
            else:
                output[current] = value
        current, captures, body, opened = template.implicit, {}, "", False

    while True:
        if looping := _repeated(seen, (current, opened, body, tuple(captures.items()))):
            raise _never_returns(looping, pos, len(rest))
        best = _earliest(template, current, buffer, pos, found)
        if best is None:
            if pos < len(buffer) and current is not None:
                body, opened = body + buffer[pos:], True
            pos = len(buffer)
            close()
            break
        kind, field, match = best
        if match.start() > pos and current is not None:
            body, opened = body + buffer[pos : match.start()], True
        if match.end() > pos:
            seen.clear()  # moved on
        pos = match.end()
        if kind == "open":
            close()
            current, body, opened = field.name, "", True
            captures = {k: v for k, v in match.groupdict().items() if v is not None}
        else:
            had_content = opened
            close()
            if not had_content and match.start() == match.end():
                break  # as transformers does: a zero-width close of an empty region stops it
    for name, pieces in joined.items():
        output[name] = "".join(pieces)
    missing = [n for n, f in template.fields.items() if not f.optional and n not in output]
    if missing:
        raise ResponseTemplateError(
            f"Required response_template fields missing from parsed output: {missing}"
        )
    return {k: v for k, v in output.items() if k in template.defaults or not _empty(v)}


class NeverReturns(ResponseTemplateError):
    """A reading that transformers would go on with forever: a field that opens and closes
    at the same place, again and again (each time adding a match to its value, until
    memory runs out)."""


def _repeated(seen: list[tuple], state: tuple) -> str | None:
    """The field that loops when the reading is back in a state (the open field, whether
    it has begun, its text and captures) it was in at this very place, else None: what it
    does next depends on nothing else, so it would repeat the steps since, forever. Only
    empty matches keep it in place, so `seen` stays short."""
    if state in seen:
        return next(name for name, opened, *_ in seen if opened)
    seen.append(state)
    return None


def _never_returns(field: str, pos: int, prompt_chars: int) -> NeverReturns:
    where = (
        f"at character {pos - prompt_chars} of the completion"
        if pos >= prompt_chars
        else f"in the prompt, {prompt_chars - pos} characters before the completion"
    )
    return NeverReturns(
        f"field '{field}' opens and closes with empty matches {where}, again and again: "
        "transformers never stops reading there (the field's value grows until memory "
        "runs out)"
    )


def _join(output: dict, joined: dict[str, list[str]], name: str, glue: str, value: str) -> None:
    """Add a match to a `join` field, as `previous + glue + value` would."""
    if name in joined:
        joined[name] += [glue, value]
        return
    previous = output.get(name)
    # The first addition as transformers makes it: a default that is no string fails so.
    output[name] = value if previous is None else previous + glue + value
    joined[name] = [output[name]]


def _earliest(
    template: Template, current: str | None, buffer: str, pos: int, found: dict
) -> tuple[str, Field, re.Match] | None:
    """The delimiter that fires next: inside an explicit region its close, else every
    opener and the implicit region's close; the earliest wins, then the longest, then an
    opener over a close, then the field's name. `found` keeps each pattern's next match:
    a search from a later position finds the same one while it starts there or later,
    and none where there was none, so the text is scanned once per delimiter, not once
    per region (transformers searches afresh each time, which is quadratic)."""
    if current is not None and current != template.implicit:
        field = template.fields[current]
        watch = [("close", field)] if field.close_re is not None else []
    else:
        watch = [("open", f) for f in template.fields.values() if f.open_re is not None]
        if template.implicit is not None and template.fields[template.implicit].close_re:
            watch.append(("close", template.fields[template.implicit]))
    best, best_key = None, None
    for kind, field in watch:
        pattern = field.open_re if kind == "open" else field.close_re
        key = id(pattern)
        if key not in found or (found[key] is not None and found[key].start() < pos):
            found[key] = pattern.search(buffer, pos)
        if (match := found[key]) is None:
            continue
        rank = (match.start(), match.start() - match.end(), kind != "open", field.name)
        if best_key is None or rank < best_key:
            best, best_key = (kind, field, match), rank
    return best


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (list, dict, str)) and not value)


def _tool_params(tools: list[dict] | None) -> dict[str, dict]:
    """Tool name -> its parameters' `properties`, for casting arguments."""
    params: dict[str, dict] = {}
    for tool in tools or []:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            parameters = fn.get("parameters")
            props = parameters.get("properties") if isinstance(parameters, dict) else None
            params[fn["name"]] = props if isinstance(props, dict) else {}
    return params
