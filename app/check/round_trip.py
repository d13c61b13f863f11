"""Tool calls read back: the completion the template itself writes for a tool call (the
Completion menu's entry), read by every runtime's parser, and sent back (the page's
Answer view, `app.answers.reading`)."""

from __future__ import annotations

from dataclasses import replace

from app.answers.menu import EXAMPLE_TOOLS, menu_completion
from app.answers.reading import EngineResponse, read_completion
from app.check.findings import Finding
from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.pool import SandboxPool

#: The Completion menu's entries checked, by the conversation name the report gives them.
KINDS = {"tool_call": "tool-call-answer", "parallel_tool_calls": "parallel-calls-answer"}
#: The conversation the template's own tool calls answer.
ROUND_TRIP_QUESTION = [
    {"role": "user", "content": "What's the weather and the local time in Lisbon?"}
]


def round_trip_findings(
    base: RenderRequest, pool: SandboxPool, only: set[str] | None, not_loading: set[str]
) -> list[Finding]:
    """Each engine's reading of the template's own tool calls, and its round trip; none
    for the engines in `not_loading`, whose program does not load the template at all
    (their load finding says so)."""
    request = replace(
        base, messages=ROUND_TRIP_QUESTION, tools=EXAMPLE_TOOLS, add_generation_prompt=True
    )
    found: list[Finding] = []
    for kind, name in KINDS.items():
        try:
            entry = menu_completion(request, kind, pool.render_exactly)
        except TemplateProblem as problem:
            message = f"the template does not write this answer: {problem.message}"
            found.append(Finding("note", None, name, message, "round-trip", f"round-trip:{kind}"))
            continue
        response = read_completion(request, entry.completion, {}, pool.run)
        for engine in response.engines:
            if (only is None or engine.engine in only) and engine.engine not in not_loading:
                found += _engine_findings(engine, name, kind == "parallel_tool_calls")
    return found


def _engine_findings(response: EngineResponse, name: str, parallel: bool) -> list[Finding]:
    """What one engine made of the template's own tool call."""
    engine, key = response.engine, f"round-trip:{response.engine}:{name}"

    def finding(severity: str, message: str) -> Finding:
        """A round-trip finding of this engine and conversation."""
        return Finding(severity, engine, name, message, "round-trip", key)

    if response.problem is not None:
        return [finding("error", f"cannot read the answer: {response.problem.message}")]
    answer = response.answer
    if answer is None:
        return []  # no parser: its program hands the text back (not a finding)
    if answer.error:
        return [
            finding("error", f"its parser fails on the template's own tool call: {answer.error}")
        ]
    wanted = 2 if parallel else 1
    if len(answer.tool_calls) < wanted:
        message = (
            f"its parser ({answer.parser}) reads {len(answer.tool_calls)} of the {wanted} "
            "tool call(s) the template writes"
            + ("" if not answer.notes else ": " + " ".join(answer.notes))
        )
        return [finding("error", message)]
    trip = response.round_trip
    if trip is not None and trip.reused is False:
        message = (
            f"the call sent back does not render as it was read: at character {trip.at}, "
            f"the cache holds {trip.expected[trip.shared_context :][:40]!r}, "
            f"the next prompt has {trip.actual[trip.shared_context :][:40]!r} ({trip.reason})"
        )
        return [finding("warning", message)]
    return []
