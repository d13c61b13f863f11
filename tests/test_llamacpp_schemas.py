"""Tool schemas as llama.cpp's parsers read them (common/json-schema.cpp, b11434).

Before it builds a parser, llama.cpp turns each tool's parameters into a tree of typed
nodes and refuses what it cannot read; the tree then decides whether an XML-style value
is text or JSON. `oracles/llamacpp/constructs.json` (`schemas`) records a call read
by the library's parsers with such parameters, for a shared template of four parser
families (Qwen3-Coder's handler, MiniMax-M3's, the autoparser's JSON and tagged calls).
"""

from __future__ import annotations

from typing import Any

import pytest

from app.render.core import RenderRequest
from app.render.engines.llamacpp.answers import read_completion
from app.render.engines.llamacpp.peg.schema import SchemaError, document, tool_parameters
from app.render.limits import DEFAULT_LIMITS
from oracles.llamacpp import CONSTRUCTS, load
from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()


def readings() -> dict[str, Any]:
    return load(CONSTRUCTS)["schemas"]


@pytest.mark.parametrize("name", list(readings()))
def test_calls_are_read_with_the_schema_as_llama_cpp_reads_it(name: str) -> None:
    recorded = readings()[name]
    function = {"name": "f", "description": "d", "parameters": recorded["parameters"]}
    request = RenderRequest(
        template=(TEMPLATES_DIR / recorded["template"]).read_text(encoding="utf-8"),
        messages=[{"role": "user", "content": "Hi"}],
        tools=[{"type": "function", "function": function}],
        add_generation_prompt=True,
    )
    answer = read_completion(request, recorded["completion"], DEFAULT_LIMITS)
    if "error" in recorded:
        assert answer.error == recorded["error"]
        return
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in answer.tool_calls]
    assert (answer.error, calls) == (None, recorded["tool_calls"])


def test_missing_or_empty_parameters_are_an_empty_object_schema() -> None:
    empty = {"type": "object", "properties": {}}
    assert tool_parameters({"name": "f"}) == tool_parameters({"parameters": None}) == empty
    assert tool_parameters({"parameters": {}}) == empty
    assert tool_parameters({"parameters": {"type": "string"}}) == {"type": "string"}


def test_references_resolve_inside_the_document_and_may_cycle() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/node"}]}},
    }
    (prop,) = document(schema).root.properties
    assert prop.schema.may_be_string()
    assert prop.schema.value_types() == {"string"}
    with pytest.raises(SchemaError, match=r"at #: cannot resolve \$ref #/nowhere"):
        document({"$ref": "#/nowhere"})
