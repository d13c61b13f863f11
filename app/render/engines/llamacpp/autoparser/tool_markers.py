"""The autoparser's finer tool markers: argument names and values, and the call id.

The rest of common/chat-diff-analyzer.cpp's `analyze_tools` for the tagged formats
(`extract_argument_name_markers`, `extract_argument_value_markers`,
`extract_call_id_markers`), each diffing two calls that differ in one detail.
"""

from __future__ import annotations

from app.render.engines.llamacpp.autoparser import probes
from app.render.engines.llamacpp.autoparser.analysis import ToolAnalysis
from app.render.engines.llamacpp.autoparser.diffing import first_marker, marker, space
from app.render.engines.llamacpp.autoparser.probes import Prober


def _last_marker_start(text: str) -> int | None:
    """Where the C++ `last_marker` pattern first matches: a marker after whose end no
    marker starts."""
    starts = [pos for pos in range(len(text)) if marker(text, pos) is not None]
    if not starts:
        return None
    for start in starts:
        end = marker(text, start)
        if end is not None and starts[-1] < end:
            return start
    return None


def find_last_marker(text: str) -> str:
    """The last marker of `text`, alone ("" without one)."""
    start = _last_marker_start(text)
    if start is None:
        return ""
    end = marker(text, start)
    return text[start:end] if end is not None else ""


def _last_marker_tail(text: str) -> str | None:
    """The last marker and the text after it, to the end (None without a marker)."""
    start = _last_marker_start(text)
    return None if start is None else text[start:]


def _name_and_suffix(text: str, name: str, stops: str) -> tuple[str, str] | None:
    """tag(pre, until(name)) + name + tag(suffix, until_one_of(stops))."""
    at = text.find(name)
    if at < 0:
        return None
    after = at + len(name)
    end = after
    while end < len(text) and text[end] not in stops:
        end += 1
    return text[:at], text[after:end]


def extract_argument_names(prober: Prober, tools: ToolAnalysis) -> None:
    """extract_argument_name_markers: the markup around an argument's name."""
    one = probes.call(probes.FUN_FIRST, {probes.ARG_FIRST: "XXXX"})
    other = probes.call(probes.FUN_FIRST, {probes.ARG_SECOND: "YYYY"})
    comparison = prober.compare_messages(
        [probes.USER, probes.calls_message(one)], [probes.USER, probes.calls_message(other)]
    )
    if comparison is None:
        return
    diff = comparison.diff
    if not diff.left or not diff.right:
        return
    left = _name_and_suffix(diff.left, probes.ARG_FIRST, '"X')
    right = _name_and_suffix(diff.right, probes.ARG_SECOND, '"Y')
    if left is not None and right is not None and left[0] and left == right:
        tools.arg_name_prefix, tools.arg_name_suffix = left
        return
    if diff.left.startswith(probes.ARG_FIRST) and diff.right.startswith(probes.ARG_SECOND):
        tail = _last_marker_tail(diff.prefix)
        tools.arg_name_prefix = tail if tail is not None else diff.prefix
        after_first = diff.left[len(probes.ARG_FIRST) :] + diff.suffix
        start = next(
            (pos for pos in range(len(after_first)) if marker(after_first, pos) is not None), None
        )
        if start is not None:
            end = marker(after_first, start)
            assert end is not None
            tools.arg_name_suffix = after_first[: space(after_first, end)]


def extract_argument_values(prober: Prober, tools: ToolAnalysis) -> None:
    """extract_argument_value_markers: the markup around an argument's value."""
    one = probes.call(probes.FUN_FIRST, {probes.ARG_FIRST: "XXXX"})
    other = probes.call(probes.FUN_FIRST, {probes.ARG_FIRST: "YYYY"})
    comparison = prober.compare_messages(
        [probes.USER, probes.calls_message(one)], [probes.USER, probes.calls_message(other)]
    )
    if comparison is None:
        return
    diff = comparison.diff
    if diff.left != "XXXX" or diff.right != "YYYY":
        return
    ending = probes.ARG_FIRST + tools.arg_name_suffix
    prefix = diff.prefix
    if ending in prefix:
        prefix = prefix[prefix.rfind(ending) + len(ending) :]
    if prefix:
        tail = _last_marker_tail(prefix)
        tools.arg_value_prefix = tail if tail is not None else prefix
    value_suffix = diff.suffix
    if tools.close:
        if tools.close in value_suffix:
            value_suffix = value_suffix[: value_suffix.find(tools.close)]
    elif tools.per_call_end or tools.section_end:
        end_marker = tools.per_call_end or tools.section_end
        if end_marker in value_suffix:
            value_suffix = value_suffix[: value_suffix.find(end_marker)]
    if value_suffix.strip(" \t\n\v\f\r"):
        tools.arg_value_suffix = value_suffix


def _marker_before_id(text: str, id_part: str) -> str | None:
    """tag(prefix, marker) + text without markers or the id's start + the id, anywhere."""
    for pos in range(len(text)):
        end = marker(text, pos)
        if end is None:
            continue
        cursor = end
        while (
            cursor < len(text)
            and marker(text, cursor) is None
            and not text.startswith(id_part, cursor)
        ):
            cursor += 1
        if text.startswith(id_part, cursor):
            return text[pos:end]
    return None


def extract_call_id(prober: Prober, tools: ToolAnalysis) -> None:
    """extract_call_id_markers: where the call id sits, and the markers around it."""
    alt = probes.call(probes.FUN_FIRST, probes.BOTH_ARGS, probes.CALL_ID_999)
    comparison = prober.compare_messages(
        [probes.USER, probes.calls_message(probes.FIRST_CALL)],
        [probes.USER, probes.calls_message(alt)],
    )
    if comparison is None:
        return
    diff = comparison.diff
    if not diff.left and not diff.right:
        return
    id_part = "call"  # the common prefix of call00001 and call99999
    name = probes.FUN_FIRST
    in_prefix, in_suffix = diff.prefix.rfind(name), diff.suffix.find(name)
    if in_prefix >= 0 and in_suffix < 0:
        args_in_prefix = diff.prefix.find("{", in_prefix)
        args_in_suffix = diff.suffix.find("{")
        if args_in_suffix >= 0 and args_in_prefix < 0:
            tools.call_id_pos = "BETWEEN_FUNC_AND_ARGS"
            after_func = diff.prefix[in_prefix + len(name) :]
            found = _marker_before_id(after_func, id_part)
            tools.call_id_prefix = found if found is not None else find_last_marker(after_func)
            tools.call_id_suffix = first_marker(diff.suffix)
        elif args_in_prefix >= 0:
            tools.call_id_pos = "POST_ARGS"
            after_args = diff.prefix[args_in_prefix:]
            brace = after_args.rfind("}")
            if brace >= 0:
                tools.call_id_prefix = find_last_marker(after_args[brace + 1 :])
            tools.call_id_suffix = first_marker(diff.suffix)
    elif in_suffix >= 0 and in_prefix < 0:
        tools.call_id_pos = "PRE_FUNC_NAME"
        tools.call_id_prefix = find_last_marker(diff.prefix)
        tools.call_id_suffix = first_marker(diff.suffix[:in_suffix])
    if tools.call_id_prefix == tools.args_end:
        tools.call_id_prefix = ""
    if tools.call_id_suffix == tools.args_start:
        tools.call_id_suffix = ""
    if (
        tools.call_id_pos != "NONE"
        and tools.call_id_suffix
        and tools.per_call_end.startswith(tools.call_id_suffix)
    ):
        tools.per_call_end = ""
