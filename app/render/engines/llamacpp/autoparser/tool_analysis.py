"""The autoparser's tool-call analysis: the markup around a call, its name and arguments.

`analyze_tools` (common/chat-diff-analyzer.cpp) renders a turn without and with a
call to find the tool section, decides from where the probe names sit whether the
call is JSON (`JSON_NATIVE`), tags around JSON arguments (`TAG_WITH_JSON`) or tags
around each argument (`TAG_WITH_TAGGED`), and for the tagged forms diffs further
pairs of calls to find the function-name, argument and call-id markers.
"""

from __future__ import annotations

import json
from typing import Any

from app.render.engines.llamacpp.autoparser import probes
from app.render.engines.llamacpp.autoparser.analysis import (
    JSON_NATIVE,
    NONE,
    TAG_WITH_JSON,
    TAG_WITH_TAGGED,
    ToolAnalysis,
)
from app.render.engines.llamacpp.autoparser.diffing import (
    diff_split,
    space,
    trim,
    trim_leading,
)
from app.render.engines.llamacpp.autoparser.probes import Prober
from app.render.engines.llamacpp.autoparser.tool_functions import function_markers
from app.render.engines.llamacpp.autoparser.tool_markers import (
    extract_argument_names,
    extract_argument_values,
    extract_call_id,
)
from app.render.engines.llamacpp.autoparser.tool_sections import non_json


def analyze_tools(
    prober: Prober, reasoning_start: str, reasoning_end: str, caps: dict[str, bool]
) -> ToolAnalysis:
    """analyze_tools' constructor: the format, then the tagged forms' finer markers."""
    tools = ToolAnalysis()
    parallel = bool(caps.get("supports_parallel_tool_calls"))
    comparison = prober.compare_messages(
        [probes.USER, probes.ANSWER], [probes.USER, probes.calls_message(probes.FIRST_CALL)]
    )
    if comparison is None or not comparison.diff.right:
        return tools
    _call_format(prober, tools, comparison.diff.right, reasoning_start, reasoning_end, parallel)
    if tools.mode in (NONE, JSON_NATIVE):
        return tools
    if parallel:
        _per_call_markers(prober, tools)
    function_markers(prober, tools)
    if tools.mode == TAG_WITH_TAGGED:
        extract_argument_names(prober, tools)
        extract_argument_values(prober, tools)
    # extract_argument_separator: the probe names share no prefix, so it is always "".
    tools.arg_separator = ""
    extract_call_id(prober, tools)
    return tools


def _in_json(haystack: str, needle: str) -> bool:
    """`{` or `:`, spaces, then the needle in double quotes, anywhere."""
    quoted = f'"{needle}"'
    for pos, char in enumerate(haystack):
        if char in "{:" and haystack.startswith(quoted, space(haystack, pos + 1)):
            return True
    return False


def _call_format(
    prober: Prober,
    tools: ToolAnalysis,
    haystack: str,
    reasoning_start: str,
    reasoning_end: str,
    parallel: bool,
) -> None:
    """analyze_tool_call_format."""
    if _in_json(haystack, probes.FUN_FIRST):
        tools.mode = JSON_NATIVE
    elif _in_json(haystack, probes.ARG_FIRST):
        tools.mode = TAG_WITH_JSON
    else:
        tools.mode = TAG_WITH_TAGGED
    clean = haystack
    for tag in (reasoning_start, reasoning_end):
        if tag and tag in clean:
            pos = clean.find(tag)
            clean = clean[:pos] + clean[pos + len(tag) :]
    if tools.mode == JSON_NATIVE:
        _json_native(tools, clean)
        if parallel:
            two = prober.compare_messages(
                [probes.USER, probes.calls_message(probes.FIRST_CALL)],
                [probes.USER, probes.calls_message(probes.FIRST_CALL, probes.SECOND_CALL)],
            )
            if two is not None and tools.section_start and tools.section_start in two.diff.right:
                _section_to_per_call(tools)
    else:
        non_json(tools, clean)
    tools.section_end = trim(tools.section_end)
    tools.per_call_end = trim(tools.per_call_end)


def _section_to_per_call(tools: ToolAnalysis) -> None:
    tools.per_call_start, tools.per_call_end = tools.section_start, tools.section_end
    tools.section_start = tools.section_end = ""


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_native(tools: ToolAnalysis, clean: str) -> None:
    """analyze_tool_call_format_json_native: the call object's fields and its markers."""
    json_start, json_end = clean.find("{"), clean.rfind("}")
    if json_start < 0 or json_end < 0:
        raise ValueError("no JSON object in the rendered tool call")
    cut = clean[json_start : json_end + 1]
    structure = json.loads(cut)  # a ValueError here fails the generation, as in C++

    def register(prefix: str, key: str, value: Any) -> None:
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, str) and "call0000" in value:
            tools.id_field = path
        elif isinstance(value, str) and value == probes.FUN_FIRST:
            tools.name_field = path
        elif probes.ARG_FIRST in _dump(value):
            tools.args_field = path
        elif "id" in key:
            tools.gen_id_field = path

    for key, value in structure.items() if isinstance(structure, dict) else ():
        if key == probes.FUN_FIRST:
            tools.fun_name_is_key = True
            tools.name_field = tools.args_field = ""
            continue
        if isinstance(value, dict) and probes.ARG_FIRST not in _dump(value):
            tools.function_field = key
            for sub_key, sub_value in value.items():
                register(key, sub_key, sub_value)
        register("", key, value)
    wrapped = _array_around(clean, cut)
    if wrapped is not None:
        tools.tools_array_wrapped = True
        json_start -= len(wrapped[0])
        json_end += len(wrapped[1])
    json_end += 1
    located = []
    for name in (tools.name_field, tools.args_field, tools.id_field, tools.gen_id_field):
        if name:
            pos = clean.find(name)
            located.append((pos if pos >= 0 else len(clean) + 10**9, name))
    tools.parameter_order = [name for _, name in sorted(located)]
    tools.section_start = trim_leading(clean[:json_start])
    tools.section_end = trim(clean[json_end:])
    if tools.tools_array_wrapped and tools.section_end == "]":
        tools.section_end = ""


def _array_around(text: str, cut: str) -> tuple[str, str] | None:
    """`[` + space + the object + space + `]`, anywhere: the two bracket tags."""
    pos = text.find("[")
    while pos >= 0:
        inner = space(text, pos + 1)
        if text.startswith(cut, inner):
            after = space(text, inner + len(cut))
            if text.startswith("]", after):
                return text[pos:inner], text[inner + len(cut) : after + 1]
        pos = text.find("[", pos + 1)
    return None


def _per_call_markers(prober: Prober, tools: ToolAnalysis) -> None:
    """check_per_call_markers: markers repeated for a second call belong to each call."""
    one = [probes.USER, probes.calls_message(probes.FIRST_CALL)]
    two = [probes.USER, probes.calls_message(probes.FIRST_CALL, probes.SECOND_CALL)]
    comparison = prober.compare_messages(one, two)
    if comparison is None:
        return
    second = trim_leading(diff_split(comparison.diff.suffix, comparison.diff.right).right)
    if tools.section_start and second.startswith(tools.section_start):
        _section_to_per_call(tools)
    if tools.per_call_end:
        calls_one = _count(comparison.output_a, tools.per_call_end)
        if calls_one > 0 and calls_one == _count(comparison.output_b, tools.per_call_end):
            tools.section_end, tools.per_call_end = tools.per_call_end, ""


def _count(haystack: str, needle: str) -> int:
    return haystack.count(needle)
