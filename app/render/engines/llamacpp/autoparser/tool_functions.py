"""The autoparser's function-name markers and the closer of a tagged call.

`extract_function_markers` (common/chat-diff-analyzer.cpp): two calls of different
functions, diffed, give the text around the name; the text after the last argument
value up to the call or section end gives the call's closer.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.llamacpp.autoparser import probes
from app.render.engines.llamacpp.autoparser.analysis import (
    TAG_WITH_JSON,
    TAG_WITH_TAGGED,
    ToolAnalysis,
)
from app.render.engines.llamacpp.autoparser.diffing import (
    marker,
    no_marker_run,
    space,
    trim,
    trim_leading,
)
from app.render.engines.llamacpp.autoparser.probes import Prober


def function_markers(prober: Prober, tools: ToolAnalysis) -> None:
    """extract_function_markers: what surrounds the function name, and the call's closer."""
    first = [probes.USER, probes.calls_message(probes.FIRST_CALL)]
    second = [probes.USER, probes.calls_message(probes.SECOND_CALL)]
    comparison = prober.compare_messages(first, second)
    if comparison is None:
        return
    diff = comparison.diff
    if probes.FUN_FIRST not in diff.left or probes.FUN_SECOND not in diff.right:
        return
    prefix_marker = tools.per_call_start or tools.section_start
    if prefix_marker and prefix_marker in diff.prefix:
        tools.name_prefix = diff.prefix[diff.prefix.rfind(prefix_marker) + len(prefix_marker) :]
    name_at = diff.left.find(probes.FUN_FIRST)
    after = name_at + len(probes.FUN_FIRST)
    tools.name_prefix += diff.left[:name_at]
    tools.name_suffix = diff.left[after : no_marker_run(diff.left, after)]
    if tools.mode == TAG_WITH_JSON:
        extension = _json_name_extension(diff.suffix)
        if extension is not None:
            tools.name_suffix += extension
    else:
        extension = diff.suffix[: no_marker_run(diff.suffix, 0)]
        tools.name_suffix += extension
        separator = _before_arg_start(diff.suffix[len(extension) :])
        if separator is not None:
            tools.args_separator = trim(separator)
    _closer(prober, tools, diff.suffix, first)
    tools.close = trim_leading(tools.close)


def _json_name_extension(suffix: str) -> str | None:
    """Markers and text up to the first `{` or `[` that opens no marker, if a marker
    still follows."""
    pos = 0
    while pos < len(suffix):
        end = marker(suffix, pos)
        if end is not None:
            pos = end
        elif suffix[pos] not in "{[":
            pos += 1
        else:
            break
    run = no_marker_run(suffix, pos)
    return suffix[:pos] if marker(suffix, run) is not None else None


def _before_arg_start(text: str) -> str | None:
    """What precedes the first marker + space + a probe argument name."""
    for pos in range(len(text)):
        end = marker(text, pos)
        if end is None:
            continue
        cursor = space(text, end)
        if text.startswith(probes.ARG_FIRST, cursor) or text.startswith(probes.ARG_SECOND, cursor):
            return text[:pos]
    return None


def _closer(prober: Prober, tools: ToolAnalysis, suffix: str, first: list[dict[str, Any]]) -> None:
    """The text between the last argument and the call or section end: function.close."""
    suffix_marker = tools.per_call_end or tools.section_end
    closer_suffix = ""
    if not suffix_marker:
        comparison = prober.compare_messages(first, [probes.USER, probes.ANSWER])
        if comparison is not None:
            left = comparison.diff.left
            found = left.find("YYYY")
            # C++: npos + 4 wraps round to 3 when the value is not there.
            closer_suffix = left[found + 4 :] if found >= 0 else left[3:]
    else:
        found = suffix.find(suffix_marker)
        closer_suffix = suffix if found < 0 else suffix[:found]
    if not closer_suffix:
        return
    value_at = closer_suffix.find("YYYY")
    if value_at < 0:
        return
    after = value_at + 4
    if tools.mode == TAG_WITH_TAGGED:
        end = marker(closer_suffix, space(closer_suffix, after))
        if end is not None:
            tools.close = closer_suffix[space(closer_suffix, end) :]
    elif tools.mode == TAG_WITH_JSON:
        post = closer_suffix[after:]
        last = max(post.rfind("}"), post.rfind("]"))
        if 0 <= last < len(post) - 1:
            tools.close = trim_leading(post[last + 1 :])
