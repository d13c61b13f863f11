"""The nodes of a JSON schema as llama.cpp reads it (common/json-schema.cpp, b11434).

What `schema_builder` builds and `schema` hands out: below both, so that neither imports
the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The value types a node may take, as common_chat_schema::value_type names them.
ALL_TYPES = frozenset(("null", "boolean", "number", "integer", "string", "array", "object"))


class SchemaError(ValueError):
    """A schema llama.cpp cannot read; its text is llama.cpp's."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"JSON schema error at {path}: {message}")


@dataclass(eq=False)
class Node:
    """One schema node: its kind and what the parsers read of it."""

    kind: str
    children: list[Node] = field(default_factory=list)  # anyOf, allOf, array items
    values: list[Any] = field(default_factory=list)  # const (one), enum
    properties: list[Property] = field(default_factory=list)  # object
    target: Node | None = None  # ref, once every reference is built

    def value_types(self) -> frozenset[str]:
        """The JSON types a value matching this node may have."""
        return _value_types(self, set())

    def may_be_string(self) -> bool:
        """Whether a value matching this node may be a string, through any branch."""
        return _may_be_string(self, set())


@dataclass(frozen=True)
class Property:
    """An object's property: its name, its schema, and whether it is required."""

    name: str
    schema: Node
    required: bool


#: The JSON type of a Python value, first match wins (a bool is an int in Python).
_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
)


def _json_type(value: Any) -> str:
    """The value type of a JSON value (json_type)."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "object")


_SIMPLE_TYPES = {
    "any": ALL_TYPES,
    "null": frozenset({"null"}),
    "boolean": frozenset({"boolean"}),
    "number": frozenset({"number", "integer"}),
    "integer": frozenset({"integer"}),
    "string": frozenset({"string"}),
    "array": frozenset({"array"}),
    "tuple": frozenset({"array"}),
    "object": frozenset({"object"}),
}


def _value_types(node: Node, visited: set[int]) -> frozenset[str]:
    """value_types_impl: a reference cycle contributes no type."""
    if node.kind in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[node.kind]
    if node.kind in ("const", "enum"):
        return frozenset(_json_type(v) for v in node.values)
    if node.kind == "ref":
        if node.target is None or id(node.target) in visited:
            return frozenset()
        visited.add(id(node.target))
        types = _value_types(node.target, visited)
        visited.discard(id(node.target))
        return types
    found = [_value_types(child, visited) for child in node.children]
    if node.kind == "any_of":
        return frozenset().union(*found)
    return ALL_TYPES.intersection(*found)  # all_of


def _may_be_string(node: Node, visited: set[int]) -> bool:
    """may_be_string_impl: a reference cycle is taken as not a string."""
    if node.kind == "string":
        return True
    if node.kind in ("const", "enum"):
        return any(isinstance(v, str) for v in node.values)
    if node.kind == "ref":
        if node.target is None or id(node.target) in visited:
            return False
        visited.add(id(node.target))
        result = _may_be_string(node.target, visited)
        visited.discard(id(node.target))
        return result
    if node.kind == "any_of":
        return any(_may_be_string(child, visited) for child in node.children)
    if node.kind == "all_of":
        # Every child must allow a string; a child that constrains nothing is skipped.
        constraining = [child for child in node.children if child.kind != "any"]
        return bool(constraining) and all(_may_be_string(c, visited) for c in constraining)
    return False


@dataclass
class Document:
    """A schema's tree (`root`) and the nodes its references point at."""

    root: Node
    refs: dict[str, Node]
