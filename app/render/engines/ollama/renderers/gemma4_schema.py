"""Gemma 4's tool declarations and argument values, as Ollama's gemma4 renderer writes
them (model/renderers/gemma4.go at ollama/ollama fb30760).

`<|tool>declaration:NAME{description:<|"|>...<|"|>,parameters:{properties:{...},
required:[...],type:<|"|>OBJECT<|"|>}}<tool|>`: keys sorted, strings between `<|"|>`,
type names upper-cased; a property's own properties, items, enum and nullable in a
fixed order. A schema given as a tool property (Ollama's api.ToolProperty) and one
given as plain JSON (its `items`) are written differently, as in Ollama.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson

Q = '<|"|>'
_STANDARD = ("description", "type", "properties", "required", "nullable")


class PropertiesMap(dict):
    """An api.ToolPropertiesMap (its values are tool properties, not plain schema)."""


def _types(value: Any) -> list[str]:
    """A PropertyType as a list of names."""
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def _simple_any_of(prop: dict[str, Any]) -> list[str]:
    """The types of an anyOf whose branches are bare types, in order, once each."""
    out: list[str] = []
    for branch in prop.get("anyOf") or []:
        others = (v for k, v in branch.items() if k != "type")
        bare = _types(branch.get("type")) and all(v in (None, "", [], {}) for v in others)
        if not bare:
            return []
        out += [t for t in _types(branch["type"]) if t not in out]
    return out


def _common(prop: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The description, enum, items and required a tool property carries."""
    for key in ("description", "enum", "items", "required"):
        if prop.get(key) not in (None, "", []):
            out[key] = prop[key]
    return out


def _order(out: dict[str, Any]) -> dict[str, Any]:
    """Put the keys in Go's struct order (type, description, enum, items, properties,
    required) so both ways of building a schema compare alike."""
    keys = ("type", "description", "enum", "items", "properties", "required")
    return {k: out[k] for k in keys if k in out}


def schema_value(prop: dict[str, Any]) -> dict[str, Any]:
    """schemaValueFromToolProperty: a nested tool property as plain schema."""
    types = _types(prop.get("type")) or _simple_any_of(prop)
    out: dict[str, Any] = {"type": types[0] if len(types) == 1 else types} if types else {}
    if prop.get("properties") is not None:
        out["properties"] = PropertiesMap(prop["properties"])
    return _order(_common(prop, out))


def top_level_value(prop: dict[str, Any]) -> dict[str, Any]:
    """topLevelTypedSchemaValueFromToolProperty: a union type becomes "['A', 'B']"."""
    types = _types(prop.get("type")) or _simple_any_of(prop)
    out: dict[str, Any] = {}
    if types:
        out["type"] = (
            types[0]
            if len(types) == 1
            else ("[" + ", ".join(f"'{t.upper()}'" for t in types) + "]")
        )
    if prop.get("properties") is not None:
        out["properties"] = {k: top_level_value(v) for k, v in prop["properties"].items()}
    return _order(_common(prop, out))


def as_schema_map(value: Any) -> dict[str, Any] | None:
    """A schema map: plain as it is, a properties map with each property converted."""
    if isinstance(value, PropertiesMap):
        return {k: schema_value(v) for k, v in value.items()}
    return value if isinstance(value, dict) else None


def type_names(value: Any) -> list[str]:
    """normalizeTypeNames: upper-cased type names (non-strings dropped)."""
    if isinstance(value, str):
        return [value.upper()]
    if isinstance(value, list):
        return [v.upper() for v in value if isinstance(v, str)]
    return []


def _strings(value: Any) -> list[str]:
    """normalizeStringSlice: the strings of a list."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _quoted_list(values: list[str]) -> str:
    """[<|"|>a<|"|>,<|"|>b<|"|>]."""
    return "[" + ",".join(Q + v + Q for v in values) + "]"


def _type_field(names: list[str]) -> str:
    """type:<|"|>A<|"|> or type:[...]."""
    return "type:" + (Q + names[0] + Q if len(names) == 1 else _quoted_list(names))


def items_spec(items: dict[str, Any]) -> str:
    """writeSchemaItemsSpec: an array's items, keys sorted, nulls left out."""
    parts = []
    for key in sorted(items):
        value = items[key]
        if value is None:
            continue
        if key == "properties":
            props = as_schema_map(value)
            parts.append("properties:{" + (properties(props) if props is not None else "") + "}")
        elif key == "required":
            parts.append("required:" + _quoted_list(_strings(value)))
        elif key == "type":
            names = type_names(value)
            parts.append(_type_field(names) if names else "")
        else:
            parts.append(key + ":" + schema_literal(value))
    return ",".join(parts)


def _property(prop: dict[str, Any]) -> str:
    """One property's fields: description, enum or items, nullable, properties, type."""
    parts = []
    if isinstance(prop.get("description"), str) and prop["description"]:
        parts.append("description:" + Q + prop["description"] + Q)
    names = type_names(prop.get("type"))
    first = names[0] if names else ""
    enum = prop.get("enum") if isinstance(prop.get("enum"), list) else []
    if first == "STRING" and enum:
        parts.append("enum:[" + ",".join(Q + gojson.sprint(v) + Q for v in enum) + "]")
    items = as_schema_map(prop.get("items"))
    if first == "ARRAY" and items:
        parts.append("items:{" + items_spec(items) + "}")
    if prop.get("nullable") is True:
        parts.append("nullable:true")
    if first == "OBJECT":
        nested = as_schema_map(prop.get("properties"))
        parts.append("properties:{" + properties(nested if nested is not None else prop) + "}")
        required = _strings(prop.get("required"))
        if required:
            parts.append("required:" + _quoted_list(required))
    if names:
        parts.append(_type_field(names))
    return ",".join(parts)


def properties(props: dict[str, Any]) -> str:
    """writeSchemaProperties: each property by name (sorted, standard keys skipped)."""
    parts = []
    for name in sorted(props):
        prop = as_schema_map(props[name])
        if name in _STANDARD or prop is None:
            continue
        parts.append(name + ":{" + _property(prop) + "}")
    return ",".join(parts)


def declaration(tool: dict[str, Any]) -> str:
    """A tool's `<|tool>declaration:...<tool|>`."""
    fn = tool.get("function", {})
    out = "<|tool>declaration:" + fn.get("name", "") + "{description:" + Q
    out += fn.get("description", "") + Q
    params = fn.get("parameters") or {}
    props, kind = params.get("properties"), params.get("type", "")
    if props is not None or kind:
        parts = []
        if props:
            typed = {k: top_level_value(v) for k, v in props.items()}
            parts.append("properties:{" + properties(typed) + "}")
        if params.get("required"):
            parts.append("required:" + _quoted_list(params["required"]))
        if kind:
            parts.append("type:" + Q + kind.upper() + Q)
        out += ",parameters:{" + ",".join(parts) + "}"
    return out + "}<tool|>"


def _number(value: float | int) -> str:
    """A number: whole floats without a fraction, others in Go's %v."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return str(int(value))
    return gojson.sprint(value) if isinstance(value, float) else str(value)


def argument(value: Any) -> str:
    """formatArgValue: a tool call's value (map keys sorted, bare)."""
    if isinstance(value, dict):
        return "{" + ",".join(k + ":" + argument(value[k]) for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(argument(v) for v in value) + "]"
    return _scalar(value)


def schema_literal(value: Any) -> str:
    """formatSchemaValue: a schema's other values (map keys sorted and quoted)."""
    if isinstance(value, dict):
        pairs = (Q + k + Q + ":" + schema_literal(value[k]) for k in sorted(value))
        return "{" + ",".join(pairs) + "}"
    if isinstance(value, list):
        return "[" + ",".join(schema_literal(v) for v in value) + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    """null, a quoted string, true/false or a number."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return Q + value + Q
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    return gojson.sprint(value)
