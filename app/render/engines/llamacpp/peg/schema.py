"""JSON schemas as llama.cpp reads a tool's parameters (common/json-schema.cpp, b11434).

Before a parser is built, llama.cpp turns every schema it uses (each tool's parameters,
the response format) into a tree of typed nodes, and refuses one it cannot read with
"JSON schema error at PATH: ...", which fails the request. The parsers then ask a
parameter's node whether its value may be a string (`may_be_string`: read as raw text)
or which JSON types it may take (`value_types`: Qwen3-Coder tries JSON first for a
union with string). The tree is built here by the same rules, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.render.engines.llamacpp.peg.schema_builder import Builder
from app.render.engines.llamacpp.peg.schema_nodes import Document, Node, Property, SchemaError

#: The tree's types are read from here too (`schema_nodes` holds them).
__all__ = [
    "Document",
    "Node",
    "Property",
    "SchemaError",
    "document",
    "foreach_parameter",
    "tool_parameters",
]


def tool_parameters(function: dict[str, Any]) -> Any:
    """common_chat_tool_parameters: the parameters, or an empty object schema when they
    are missing, null or an empty object."""
    parameters = function.get("parameters")
    if parameters is None or parameters == {}:
        return {"type": "object", "properties": {}}
    return parameters


def document(schema: Any) -> Document:
    """common_chat_schema_from_json: the tree, or a SchemaError."""
    return Builder(schema).build()


def foreach_parameter(function: dict[str, Any]) -> Iterator[Property]:
    """The properties of the function's parameters, in schema order (none unless the
    parameters are an object schema); a SchemaError for parameters llama.cpp refuses."""
    root = document(tool_parameters(function)).root
    if root.kind == "object":
        yield from root.properties
