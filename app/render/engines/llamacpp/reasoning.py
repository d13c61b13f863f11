"""Where llama.cpp's autoparser thinks reasoning starts and ends, and the continuation.

Templates without a dedicated handler go to the differential autoparser
(common/chat-diff-analyzer.cpp, `analyze_reasoning`). It renders probe
conversations that differ in one respect (with and without reasoning_content,
thinking on and off, with and without a tool call) and reads the reasoning tags off
the difference. The tags matter for the prompt in two ways: llama-server turns
`enable_thinking` on by default only when reasoning was found, and when a final
assistant message is continued `peg_generator::generate_parser`
(chat-auto-parser-generator.cpp) writes the template's generation prompt up to the
start tag, the start tag, the reasoning, and — when the content is continued — the
end tag and the content.

The analyzer's rules change from one llama.cpp version to the next; the rules here
follow `compare_reasoning_presence`, `compare_thinking_enabled` (including its
"<think> versus </think>" case), `compare_reasoning_scope` and the workarounds that set
the tags, and keep the whitespace around the tags that the recorded prompts show
(Qwen3: "<think>\n" ... "\n</think>\n\n"; Nemotron Nano v2's workaround: "<think>\n").
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.render.bounded import generate_bounded
from app.render.engines.llamacpp.jinja import compile_llamacpp
from app.render.engines.llamacpp.messages import ChatMessage
from app.render.engines.llamacpp.reasoning_workarounds import tags_after_workarounds

#: The probe texts of chat-diff-analyzer.cpp.
USER_MSG = "U_USER_MSG Hello END_U"
ASSISTANT_MSG = "A_ASST_MSG I can help END_A"
THINKING_CONTENT = "REASON_PART I am thinking END_R"

#: peg-parser's `marker()`: text delimited by a pair of <> or [].
_MARKER = r"(?:<[^<>]*>|\[[^\[\]]*\])"
_SPACE = r"[ \t\n\r]*"


@dataclass(frozen=True)
class ReasoningTags:
    """analyze_reasoning's result: the tags around reasoning ("" when not found)."""

    start: str = ""
    end: str = ""

    def __bool__(self) -> bool:
        """Whether reasoning was found at all (the autoparser's mode is not NONE)."""
        return bool(self.start or self.end)


def _trim(text: str) -> str:
    return text.strip(" \n\t\r")


def _split(a: str, b: str) -> tuple[str, str, str]:
    """compare_variants: the common prefix, then the differing middles of a and of b."""
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(a), len(b)) - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]
    ):
        suffix += 1
    return a[:prefix], a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]


def _segments(text: str) -> list[str]:
    """segmentize_markers, whitespace-only segments pruned: markers and the text between."""
    return [part for part in re.split(f"({_MARKER})", text) if _trim(part)]


def _is_marker(text: str) -> bool:
    return re.fullmatch(_MARKER, text) is not None


def _around(rendered: str) -> tuple[str, str]:
    """The tags around the probe reasoning in a render: marker + space before, space +
    marker + space after ("" where there is none)."""
    found = re.search(
        f"({_MARKER}{_SPACE})?{re.escape(THINKING_CONTENT)}({_SPACE}{_MARKER}{_SPACE})?",
        rendered,
    )
    if not found:
        return "", ""
    return found.group(1) or "", found.group(2) or ""


def _presence(render: Any, user: dict[str, str]) -> tuple[str, str]:
    """compare_reasoning_presence: history reasoning wrapped, delimited or in the turn."""
    plain = {"role": "assistant", "content": ASSISTANT_MSG}
    thinking = {**plain, "reasoning_content": THINKING_CONTENT}
    a, b = render([user, plain], False, True, False), render([user, thinking], False, True, False)
    if a is None or b is None:
        return "", ""
    prefix, left, right = _split(a, b)
    if THINKING_CONTENT not in right:
        return "", ""
    segments = _segments(right)
    start, end = _around(b)
    if len(segments) >= 3 and _trim(segments[1]) == THINKING_CONTENT and _is_marker(segments[0]):
        return start, end  # opening marker, reasoning, closing marker
    if len(segments) >= 2 and _trim(segments[0]) == THINKING_CONTENT:
        return start, end  # delimited: the closing marker is new, the opener may be shared
    if segments == [THINKING_CONTENT] and not _trim(left):
        # The markers are shared by both renders: the opener ends the common prefix,
        # the closer starts the common suffix.
        before = _segments(prefix)
        if before and _is_marker(before[-1]) and start and end:
            return start, end
    return "", ""


def _generation_prompt(render: Any, user: dict[str, str], thinking: bool) -> str | None:
    without, with_prompt = (
        render([user], False, thinking, False),
        render([user], True, thinking, False),
    )
    if without is None or with_prompt is None:
        return None
    return with_prompt[len(_split(without, with_prompt)[0]) :]


def _thinking_switch(render: Any, user: dict[str, str], start: str, end: str) -> tuple[str, str]:
    """compare_thinking_enabled: what enable_thinking changes at the end of the prompt.

    The whole renders are compared first; when the switch also changes text earlier on
    (a system prompt that mentions the mode), only the generation prompts are.
    """
    off, on = render([user], True, False, False), render([user], True, True, False)
    if off is None or on is None:
        return start, end
    found = _switch_tags(off, on, start, end)
    if found == (start, end):
        off, on = _generation_prompt(render, user, False), _generation_prompt(render, user, True)
        if off is not None and on is not None:
            found = _switch_tags(off, on, start, end)
    return found


def _switch_tags(off: str, on: str, start: str, end: str) -> tuple[str, str]:
    """The tags told apart by two renders that differ only in enable_thinking."""
    prefix, left, right = _split(off, on)
    if not _trim(left) and _trim(right) and on.endswith(_trim(right)) and not start:
        return _trim(right), end  # forced open: thinking on opens the block
    if start or end or _trim(right):
        return start, end
    if _trim(left) == "/":
        # <think> versus </think>: the renders end in the opener and the closer.
        tail_on, tail_off = _segments(_trim(on)), _segments(_trim(off))
        if tail_on and tail_off and _is_marker(tail_on[-1]) and _is_marker(tail_off[-1]):
            return tail_on[-1], tail_off[-1]
        return start, end
    closed = _segments(left)
    if len(closed) == 2 and all(_is_marker(s) for s in closed):
        return closed[0], closed[1]  # thinking off writes an empty block
    before = _segments(prefix)
    if len(closed) == 1 and _is_marker(closed[0]) and before and _is_marker(before[-1]):
        return before[-1], left.rstrip(" \n\t\r")  # thinking off closes the opened block
    return start, end


def analyze_reasoning(render: Any, supports_tool_calls: bool, source: str) -> ReasoningTags:
    """analyze_reasoning plus the workarounds that concern reasoning.

    `render(messages, add_generation_prompt, enable_thinking, with_tools)` renders a
    probe, returning None when the template fails (the analyzer then skips the step).
    """
    user = {"role": "user", "content": USER_MSG}
    start, end = _presence(render, user)
    start, end = _thinking_switch(render, user, start, end)
    if supports_tool_calls:
        # compare_reasoning_scope: reasoning shown only beside tool calls.
        call = {
            "id": "call00001",
            "type": "function",
            "function": {"name": "FFF_FIRST_FUN_F", "arguments": {"AA_ARG_FST_AA": "VVVV"}},
        }
        plain = {
            "role": "assistant",
            "content": ASSISTANT_MSG,
            "reasoning_content": THINKING_CONTENT,
        }
        with_call = {"role": "assistant", "content": None, "reasoning_content": THINKING_CONTENT}
        with_call["tool_calls"] = [call]
        a, b = (
            render([user, plain], False, True, True),
            render([user, with_call], False, True, True),
        )
        if a is not None and b is not None and THINKING_CONTENT not in a and THINKING_CONTENT in b:
            start, end = _around(b)
    return _workarounds(source, start, end)


def _workarounds(source: str, start: str, end: str) -> ReasoningTags:
    """The analyzer's workarounds that set the reasoning tags (no tags found: its mode is
    NONE). The tags keep their whitespace: the continuation writes the start tag as it is."""
    found_none = not start and not end
    return ReasoningTags(*tags_after_workarounds(source, start, end, found_none=found_none))


#: The two tools of the analyzer's tool probe (only their presence matters here).
_PROBE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    "AA_ARG_FST_AA": {"type": "string", "description": "First argument"},
                    "BB_ARG_SND_BB": {"type": "string", "description": "Second argument"},
                },
                "required": [],
            },
        },
    }
    for name, description in (
        ("FFF_FIRST_FUN_F", "Test function foo"),
        ("SSS_SECOND_FUN_S", "Test function bar"),
    )
]


def _probe(
    source: str,
    bos: str,
    eos: str,
    messages: list[dict[str, Any]],
    agp: bool,
    thinking: bool,
    tools: bool,
    max_chars: int,
) -> str | None:
    """One analyzer render (compare_variants); a failing template gives None.

    It writes at most `max_chars`, the output limit of the render it serves.
    """
    variables: dict[str, Any] = {
        "messages": copy.deepcopy(messages),
        "bos_token": bos,
        "eos_token": eos,
        "enable_thinking": thinking,
    }
    if tools:
        variables["tools"] = copy.deepcopy(_PROBE_TOOLS)
    if agp:
        variables["add_generation_prompt"] = True
    try:
        return generate_bounded(compile_llamacpp(source), variables, max_chars)
    except Exception:
        # compare_variants gives nothing when a render fails: the analyzer skips the step.
        return None


@lru_cache(maxsize=128)
def reasoning_tags(
    source: str, bos: str, eos: str, supports_tool_calls: bool, max_chars: int
) -> ReasoningTags:
    """The autoparser's reasoning tags for a template, cached per process; each probe
    render writes at most `max_chars`."""

    def render(
        messages: list[dict[str, Any]], agp: bool, thinking: bool, tools: bool
    ) -> str | None:
        return _probe(source, bos, eos, messages, agp, thinking, tools, max_chars)

    return analyze_reasoning(render, supports_tool_calls, source)


def autoparser_continuation(
    tags: ReasoningTags, generation_prompt: str, message: ChatMessage, content: bool
) -> str:
    """generate_parser's continuation: generation prompt up to the start tag, tags, text."""
    text = generation_prompt
    if tags.start:
        at = text.find(tags.start)
        text = (text if at < 0 else text[:at]) + tags.start + message.reasoning_content
        if content:
            text += tags.end
    if content:
        text += message.render_content()
    return text
