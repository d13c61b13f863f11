"""Turn a JSON render body into a `RenderRequest`, naming the field when it is malformed.

The same body is accepted by `/api/render` and by every endpoint that renders
(shares, analysis, diff), so the checks live here, outside the web layer; each field is
read with `app.request_body`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.errors import RequestError
from app.render.engines import DEFAULT_ENGINE, ENGINES
from app.render.render_request import (
    CONTENT_FORMATS,
    TEMPLATE_KINDS,
    TOOL_ARGUMENT_FORMS,
    RenderRequest,
)
from app.request_body import expect, json_type, list_of_objects, one_of, string_map


def parse_now(value: Any, field: str = "now") -> datetime | None:
    """An ISO 8601 datetime; None when absent (the time of each render)."""
    if value is None:
        return None
    if type(value) is not str:
        raise RequestError(field, f"'{field}' must be an ISO 8601 string, not {json_type(value)}.")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise RequestError(
            field, f"'{field}' is not an ISO 8601 datetime (such as 2024-07-26T10:00:00): {value!r}"
        ) from None


def parse_render_request(body: Any) -> RenderRequest:
    """Validate a `/api/render` body; raises `RequestError` naming the first bad field."""
    if type(body) is not dict:
        raise RequestError(None, f"The request body must be a JSON object, not {json_type(body)}.")
    if body.get("template") is None:
        raise RequestError("template", "'template' is required: the chat template source.")
    if body.get("messages") is None:
        raise RequestError("messages", "'messages' is required: a list of message objects.")
    return RenderRequest(
        template=expect(body, "template", (str,), ""),
        messages=list_of_objects(body, "messages", []),
        tools=list_of_objects(body, "tools", None),
        documents=expect(body, "documents", (list,), None),
        add_generation_prompt=expect(body, "add_generation_prompt", (bool,), False),
        continue_final_message=expect(body, "continue_final_message", (bool, str), False),
        special_tokens=string_map(body, "special_tokens"),
        kwargs=expect(body, "kwargs", (dict,), {}),
        now=parse_now(body.get("now")),
        engine=_engine(body),
        add_bos_token=expect(body, "add_bos_token", (bool,), False),
        add_eos_token=expect(body, "add_eos_token", (bool,), False),
        content_format=one_of(body, "content_format", CONTENT_FORMATS, "auto"),
        tool_arguments=one_of(body, "tool_arguments", TOOL_ARGUMENT_FORMS, "as_written"),
        template_kind=one_of(body, "template_kind", TEMPLATE_KINDS, "jinja"),
    )


def _engine(body: dict) -> str:
    return one_of(body, "engine", tuple(ENGINES), DEFAULT_ENGINE)
