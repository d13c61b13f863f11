"""The page's state: what the form holds, as the same dict the API and share links use.

The page is a plain HTML form whose JSON fields (messages, tools, kwargs, special tokens)
are text areas. This module turns the submitted form into a state dict and back, and
collects what cannot be read as problems per field instead of failing the page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.render.engines import counterpart
from app.untrusted_json import DEFAULT_MAX_DEPTH, JSONRefused, loads

#: Fields of the form holding JSON, with the JSON type each must have and its default.
JSON_FIELDS: dict[str, tuple[type, Any]] = {
    "messages": (list, []),
    "tools": (list, None),
    "kwargs": (dict, {}),
    "special_tokens": (dict, {}),
}

#: A small conversation to start from.
SAMPLE_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
]


def default_state(template: str, now: datetime | None = None) -> dict[str, Any]:
    """What the page shows on a first visit."""
    return {
        "template": template,
        "messages": SAMPLE_MESSAGES,
        "tools": None,
        "add_generation_prompt": True,
        "continue_final_message": False,
        "special_tokens": {},
        "kwargs": {},
        "now": (now or datetime.now()).replace(microsecond=0).isoformat(),
        "compare_template": None,
        "compare_engines": False,
        "engine": "transformers",
        "source": None,
        "view": "prompt",
    }


def _json_field(form: Mapping[str, str], name: str, max_depth: int) -> tuple[Any, str | None]:
    kind, default = JSON_FIELDS[name]
    text = (form.get(name) or "").strip()
    if not text:
        return default, None
    try:
        value = loads(text, max_depth, where=name)
    except JSONRefused as error:
        return default, error.message
    if value is not None and not isinstance(value, kind):
        return default, f"must be a JSON {'list' if kind is list else 'object'}"
    return value, None


def _lf(text: str) -> str:
    """Browsers send text areas with CRLF line ends; templates are typed with LF."""
    return text.replace("\r\n", "\n")


def _continue_value(text: str | None) -> bool | str:
    if not text or text == "false":
        return False
    return True if text == "true" else text


def _compare_engines(text: str | None) -> bool | str:
    """The engine the Diff view compares against: an engine id, True for the other
    engine (a checkbox's "on", as older pages and shares say), or False."""
    if not text or text == "false":
        return False
    return True if text in ("on", "true", "1") else text


def _source(form: Mapping[str, str]) -> dict[str, Any] | None:
    source_id = (form.get("source_id") or "").strip()
    if not source_id:
        return None
    return {
        "id": source_id,
        "kind": form.get("source_kind") or "gguf",
        "file_name": form.get("source_file_name") or None,
        "template_name": form.get("template_name") or None,
    }


def state_from_form(
    form: Mapping[str, str], max_depth: int = DEFAULT_MAX_DEPTH
) -> tuple[dict[str, Any], dict[str, str]]:
    """The state a submitted form describes, and a message per field it could not read.

    `max_depth` bounds the nesting of the JSON fields (`PLAYGROUND_JSON_DEPTH`).
    """
    problems: dict[str, str] = {}
    state: dict[str, Any] = {"template": _lf(form.get("template", ""))}
    for name in JSON_FIELDS:
        state[name], problem = _json_field(form, name, max_depth)
        if problem:
            problems[name] = problem
    state["add_generation_prompt"] = form.get("add_generation_prompt") in ("on", "true", "1")
    state["continue_final_message"] = _continue_value(form.get("continue_final_message"))
    state["now"] = form.get("now") or None
    compare = _lf(form.get("compare_template") or "")
    state["compare_template"] = compare if compare.strip() else None
    state["compare_engines"] = _compare_engines(form.get("compare_engines"))
    state["engine"] = form.get("engine") or "transformers"
    state["source"] = _source(form)
    state["view"] = form.get("view") or "prompt"
    return state, problems


def form_values(state: Mapping[str, Any]) -> dict[str, str]:
    """The text each form field shows for a state (the inverse of `state_from_form`)."""
    values = {
        name: ""
        if state.get(name) is None
        else json.dumps(state[name], indent=2, ensure_ascii=False)
        for name in JSON_FIELDS
    }
    source = state.get("source") or {}
    cont = state.get("continue_final_message")
    values.update(
        template=state.get("template") or "",
        add_generation_prompt="on" if state.get("add_generation_prompt") else "",
        continue_final_message="true" if cont is True else (cont or ""),
        now=(state.get("now") or "")[:19],
        compare_template=state.get("compare_template") or "",
        compare_engines=_compare_engines_value(state),
        engine=state.get("engine") or "transformers",
        source_id=source.get("id") or "",
        source_kind=source.get("kind") or "",
        source_file_name=source.get("file_name") or "",
        template_name=source.get("template_name") or "",
        view=state.get("view") or "prompt",
    )
    return values


def _compare_engines_value(state: Mapping[str, Any]) -> str:
    """The engine id the compare menu shows selected ("" for none)."""
    chosen = state.get("compare_engines")
    if chosen is True:
        return counterpart(state.get("engine") or "transformers")
    return chosen or ""


def render_body(
    state: Mapping[str, Any], template_key: str = "template", engine: str | None = None
) -> dict[str, Any]:
    """The `/api/render` body for a state (the compare template with `compare_template`)."""
    return {
        "engine": engine or state.get("engine") or "transformers",
        "add_bos_token": bool(state.get("add_bos_token")),
        "add_eos_token": bool(state.get("add_eos_token")),
        "template": state.get(template_key),
        "messages": state.get("messages"),
        "tools": state.get("tools"),
        "add_generation_prompt": state.get("add_generation_prompt", False),
        "continue_final_message": state.get("continue_final_message", False),
        "special_tokens": state.get("special_tokens") or {},
        "kwargs": state.get("kwargs") or {},
        "now": state.get("now"),
    }
