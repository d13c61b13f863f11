"""What is wrong with a template, found by rendering probe conversations with marker strings.

A template raises no error when it drops tool results or prints today's date: it just
renders something else. Each probe renders a small conversation whose strings are
unlikely to occur by chance, then checks which of them reached the prompt. These run in
a sandbox worker (`render` goes through the same sandboxed core as every render).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from app.errors import bounded_text
from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.text import common_prefix_length

Render = Callable[[RenderRequest], str]

USER = "PROBE_USER_7f3a"
USER_2 = "PROBE_USER_2c9e"
SYSTEM = "PROBE_SYSTEM_41bd"
ANSWER = "PROBE_ANSWER_95e0"
REASONING = "PROBE_REASONING_d26f"
RESULT = "PROBE_RESULT_0b7c"
CALL_ID = "call_PROBE_8e1d"
TOOL_NAME = "probe_lookup"
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Look something up.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look up."}},
            "required": ["query"],
        },
    },
}
#: Two dates far apart: a template whose prompt differs between them prints the date.
DATES = (datetime(2024, 1, 15, 9, 30), datetime(2025, 8, 30, 18, 5))
_DATE_CODE = re.compile(r"strftime_now|date_string|\bdatetime\b|\bnow\b")


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a stable id, how bad it is, a sentence, and the template line if known."""

    id: str
    severity: str  # "error", "warning" or "info"
    message: str
    line: int | None = None

    def __post_init__(self) -> None:
        # A finding may quote the request's own text (a special token, a marker).
        object.__setattr__(self, "message", bounded_text(self.message, self.id))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def line_of(template: str, needle: str | re.Pattern[str]) -> int | None:
    """The 1-based line of the first occurrence of `needle` in the template source."""
    match = re.search(needle if isinstance(needle, re.Pattern) else re.escape(needle), template)
    return template.count("\n", 0, match.start()) + 1 if match else None


def _try(render: Render, request: RenderRequest) -> str | TemplateProblem:
    try:
        return render(request)
    except TemplateProblem as problem:
        return problem


def _probe(base: RenderRequest, messages: list[dict[str, Any]], **changes: Any) -> RenderRequest:
    fields = {"tools": None, "add_generation_prompt": False, "continue_final_message": False}
    return replace(base, messages=messages, **{**fields, **changes})


def default_system_prompt(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """Text the template writes into a system turn that nobody gave."""
    with_system = _try(render, _probe(base, [_msg("system", SYSTEM), _msg("user", USER)]))
    without = _try(render, _probe(base, [_msg("user", USER)]))
    if not isinstance(with_system, str) or not isinstance(without, str):
        return []
    header = with_system[: with_system.index(SYSTEM)] if SYSTEM in with_system else None
    if not header or not without.startswith(header):
        return []
    suffix = common_prefix_length(without[::-1], with_system[::-1])
    injected = without[len(header) : len(without) - suffix].strip()
    if not injected or USER in injected:
        return []
    shown = injected if len(injected) <= 120 else injected[:117] + "…"
    return [
        Diagnostic(
            "default-system-prompt",
            "info",
            f"Without a system message the template writes its own: {shown!r}.",
            line_of(base.template, injected[:30]),
        )
    ]


def date_dependence(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """A prompt that changes with the date changes its prefix every day."""
    probe = _probe(base, [_msg("user", USER)], add_generation_prompt=True)
    first, second = (_try(render, replace(probe, now=day)) for day in DATES)
    if not isinstance(first, str) or not isinstance(second, str) or first == second:
        return []
    at = common_prefix_length(first, second)
    return [
        Diagnostic(
            "date-dependent",
            "warning",
            f"The prompt depends on the date (it first differs at character {at}: "
            f"{first[at : at + 20]!r}), so a cached prefix is lost when the date changes.",
            line_of(base.template, _DATE_CODE),
        )
    ]


def tool_findings(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """Tools given but never read; tool results or call ids dropped."""
    found: list[Diagnostic] = []
    if base.tools:
        with_tools = _try(render, base)
        without = _try(render, replace(base, tools=None))
        if isinstance(with_tools, str) and with_tools == without:
            found.append(
                Diagnostic(
                    "tools-ignored",
                    "warning",
                    "Tools are given but the template never writes them: the model "
                    "will not know they exist.",
                )
            )
    call = {"id": CALL_ID, "type": "function"}
    call["function"] = {"name": TOOL_NAME, "arguments": {"query": "x"}}
    messages = [
        _msg("user", USER),
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": CALL_ID, "name": TOOL_NAME, "content": RESULT},
    ]
    prompt = _try(render, _probe(base, messages, tools=[PROBE_TOOL], add_generation_prompt=True))
    if isinstance(prompt, str) and RESULT not in prompt:
        found.append(
            Diagnostic("tool-results-dropped", "warning", "Tool results never reach the prompt.")
        )
    elif isinstance(prompt, str) and CALL_ID not in prompt:
        found.append(
            Diagnostic(
                "tool-call-ids-dropped",
                "info",
                "Tool call ids are dropped: results are matched to calls only by their order.",
            )
        )
    return found


def reasoning_dropped(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """Earlier reasoning removed from history (it breaks prefix reuse in agent loops)."""
    answer = {"role": "assistant", "content": ANSWER, "reasoning_content": REASONING}
    messages = [_msg("user", USER), answer, _msg("user", USER_2)]
    prompt = _try(render, _probe(base, messages, add_generation_prompt=True))
    if not isinstance(prompt, str) or ANSWER not in prompt or REASONING in prompt:
        return []
    return [
        Diagnostic(
            "reasoning-dropped",
            "info",
            "Reasoning of earlier assistant turns is dropped from the history, so request "
            "k plus the model's answer is not a prefix of request k+1.",
        )
    ]


def role_rules(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """Conversations the template refuses, with the rule and the line that raises."""
    rules = [
        (
            "non-alternating",
            "two user messages in a row",
            [_msg("user", USER), _msg("user", USER_2)],
        ),
        ("system-refused", "a system message", [_msg("system", SYSTEM), _msg("user", USER)]),
    ]
    found = []
    for rule, what, messages in rules:
        outcome = _try(render, _probe(base, messages, add_generation_prompt=True))
        if isinstance(outcome, TemplateProblem):
            found.append(
                Diagnostic(
                    f"raises-on-{rule}",
                    "warning",
                    f"The template raises on {what}: {outcome.message}",
                    outcome.line,
                )
            )
    return found


def empty_generation_prompt(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """add_generation_prompt asked for, and nothing added."""
    if not base.add_generation_prompt:
        return []
    asked = _try(render, base)
    if isinstance(asked, str) and asked == _try(render, replace(base, add_generation_prompt=False)):
        return [
            Diagnostic(
                "no-generation-prompt",
                "info",
                "add_generation_prompt is on but the template adds nothing: the prompt ends "
                "where the last turn ends, so the model must start its answer right there.",
                line_of(base.template, "add_generation_prompt"),
            )
        ]
    return []


def end_of_turn_marker(base: RenderRequest, render: Render, markers: list[str]) -> str | None:
    """The marker the template writes right after an assistant message."""
    messages = [_msg("user", USER), _msg("assistant", ANSWER), _msg("user", USER_2)]
    prompt = _try(render, _probe(base, messages))
    if not isinstance(prompt, str) or ANSWER not in prompt:
        return None
    after = prompt[prompt.index(ANSWER) + len(ANSWER) :].lstrip(" \n")
    starts = [marker for marker in markers if marker and after.startswith(marker)]
    return max(starts, key=len) if starts else None


def turn_delimiters(base: RenderRequest, render: Render, markers: list[str]) -> list[str]:
    """The markers the template writes between turns: before the first message, between
    messages, and in the generation prompt's header.

    These must be single tokens (the model learnt to read and write turns by them); other
    markup, such as Qwen3's `<tools>` or `<function-name>` in its tool instructions, is
    plain text by design.
    """
    turns = [_msg("system", SYSTEM), _msg("user", USER), _msg("assistant", ANSWER)]
    turns.append(_msg("user", USER_2))
    # Without the system turn too: some templates refuse it or move it into a user turn.
    for messages in (turns, turns[1:]):
        prompt = _try(render, _probe(base, messages, add_generation_prompt=True))
        gaps = _gaps(prompt, [m["content"] for m in messages]) if isinstance(prompt, str) else None
        if gaps is not None:
            return [marker for marker in markers if any(marker in gap for gap in gaps)]
    return []


def _gaps(prompt: str, contents: list[str]) -> list[str] | None:
    """The text around and between `contents`, or None unless they appear in order."""
    gaps, pos = [], 0
    for text in contents:
        found = prompt.find(text, pos)
        if found < 0:
            return None
        gaps.append(prompt[pos:found])
        pos = found + len(text)
    return [*gaps, prompt[pos:]]


def template_diagnostics(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """Every probe-based finding for this template and request."""
    checks = (
        default_system_prompt,
        date_dependence,
        tool_findings,
        reasoning_dropped,
        role_rules,
        empty_generation_prompt,
    )
    return [finding for check in checks for finding in check(base, render)]


def _msg(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content}
