"""Whether a tool parser's answer meets what one of vLLM's own tests asserts for it.

An expectation (`expect` in `parser_cases/tool_*.json`) holds the values the test checks,
each key optional: `names` (the calls' names, in order), `tools_called`, `arguments` (as
JSON values), `arguments_text` (exactly), `argument_types` (the Python type of each
argument, where the test checks it: 5 and 5.0 are equal as JSON values), `content`
(exactly), `content_contains`, `arguments_text_contains` (a text every call's arguments
hold, as written), `ids`, `id_pattern` (a regular expression every call's id
matches: the shape of the random ids the parser makes), and `calls_named` (the arguments
of the calls with a given name, where the test looks only for those). `xfail_in_test` marks an
expectation the test itself marks as failing. An answer is `{"tools_called", "tool_calls":
[[name, arguments, id?], ...], "content"}`, or `{"exception"}` when the parser raised.
Used by the suite and by `oracles/vllm/record_answers.py` (which records whether vLLM 0.33.0
itself meets each one).
"""

from __future__ import annotations

import json
import re
from typing import Any


def meets(expect: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Whether `answer` has every value `expect` names."""
    if "exception" in answer or "xfail_in_test" in expect:
        return False
    calls = answer["tool_calls"]
    names = [call[0] for call in calls]
    said_called = expect.get("tools_called", bool(expect.get("names")))
    if ("tools_called" in expect or "names" in expect) and answer["tools_called"] != said_called:
        return False
    checks = [
        expect.get("names", names) == names,
        expect.get("arguments_text", [c[1] for c in calls]) == [c[1] for c in calls],
        "content" not in expect or answer["content"] == expect["content"],
        expect.get("content_contains", "") in (answer["content"] or ""),
        all(expect.get("arguments_text_contains", "") in c[1] for c in calls),
        "ids" not in expect or [c[2] if len(c) > 2 else None for c in calls] == expect["ids"],
        "id_pattern" not in expect
        or all(re.fullmatch(expect["id_pattern"], c[2] or "") for c in calls),
    ]
    if not all(checks):
        return False
    try:
        parsed = [json.loads(call[1]) for call in calls]
    except ValueError:
        return not {"arguments", "argument_types", "calls_named"} & set(expect)
    if "arguments" in expect and parsed != expect["arguments"]:
        return False
    if (
        "argument_types" in expect
        and [
            {key: type(value).__name__ for key, value in arguments.items()} for arguments in parsed
        ]
        != expect["argument_types"]
    ):
        return False
    for name, wanted in expect.get("calls_named", {}).items():
        found = [args for call, args in zip(calls, parsed, strict=True) if call[0] == name]
        if found != wanted:
            return False
    return True
