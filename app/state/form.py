"""The page's form fields to a `PlaygroundState` and back.

The page is a plain HTML form: JSON values are text areas, options are check boxes and
selects, the source and the open tab are hidden inputs. Reading a form never fails the
page: a field that cannot be read (not JSON, too deep, or refused by the state's
validation) keeps its default and is reported under its name, so the page can say what
is wrong beside the editor that holds it.

What a browser cannot send back is the limit of the round trip: a text area's line ends
come back as CRLF (templates are read with LF), and the date and time input holds
seconds without a time zone.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.render.engines import DEFAULT_ENGINE
from app.render.render_request import RenderRequest
from app.render.request import RequestError
from app.state.playground import PlaygroundState
from app.untrusted_json import DEFAULT_MAX_DEPTH, JSONRefused, loads

#: Form fields holding JSON text: the state's field of the same name.
JSON_FIELDS = ("messages", "tools", "documents", "kwargs", "special_tokens")

#: Check boxes (and hidden flags): "on" when true.
FLAGS = ("add_generation_prompt", "add_bos_token", "add_eos_token")

#: The prefix of the parser option selects: `parser:<engine id>:<option name>`; an empty
#: value is the engine's default.
PARSER_FIELD = "parser:"

#: What a field falls back to when it cannot be read; null for the state's own default.
_FALLBACK: dict[str, Any] = {"messages": []}

#: The state field an error path such as `messages[0].content` or `source.kind` is in.
_TOP_FIELD = re.compile(r"[a-z_]+")

#: A small conversation to start from.
SAMPLE_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
]


def first_visit(
    template: str, now: datetime | None = None, library: str | None = None
) -> PlaygroundState:
    """What the page shows on a first visit: `template` (the library's `library`), a
    short conversation, the clock pinned to this second."""
    request = RenderRequest(
        template=template,
        messages=copy.deepcopy(SAMPLE_MESSAGES),
        add_generation_prompt=True,
        now=(now or datetime.now()).replace(microsecond=0),
        engine=DEFAULT_ENGINE,
    )
    return PlaygroundState(request, library=library, view="prompt")


def _lf(text: str) -> str:
    """Browsers send text areas with CRLF line ends; templates are typed with LF."""
    return text.replace("\r\n", "\n")


def _continue_value(text: str | None) -> bool | str:
    """The select's value: off, the content ("true"), or the name of a message field."""
    if not text or text == "false":
        return False
    return True if text == "true" else text


def _compare_engines(text: str | None) -> bool | str:
    """The compare menu's value: an engine id; "on" (an older page's check box) for the
    other engine; empty for none."""
    if not text or text == "false":
        return False
    return True if text in ("on", "true", "1") else text


def _source(form: Mapping[str, str]) -> dict[str, Any] | None:
    """The hidden source inputs as the state's JSON `source`."""
    source_id = (form.get("source_id") or "").strip()
    if not source_id:
        return None
    return {
        "id": source_id,
        "kind": form.get("source_kind") or "gguf",
        "file_name": form.get("source_file_name") or None,
        "template_name": form.get("template_name") or None,
        "origin": _source_origin(form.get("source_origin") or ""),
    }


def _source_origin(text: str) -> dict[str, Any] | None:
    """A remote source's provenance, kept as JSON in a hidden input; anything that is not
    a small JSON object of it is dropped (it only names where the source came from)."""
    try:
        value = loads(text, 2, where="source_origin") if text.strip() else None
    except JSONRefused:
        return None
    if type(value) is not dict or not all(type(v) in (str, type(None)) for v in value.values()):
        return None
    return value


def _parsers(form: Mapping[str, str]) -> dict[str, dict[str, str]] | None:
    """The parser option selects as the state's `parsers`; unset ones left out."""
    parsers: dict[str, dict[str, str]] = {}
    for key in form:
        engine, _, option = key[len(PARSER_FIELD) :].rpartition(":")
        if key.startswith(PARSER_FIELD) and engine and option and form.get(key):
            parsers.setdefault(engine, {})[option] = form[key]
    return parsers or None


def _form_body(form: Mapping[str, str], max_depth: int, problems: dict[str, str]) -> dict:
    """The state's JSON form as the form spells it; JSON that cannot be read is left at
    its fallback and its reason added to `problems`."""
    body: dict[str, Any] = {"template": _lf(form.get("template") or "")}
    for name in JSON_FIELDS:
        text = (form.get(name) or "").strip()
        if not text:
            continue
        try:
            body[name] = loads(text, max_depth, where=name)
        except JSONRefused as error:
            problems[name] = error.message
            body[name] = _FALLBACK.get(name)
    for name in FLAGS:
        body[name] = form.get(name) in ("on", "true", "1")
    compare = _lf(form.get("compare_template") or "")
    body.update(
        continue_final_message=_continue_value(form.get("continue_final_message")),
        compare_engines=_compare_engines(form.get("compare_engines")),
        now=form.get("now") or None,
        compare_template=compare if compare.strip() else None,
        engine=form.get("engine") or None,
        content_format=form.get("content_format") or None,
        tool_arguments=form.get("tool_arguments") or None,
        template_kind=form.get("template_kind") or None,
        source=_source(form),
        library=form.get("library") or None,
        view=form.get("view") or None,
        completion=_lf(form.get("completion") or "") or None,
        parsers=_parsers(form),
    )
    body.setdefault("messages", [])
    return body


def state_from_form(
    form: Mapping[str, str], max_depth: int = DEFAULT_MAX_DEPTH
) -> tuple[PlaygroundState, dict[str, str]]:
    """The state a submitted form describes, and a message per field it could not read.

    `max_depth` bounds the nesting of the JSON fields (`PLAYGROUND_JSON_DEPTH`).
    """
    problems: dict[str, str] = {}
    body = _form_body(form, max_depth, problems)
    # One field at a time: each refused field falls back to its default and is named.
    for _ in range(len(body) + 1):
        try:
            return PlaygroundState.from_json(body), problems
        except RequestError as error:
            name = _TOP_FIELD.match(error.field or "")
            if name is None or name[0] in problems or name[0] not in body:
                raise  # the fallback itself refused: a bug here, not in the form
            problems[name[0]] = error.message
            body[name[0]] = _FALLBACK.get(name[0])
    raise AssertionError("unreachable: every field falls back at most once")


def _json_text(value: Any) -> str:
    """A JSON text area's content: indented, characters as they are."""
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)


def form_values(state: PlaygroundState) -> dict[str, str]:
    """The text each form field shows for a state (the inverse of `state_from_form`)."""
    asked = state.request
    values = {name: _json_text(getattr(asked, name)) for name in JSON_FIELDS}
    values.update({name: "on" if getattr(asked, name) else "" for name in FLAGS})
    cont = asked.continue_final_message
    source = state.source
    values.update(
        template=asked.template,
        continue_final_message="true" if cont is True else (cont or ""),
        now=state.now_text or "",
        compare_template=state.compare_template or "",
        compare_engines=state.compared_engine() or "",
        engine=asked.engine or DEFAULT_ENGINE,
        content_format=asked.content_format,
        tool_arguments=asked.tool_arguments,
        template_kind=asked.template_kind,
        source_id=source.id if source else "",
        source_kind=(source.kind or "") if source else "",
        source_file_name=(source.file_name or "") if source else "",
        template_name=(source.template_name or "") if source else "",
        source_origin=json.dumps(source.origin) if source and source.origin else "",
        library=state.library or "",
        view=state.view or "",
        completion=state.completion or "",
    )
    for engine, options in state.parsers.items():
        values.update({f"{PARSER_FIELD}{engine}:{name}": v for name, v in options.items()})
    return values
