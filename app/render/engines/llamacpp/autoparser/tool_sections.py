"""The autoparser's non-JSON tool section: the markers around a call's function name.

`analyze_tool_call_format_non_json` (common/chat-diff-analyzer.cpp): the marker that
holds the probe function's name, then up to two opening markers before it (section,
call) and the closing markers at the end of the rendered call.
"""

from __future__ import annotations

from app.render.engines.llamacpp.autoparser import probes
from app.render.engines.llamacpp.autoparser.analysis import ToolAnalysis
from app.render.engines.llamacpp.autoparser.diffing import marker, space


def _function_marker(clean: str, needle: str) -> tuple[str, str] | None:
    """The fun_marker parser: a `<...needle...>` or `[...needle` marker, with fun_pre."""
    for pos, char in enumerate(clean):
        if char not in "<[":
            continue
        closer = ">" if char == "<" else "]"
        stop_closer, stop_needle = clean.find(closer, pos + 1), clean.find(needle, pos + 1)
        if stop_needle < 0 or (0 <= stop_closer < stop_needle):
            continue
        after = stop_needle + len(needle)
        ahead = space(clean, after)
        if char == "<":
            if clean.startswith("<", ahead):
                continue
            end = clean.find(">", after)
            if end < 0:
                continue
            end = space(clean, end + 1)
        else:
            bracket = marker(clean, ahead) if clean.startswith("[", ahead) else None
            if bracket is not None:
                continue
            end = ahead
        return clean[pos:end], clean[pos:stop_needle]
    return None


def _two_markers_then(text: str, pos: int) -> tuple[int, int] | None:
    """marker + space at `pos`: the end of the marker and of its space, or None."""
    end = marker(text, pos)
    return None if end is None else (end, space(text, end))


def non_json(tools: ToolAnalysis, clean: str) -> None:
    """analyze_tool_call_format_non_json: section and per-call markers around the name."""
    found = _function_marker(clean, probes.FUN_FIRST)
    fun_marker, fun_pre = found if found is not None else (probes.FUN_FIRST, "")
    tags: dict[str, str] = {}
    for pos in range(len(clean)):
        first = _two_markers_then(clean, pos)
        second = _two_markers_then(clean, first[1]) if first else None
        if first is None or second is None:
            continue
        name_at = clean.find(fun_marker, second[1])
        if name_at < 0:
            continue
        tags = {
            "sec_start": clean[pos : first[1]],
            "call_start": clean[first[1] : second[1]],
            "rest": clean[name_at + len(fun_marker) :],
        }
        break
    if tags:
        end_tags = _closers(tags["rest"], double=True)
        tools.name_prefix = fun_pre + tools.name_prefix
    else:
        for pos in range(len(clean)):
            first = _two_markers_then(clean, pos)
            if first is not None and clean.startswith(fun_marker, first[1]):
                tags = {
                    "sec_start": clean[pos : first[1]],
                    "rest": clean[first[1] + len(fun_marker) :],
                }
                break
        end_tags = _closers(tags.get("rest", ""), double=False)
    tools.per_call_start = tags.get("call_start", "")
    tools.per_call_end = end_tags.get("call_end", "")
    tools.section_start = tags.get("sec_start", "")
    tools.section_end = end_tags.get("sec_end", "")


def _closers(rest: str, double: bool) -> dict[str, str]:
    """The closing markers at the very end: (call_end +) sec_end, each with its space."""
    for pos in range(len(rest)):
        first = _two_markers_then(rest, pos)
        if first is None:
            continue
        if not double:
            if first[1] == len(rest):
                return {"sec_end": rest[pos : first[1]]}
            continue
        second = _two_markers_then(rest, first[1])
        if second is not None and second[1] == len(rest):
            return {"call_end": rest[pos : first[1]], "sec_end": rest[first[1] : second[1]]}
    return {}
