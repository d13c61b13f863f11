"""Whether a reading meets an expectation of Edge-LLM's own parser tests
(`parser_cases.json`), as those tests assert it.

A reading is `{"content", "reasoning", "calls": [{"name", "arguments", "id"}]}` (an id
None where the server makes up a random one), or `{"raises": {...}}`. An expectation
holds only the keys its test asserts: `content`, `reasoning` (exact text), `names`,
`arguments` (each call's arguments as JSON values), `arguments_text` (as exact text),
`argument` (`{"key", "values"}`: that key's value in each call), `id_prefix` and
`ids_distinct`.
"""

from __future__ import annotations

import json
from typing import Any


def meets(expect: dict[str, Any], reading: dict[str, Any]) -> bool:
    """Whether `reading` meets every key of `expect`."""
    if "raises" in reading:
        return False
    calls = reading["calls"]
    checks = {
        "content": lambda: reading["content"] == expect["content"],
        "reasoning": lambda: reading["reasoning"] == expect["reasoning"],
        "names": lambda: [call["name"] for call in calls] == expect["names"],
        "arguments": lambda: [json.loads(c["arguments"]) for c in calls] == expect["arguments"],
        "arguments_text": lambda: [c["arguments"] for c in calls] == expect["arguments_text"],
        "argument": lambda: (
            [json.loads(c["arguments"]).get(expect["argument"]["key"]) for c in calls]
            == expect["argument"]["values"]
        ),
        # A made-up id (None) is `call_` and 24 hex digits of a fresh uuid4.
        "id_prefix": lambda: all(
            (c["id"] or "call_").startswith(expect["id_prefix"]) for c in calls
        ),
        "ids_distinct": lambda: _distinct([c["id"] for c in calls]) == expect["ids_distinct"],
    }
    return all(checks[key]() for key in expect)


def _distinct(ids: list[str | None]) -> bool:
    given = [value for value in ids if value is not None]
    return len(set(given)) == len(given)
