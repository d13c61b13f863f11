"""Turn a JSON render body into a `RenderRequest`, naming the field when it is malformed.

The same body is accepted by `/api/render` and by every endpoint that renders
(shares, analysis, diff), so the checks live here, outside the web layer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.errors import RequestError
from app.render.engines import DEFAULT_ENGINE, ENGINES
from app.render.render_request import CONTENT_FORMATS, TOOL_ARGUMENT_FORMS, RenderRequest

#: How a JSON type is named in error messages.
_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}


def _expect(body: dict, field: str, kinds: tuple[type, ...], default: Any) -> Any:
    """Read `field`, checking its JSON type; None stands for the default."""
    value = body.get(field)
    if value is None:
        return default
    # bool is a subclass of int in Python but not in JSON: compare exact types.
    if type(value) not in kinds:
        wanted = " or ".join(_JSON_NAMES[kind] for kind in kinds)
        raise RequestError(field, f"'{field}' must be {wanted}, not {_json_type(value)}.")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_NAMES.get(type(value), "a number")


def _list_of_objects(body: dict, field: str, default: Any) -> Any:
    items = _expect(body, field, (list,), default)
    for index, item in enumerate(items or []):
        if type(item) is not dict:
            raise RequestError(
                f"{field}[{index}]",
                f"'{field}[{index}]' must be an object, not {_json_type(item)}.",
            )
    return items


def _string_map(body: dict, field: str) -> dict[str, str]:
    mapping = _expect(body, field, (dict,), {})
    for key, value in mapping.items():
        if type(value) is not str:
            raise RequestError(
                f"{field}.{key}", f"'{field}.{key}' must be a string, not {_json_type(value)}."
            )
    return mapping


def parse_now(value: Any, field: str = "now") -> datetime:
    """An ISO 8601 datetime, or the server's current time when absent."""
    if value is None:
        return datetime.now()
    if type(value) is not str:
        raise RequestError(field, f"'{field}' must be an ISO 8601 string, not {_json_type(value)}.")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise RequestError(
            field, f"'{field}' is not an ISO 8601 datetime (such as 2024-07-26T10:00:00): {value!r}"
        ) from None


def parse_render_request(body: Any) -> RenderRequest:
    """Validate a `/api/render` body; raises `RequestError` naming the first bad field."""
    if type(body) is not dict:
        raise RequestError(None, f"The request body must be a JSON object, not {_json_type(body)}.")
    if body.get("template") is None:
        raise RequestError("template", "'template' is required: the chat template source.")
    if body.get("messages") is None:
        raise RequestError("messages", "'messages' is required: a list of message objects.")
    return RenderRequest(
        template=_expect(body, "template", (str,), ""),
        messages=_list_of_objects(body, "messages", []),
        tools=_list_of_objects(body, "tools", None),
        documents=_expect(body, "documents", (list,), None),
        add_generation_prompt=_expect(body, "add_generation_prompt", (bool,), False),
        continue_final_message=_expect(body, "continue_final_message", (bool, str), False),
        special_tokens=_string_map(body, "special_tokens"),
        kwargs=_expect(body, "kwargs", (dict,), {}),
        now=parse_now(body.get("now")),
        engine=_engine(body),
        add_bos_token=_expect(body, "add_bos_token", (bool,), False),
        add_eos_token=_expect(body, "add_eos_token", (bool,), False),
        content_format=_one_of(body, "content_format", CONTENT_FORMATS, "auto"),
        tool_arguments=_one_of(body, "tool_arguments", TOOL_ARGUMENT_FORMS, "as_written"),
    )


def _engine(body: dict) -> str:
    return _one_of(body, "engine", tuple(ENGINES), DEFAULT_ENGINE)


def _one_of(body: dict, field: str, allowed: tuple[str, ...], default: str) -> str:
    """A string field that must be one of `allowed`."""
    value = _expect(body, field, (str,), default)
    if value not in allowed:
        names = " or ".join(repr(name) for name in allowed)
        raise RequestError(field, f"'{field}' must be {names}, not {value[:100]!r}.")
    return value
