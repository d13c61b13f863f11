"""The fields of a request body, read for every entry point: JSON types, one-of, lists
of objects, each refusal a `RequestError` naming the field.

A body arrives already parsed (`app.untrusted_json`: bounded nesting, no `NaN`); what is
checked here is that each field has the JSON type its endpoint reads. The render body
(`app.render.request`), the playground state (`app.state`) and the web endpoints all read
their fields here, so one field is refused in the same words wherever it is sent.
"""

from __future__ import annotations

from typing import Any

from app.errors import RequestError

#: How a JSON type is named in error messages.
_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}


def json_type(value: Any) -> str:
    """A JSON value's type as error messages name it: "null", "an object", "a number"..."""
    if value is None:
        return "null"
    return _JSON_NAMES.get(type(value), "a number")


def json_object(body: Any, field: str | None = None) -> dict:
    """`body` (the request body, or its field `field`), which must be a JSON object."""
    if type(body) is not dict:
        where = f"'{field}'" if field else "The request body"
        raise RequestError(field, f"{where} must be a JSON object.")
    return body


def expect(body: dict, field: str, kinds: tuple[type, ...], default: Any) -> Any:
    """Read `field`, checking its JSON type; None (or absent) stands for `default`."""
    value = body.get(field)
    if value is None:
        return default
    # bool is a subclass of int in Python but not in JSON: compare exact types.
    if type(value) not in kinds:
        wanted = " or ".join(_JSON_NAMES[kind] for kind in kinds)
        raise RequestError(field, f"'{field}' must be {wanted}, not {json_type(value)}.")
    return value


def optional_string(body: dict, name: str, path: str | None = None) -> str | None:
    """A string or null (absent) field; `path` is how an error names it (default: `name`)."""
    value = body.get(name)
    if value is not None and type(value) is not str:
        where = path or name
        raise RequestError(where, f"'{where}' must be a string or null, not {json_type(value)}.")
    return value


def list_of_objects(body: dict, field: str, default: Any) -> Any:
    """A list field whose items are all objects; None stands for `default`."""
    items = expect(body, field, (list,), default)
    for index, item in enumerate(items or []):
        if type(item) is not dict:
            where = f"{field}[{index}]"
            raise RequestError(where, f"'{where}' must be an object, not {json_type(item)}.")
    return items


def string_map(body: dict, field: str) -> dict[str, str]:
    """An object field whose values are all strings; absent, an empty one."""
    mapping = expect(body, field, (dict,), {})
    for key, value in mapping.items():
        if type(value) is not str:
            where = f"{field}.{key}"
            raise RequestError(where, f"'{where}' must be a string, not {json_type(value)}.")
    return mapping


def one_of(body: dict, field: str, allowed: tuple[str, ...], default: str) -> str:
    """A string field that must be one of `allowed`; absent, `default`."""
    value = expect(body, field, (str,), default)
    if value not in allowed:
        names = " or ".join(repr(name) for name in allowed)
        raise RequestError(field, f"'{field}' must be {names}, not {value[:100]!r}.")
    return value
