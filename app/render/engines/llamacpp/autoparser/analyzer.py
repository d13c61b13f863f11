"""The differential autoparser's analysis: reasoning and content markers, then the tools.

common/chat-diff-analyzer.cpp (`autoparser::analyze_template`) learns a template's
markup by rendering probe conversations (`probes`) and diffing them (`diffing`):

1. reasoning (`analyze_reasoning`): history with and without reasoning_content, the
   generation prompt with thinking on and off, and (when the template takes tool
   calls) reasoning beside a call only;
2. content (`analyze_content`): whether an answer's text is wrapped in markers;
3. tools (`tool_analysis`), when the template's capabilities say it takes tool calls;
4. the per-family workarounds (`workarounds`).

The result, `Analysis`, is what the generator (`generator`) builds a parser from.
"""

from __future__ import annotations

import copy

from app.render.engines.llamacpp.apply.types import ChatTemplate
from app.render.engines.llamacpp.autoparser import probes
from app.render.engines.llamacpp.autoparser.analysis import (
    ALWAYS_WRAPPED,
    NONE,
    PLAIN,
    TAG_BASED,
    TOOLS_ONLY,
    Analysis,
)
from app.render.engines.llamacpp.autoparser.diffing import (
    marker,
    prune_whitespace,
    segmentize,
    space,
    trim,
)
from app.render.engines.llamacpp.autoparser.probes import Prober
from app.render.engines.llamacpp.autoparser.tool_analysis import analyze_tools
from app.render.engines.llamacpp.autoparser.workarounds import apply_workarounds


def analyze_reasoning(template: ChatTemplate) -> Analysis:
    """analyze_reasoning: the three reasoning comparisons, before the workarounds.

    The render (thinking's default, the prefill's tags) and the answer parser both start
    from this one result (`autoparser_cache`)."""
    prober = Prober(template)
    analysis = Analysis(caps=dict(template.caps))
    _reasoning_presence(prober, analysis)
    _thinking_enabled(prober, analysis)
    if template.caps.get("supports_tool_calls"):
        _reasoning_scope(prober, analysis)
    return analysis


def analyze(template: ChatTemplate, reasoning: Analysis | None = None) -> Analysis:
    """autoparser::analyze_template, without the message delimiters (not read by parsing);
    `reasoning` is `analyze_reasoning`'s result when the caller has it already."""
    prober = Prober(template)
    if reasoning is None:
        reasoning = analyze_reasoning(template)
    analysis = copy.deepcopy(reasoning)
    _content(prober, analysis)
    if template.caps.get("supports_tool_calls"):
        analysis.tools = analyze_tools(
            prober, analysis.reasoning_start, analysis.reasoning_end, template.caps
        )
    _collect_preserved(analysis)
    apply_workarounds(template.source, analysis)
    return analysis


def _wrapped(text: str, needle: str, spaced_post: bool) -> tuple[int, str, str] | None:
    """parse_anywhere(tag(pre, marker + space) + needle + space + tag(post, marker +
    space)): the first place a marker, `needle` and a marker follow one another; with
    `spaced_post` the space before the closing marker belongs to the post tag."""
    for pos in range(len(text)):
        end = marker(text, pos)
        if end is None:
            continue
        after_pre = space(text, end)
        if not text.startswith(needle, after_pre):
            continue
        post_start = after_pre + len(needle)
        cursor = space(text, post_start)
        closer = marker(text, cursor)
        if closer is None:
            continue
        tag_start = post_start if spaced_post else cursor
        return pos, text[pos:after_pre], text[tag_start : space(text, closer)]
    return None


def _delimited(text: str, needle: str) -> str | None:
    """parse_anywhere(needle + space + optional(tag(post, marker + space)) [+ rest]):
    the marker after the first `needle` ("" when none follows), None without `needle`."""
    pos = text.find(needle)
    if pos < 0:
        return None
    cursor = space(text, pos + len(needle))
    end = marker(text, cursor)
    return "" if end is None else text[cursor : space(text, end)]


def _reasoning_presence(prober: Prober, analysis: Analysis) -> None:
    """compare_reasoning_presence: reasoning in the history, between which markers."""
    thinking = {**probes.ANSWER, "reasoning_content": probes.THINKING_CONTENT}
    comparison = prober.compare_messages(
        [probes.USER, probes.ANSWER], [probes.USER, thinking], with_tools=False
    )
    if comparison is None or probes.THINKING_CONTENT not in comparison.diff.right:
        return
    found = _wrapped(comparison.output_b, probes.THINKING_CONTENT, spaced_post=True)
    if found is not None:
        _, pre, post = found
        if pre and post:
            analysis.reasoning_mode, analysis.reasoning_start = TAG_BASED, pre
            analysis.reasoning_end = post
        return
    post = _delimited(comparison.output_b, probes.THINKING_CONTENT)
    if post:
        analysis.reasoning_mode, analysis.reasoning_end = TAG_BASED, post


def _thinking_enabled(prober: Prober, analysis: Analysis) -> None:
    """compare_thinking_enabled: the generation prompt with thinking off, then on."""
    comparison = prober.compare(
        [probes.USER],
        lambda p: p.update(enable_thinking=True),
        add_generation_prompt=True,
        enable_thinking=False,
    )
    if comparison is None:
        return
    diff = comparison.diff
    left, right = trim(diff.left), trim(diff.right)
    if not left and diff.right:
        if right and comparison.output_b.endswith(right) and not analysis.reasoning_start:
            analysis.reasoning_start, analysis.reasoning_mode = diff.right, TAG_BASED
    elif not right and diff.left:
        if left and comparison.output_a.endswith(left) and not analysis.reasoning_end:
            segments = prune_whitespace(segmentize(comparison.output_a))
            if len(segments) >= 2 and segments[-1].value == left and segments[-2].marker:
                analysis.reasoning_start = segments[-2].value
            analysis.reasoning_end, analysis.reasoning_mode = diff.left, TAG_BASED
    elif left and right:
        _tail_anchored(comparison.output_a, comparison.output_b, analysis)
    if analysis.reasoning_mode == NONE and not analysis.reasoning_start and analysis.reasoning_end:
        analysis.reasoning_mode = TAG_BASED


def _tail_anchored(output_a: str, output_b: str, analysis: Analysis) -> None:
    """The noisy case: one prompt's last 64 characters, then two markers, in the other."""
    for base, extended in ((output_b, output_a), (output_a, output_b)):
        length = min(len(base), 64)
        anchor = base[len(base) - length :]
        pos = extended.rfind(anchor)
        if pos < 0 or pos + length >= len(extended):
            continue
        extra = trim(extended[pos + length :])
        if not extra:
            continue
        segments = prune_whitespace(segmentize(extra))
        if len(segments) == 2 and segments[0].marker and segments[1].marker:
            analysis.reasoning_start = analysis.reasoning_start or segments[0].value
            analysis.reasoning_end = analysis.reasoning_end or segments[1].value
            analysis.reasoning_mode = TAG_BASED
            return


def _reasoning_scope(prober: Prober, analysis: Analysis) -> None:
    """compare_reasoning_scope: reasoning the template shows only beside a tool call."""
    with_content = {**probes.ANSWER, "reasoning_content": probes.THINKING_CONTENT}
    with_call = {
        "role": "assistant",
        "content": None,
        "reasoning_content": probes.THINKING_CONTENT,
        "tool_calls": [
            probes.call(probes.FUN_FIRST, {probes.ARG_FIRST: "VVVV", probes.ARG_SECOND: "XXXX"})
        ],
    }
    comparison = prober.compare_messages([probes.USER, with_content], [probes.USER, with_call])
    if comparison is None:
        return
    text = probes.THINKING_CONTENT
    if text in comparison.output_a or text not in comparison.output_b:
        return
    analysis.reasoning_mode = TOOLS_ONLY
    found = _wrapped(comparison.output_b, text, spaced_post=False)
    if found is not None:
        _, analysis.reasoning_start, analysis.reasoning_end = found
        return
    post = _delimited(comparison.output_b, text)
    if post is not None:
        analysis.reasoning_end = post
    else:
        analysis.reasoning_mode = NONE


def _content(prober: Prober, analysis: Analysis) -> None:
    """analyze_content: markers around a plain answer's text, if any."""
    with_call = probes.calls_message(probes.call("test_func", {"arg1": "value1"}))
    with_reasoning = {
        "role": "assistant",
        "content": "",
        "reasoning_content": probes.THINKING_CONTENT,
    }
    base = [probes.USER, probes.ANSWER]
    tools = prober.compare_messages(base, [probes.USER, with_call])
    reasoning = prober.compare_messages(base, [probes.USER, with_reasoning])
    if tools is None or reasoning is None:
        return
    response = probes.ASSISTANT_MSG
    # The answer's text alone in the diff (maybe with a stray end marker), or right
    # after the reasoning's end marker: no content markers.
    plain = trim(tools.diff.left) == response and (
        _only_answer(reasoning.diff.left, reasoning.diff.left)
        or bool(
            analysis.reasoning_mode != NONE
            and analysis.reasoning_end
            and _after_end(reasoning.diff.left, analysis.reasoning_end, response)
        )
    )
    if plain:
        analysis.content_mode = PLAIN
        return
    rdiff = reasoning.diff.left
    end = analysis.reasoning_end
    if end and end in rdiff:
        rdiff = rdiff[rdiff.find(end) + len(end) :]
    pure = rdiff if len(rdiff) > len(tools.diff.left) else tools.diff.left
    found = _wrapped(pure, response, spaced_post=False)
    if found is not None:
        _, analysis.content_start, analysis.content_end = found
    if analysis.content_start or analysis.content_end:
        analysis.content_mode = ALWAYS_WRAPPED


def _only_answer(text: str, needle: str) -> bool:
    """space + needle + space + optional(marker) + space + end, from the start."""
    cursor = space(text, 0)
    if not text.startswith(needle, cursor):
        return False
    cursor = space(text, cursor + len(needle))
    end = marker(text, cursor)
    if end is not None:
        cursor = end
    return space(text, cursor) == len(text)


def _after_end(text: str, end_tag: str, response: str) -> bool:
    """parse_anywhere(end_tag + space + response)."""
    pos = text.find(end_tag)
    while pos >= 0:
        if text.startswith(response, space(text, pos + len(end_tag))):
            return True
        pos = text.find(end_tag, pos + 1)
    return False


def _collect_preserved(analysis: Analysis) -> None:
    """collect_preserved_tokens: every marker found, trimmed, once."""
    tools = analysis.tools
    for token in (
        analysis.reasoning_start,
        analysis.reasoning_end,
        analysis.content_start,
        analysis.content_end,
        *tools.markers(),
    ):
        token = trim(token)
        if token and token not in analysis.preserved_tokens:
            analysis.preserved_tokens.append(token)
