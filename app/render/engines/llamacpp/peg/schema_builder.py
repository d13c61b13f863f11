"""common_chat_schema_builder (common/json-schema.cpp, b11434): JSON to a schema tree.

Each check below is one of the builder's, in its order, with its message: a schema it
refuses fails the whole request. Only references into the same document (`#/...`) are
read; each is built once, and a reference node points at its target when all are built.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.llamacpp.peg.schema_nodes import Document, Node, Property, SchemaError

#: The string formats the builder knows (any other leaves a schema without a type untyped).
FORMATS = frozenset(
    ("date", "time", "date-time", "uuid", "uuid1", "uuid2", "uuid3", "uuid4", "uuid5")
)
#: The type names the builder knows, and the node kind each makes.
_TYPE_KINDS = {"number": "number", "boolean": "boolean", "null": "null", "integer": "integer"}


def _is_integer(value: Any) -> bool:
    """A JSON integer (a boolean is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


class Builder:
    """Builds one document's tree from its JSON."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, Node | None] = {}
        self.pending: list[Node] = []

    def build(self) -> Document:
        """The document; its reference nodes point at their targets."""
        root = self.node(self.root, "#")
        refs = {ref: node for ref, node in self.refs.items() if node is not None}
        for ref_node in self.pending:
            ref_node.target = refs.get(ref_node.values[0])
        return Document(root, refs)

    def node(self, schema: Any, path: str) -> Node:
        """build_node."""
        if not isinstance(schema, dict):
            raise SchemaError(path, "schema must be an object")
        if "$ref" in schema:
            return self._ref(schema["$ref"], path)
        if "oneOf" in schema or "anyOf" in schema:
            key = "oneOf" if "oneOf" in schema else "anyOf"
            return self._alternatives("any_of", schema[key], f"{path}/{key}")
        kind = schema.get("type")
        if isinstance(kind, list):
            if not kind:
                raise SchemaError(path, "type must not be empty")
            alternatives = [
                self.node({**schema, "type": t}, f"{path}/type/{i}") for i, t in enumerate(kind)
            ]
            return Node("any_of", children=alternatives)
        if "const" in schema:
            return Node("const", values=[schema["const"]])
        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list) or not values:
                raise SchemaError(path, "enum must be a non-empty array")
            return Node("enum", values=list(values))
        if kind is not None and not isinstance(kind, str):
            raise SchemaError(path, "type must be a string or an array of strings")
        return self._typed(schema, kind or "", path)

    def _typed(self, schema: dict[str, Any], kind: str, path: str) -> Node:
        """build_node once the type is one name (or none)."""
        additional = schema.get("additionalProperties", True)
        has_properties = "properties" in schema or (
            "additionalProperties" in schema and additional is not True
        )
        if not kind:
            if has_properties:
                return self._object(schema, path)
            if "allOf" in schema:
                return self._alternatives("all_of", schema["allOf"], f"{path}/allOf")
            if "items" in schema or "prefixItems" in schema:
                return self._array(schema, path)
            stringy = any(k in schema for k in ("pattern", "minLength", "maxLength"))
            if stringy or _format(schema, path):
                return self._string(schema, path)
            return Node("any")
        if kind == "object":
            if not has_properties and "allOf" in schema:
                return self._alternatives("all_of", schema["allOf"], f"{path}/allOf")
            return self._object(schema, path)
        if kind == "string":
            if "allOf" in schema:
                return self._alternatives("all_of", schema["allOf"], f"{path}/allOf")
            return self._string(schema, path)
        if kind == "array":
            return self._array(schema, path)
        if kind == "integer":
            # get_bound: the lower and the upper bound, each inclusive first, are numbers.
            for pair in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
                key = next((k for k in pair if k in schema), None)
                if key is not None and not _is_number(schema[key]):
                    raise SchemaError(path, f"{key} must be a number")
            return Node("integer")
        if kind in _TYPE_KINDS:
            return Node(_TYPE_KINDS[kind])
        raise SchemaError(path, f"unrecognized type {kind}")

    def _ref(self, ref: Any, path: str) -> Node:
        """build_ref: a reference into this document, built once."""
        if not isinstance(ref, str):
            raise SchemaError(path, "$ref must be a string")
        if not ref.startswith("#/"):
            raise SchemaError(
                path,
                f"unsupported $ref {ref}, only references into the same document are supported",
            )
        if ref not in self.refs:
            self.refs[ref] = None
            self.refs[ref] = self.node(self._resolve(ref, path), ref)
        node = Node("ref", values=[ref])
        self.pending.append(node)
        return node

    def _resolve(self, ref: str, path: str) -> Any:
        """resolve_ref: the JSON a `#/a/b` pointer names."""
        target = self.root
        for token in ref[1:].split("/")[1:]:
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list):
                index = int(token) if token.isascii() and token.isdigit() else len(target)
                if index >= len(target):
                    raise SchemaError(path, f"cannot resolve $ref {ref}, {token} is out of range")
                target = target[index]
            else:
                raise SchemaError(path, f"cannot resolve $ref {ref}, {token} not found")
        return target

    def _alternatives(self, kind: str, alternatives: Any, path: str) -> Node:
        """build_alternatives: oneOf/anyOf, or allOf."""
        if not isinstance(alternatives, list):
            raise SchemaError(path, "must be an array of schemas")
        if not alternatives:
            raise SchemaError(path, "must not be empty")
        children = [self.node(alt, f"{path}/{i}") for i, alt in enumerate(alternatives)]
        return Node(kind, children=children)

    def _object(self, schema: dict[str, Any], path: str) -> Node:
        """build_object: the properties in order, each required or not."""
        listed = schema.get("required")
        required = {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()
        properties = []
        if "properties" in schema:
            found = schema["properties"]
            if not isinstance(found, dict):
                raise SchemaError(path, "properties must be an object")
            for name, prop in found.items():
                node = self.node(prop, f"{path}/properties/{name}")
                properties.append(Property(name, node, name in required))
        if "additionalProperties" in schema:
            additional = schema["additionalProperties"]
            if isinstance(additional, dict):
                self.node(additional, f"{path}/additionalProperties")
            elif not isinstance(additional, bool):
                raise SchemaError(path, "additionalProperties must be a boolean or a schema")
        return Node("object", properties=properties)

    def _array(self, schema: dict[str, Any], path: str) -> Node:
        """build_array: items as one schema (an array) or a list of them (a tuple)."""
        if "items" in schema or "prefixItems" in schema:
            key = "items" if "items" in schema else "prefixItems"
            items = schema[key]
            if isinstance(items, list):
                tuple_items = [self.node(item, f"{path}/{key}/{i}") for i, item in enumerate(items)]
                return Node("tuple", children=tuple_items)
            children = [self.node(items, f"{path}/{key}")]
        else:
            children = [Node("any")]
        for count in ("minItems", "maxItems"):
            _check_count(schema, count, path)
        return Node("array", children=children)

    def _string(self, schema: dict[str, Any], path: str) -> Node:
        """build_string: its pattern, format and lengths checked."""
        if "pattern" in schema and not isinstance(schema["pattern"], str):
            raise SchemaError(path, "pattern must be a string")
        _format(schema, path)
        for count in ("minLength", "maxLength"):
            _check_count(schema, count, path)
        return Node("string")


def _is_number(value: Any) -> bool:
    """A JSON number (a boolean is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_count(schema: dict[str, Any], key: str, path: str) -> None:
    """get_count: a non-negative integer when present."""
    if key in schema and not (_is_integer(schema[key]) and schema[key] >= 0):
        raise SchemaError(path, f"{key} must be a non-negative integer")


def _format(schema: dict[str, Any], path: str) -> bool:
    """get_format: whether the schema names a string format the builder knows."""
    if "format" not in schema:
        return False
    value = schema["format"]
    if not isinstance(value, str):
        raise SchemaError(path, "format must be a string")
    return value in FORMATS
