"""The worker side of the portability report (`portability.py`): one engine's cases.

`engine_report` runs in a sandbox worker: it renders the template with the engine and
with the reference over every conversation, compares them there, and sends back only the
outcomes and the first difference and error, never the prompts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from app.analysis.examples import EXAMPLES
from app.problems import LOAD_ERROR, TemplateProblem, limit_exceeded
from app.render import engines
from app.render.bounded import tracking_lines
from app.render.core import Rendered, RenderRequest
from app.render.limits import RenderLimits
from app.text import common_prefix_length

#: The engine every other one is compared with.
REFERENCE = engines.REFERENCE_ENGINE
#: Characters shown on each side of a first difference.
SNIPPET_BEFORE = 40
SNIPPET_AFTER = 80


@dataclass(frozen=True)
class Conversation:
    """One case of the report: a name and the render request it makes."""

    name: str
    request: RenderRequest


def conversations(request: RenderRequest) -> list[Conversation]:
    """The current conversation, then each built-in example with the same template and options."""
    cases = [Conversation("current", request)]
    for example in EXAMPLES:
        example_request = replace(
            request,
            messages=example["messages"],
            tools=example.get("tools"),
            documents=None,
            add_generation_prompt=example.get("add_generation_prompt", True),
            continue_final_message=example.get("continue_final_message", False),
        )
        cases.append(Conversation(example["name"], example_request))
    return cases


def _outcome(
    request: RenderRequest, engine: str, limits: RenderLimits
) -> Rendered | TemplateProblem:
    try:
        return engines.render(replace(request, engine=engine), limits)
    except TemplateProblem as problem:
        return problem


def _reference_line(request: RenderRequest, at: int, limits: RenderLimits) -> int | None:
    """The template line that wrote character `at` of the reference's prompt (one more
    render, only for an engine's first difference); None past its end."""
    with tracking_lines() as lines:
        if isinstance(_outcome(request, REFERENCE, limits), TemplateProblem):
            return None
    return next((line for end, line in lines if end > at), None)


def _difference(
    case: Conversation, reference: str, other: Rendered, limits: RenderLimits
) -> dict[str, Any]:
    """Where `other` first departs from the reference, with a little of both sides and
    the template line that wrote the reference's side."""
    at = common_prefix_length(reference, other.prompt)
    start = max(0, at - SNIPPET_BEFORE)
    return {
        "conversation": case.name,
        "position": at,
        "line": _reference_line(case.request, at, limits) if reference else None,
        "before": reference[start:at],
        "reference": reference[at : at + SNIPPET_AFTER],
        "engine": other.prompt[at : at + SNIPPET_AFTER],
        "rewrites": other.rewrites,
    }


def _error(name: str, problem: TemplateProblem) -> dict[str, Any]:
    return {"conversation": name, **problem.to_json()}


def engine_report(engine: str, cases: list[Conversation], limits: RenderLimits) -> dict[str, Any]:
    """`engine` against the reference over `cases` (worker side): one outcome per case.

    A case is "identical" when both render the same text or both refuse, "differs" when
    both render different text or only the engine renders, "raises" when only the engine
    refuses, or when it refuses to load the template at all. The reference's own outcomes
    come back too (for its row of the report), and the engine's own failures, whatever the
    reference did: `load_error`, its first refusal to load the template, and `failures`,
    the cases its requests then fail on.
    """
    outcomes, reference_outcomes = [], []
    report: dict[str, Any] = {"first_difference": None, "first_error": None}
    report.update({"load_error": None, "failures": []})
    reference_error = None
    # All the cases share one allowance: an engine whose CPU runs in a helper process
    # (transformers.js's Node) is held to it per render, so six renders just under the
    # limit would cost six allowances. Wall time bounds the CPU time of both processes.
    deadline = time.monotonic() + limits.cpu_seconds
    for case in cases:
        if time.monotonic() > deadline:
            return _ran_out(case, ALLOWANCE_SPENT)
        # A case that runs out of a limit would do so again in the next ones: the engine
        # is not measured further, so a template that loops costs one allowance, not one
        # per conversation. The reference's own limit is its own (not the engine's).
        expected = _outcome(case.request, REFERENCE, limits)
        if _hit_a_limit(expected):
            return {**_ran_out(case, None), "reference_ran_out": _error(case.name, expected)}
        actual = _outcome(case.request, engine, limits)
        if _hit_a_limit(actual):
            return _ran_out(case, actual)
        if isinstance(actual, TemplateProblem):
            _note_failure(report, case, actual)
        refused = isinstance(expected, TemplateProblem)
        if refused and reference_error is None:
            reference_error = _error(case.name, expected)
        reference_outcomes.append(_case(case, "raises" if refused else "renders", expected))
        outcome = _compare(expected, actual)
        if outcome == "raises" and report["first_error"] is None:
            report["first_error"] = _error(case.name, actual)
        if outcome == "differs" and report["first_difference"] is None:
            reference = expected.prompt if isinstance(expected, Rendered) else ""
            report["first_difference"] = _difference(case, reference, actual, limits)
        outcomes.append(_case(case, outcome, actual))
    report["cases"] = outcomes
    report["reference"] = {
        "cases": reference_outcomes,
        "first_difference": None,
        "first_error": reference_error,
    }
    return report


def _note_failure(report: dict[str, Any], case: Conversation, problem: TemplateProblem) -> None:
    """The engine's own refusal of `case`: its first refusal to load, or a request's."""
    if problem.type != LOAD_ERROR:
        report["failures"].append(case.name)
    elif report["load_error"] is None:
        report["load_error"] = _error(case.name, problem)


#: What an engine whose cases together ran past one allowance is reported as raising.
ALLOWANCE_SPENT = limit_exceeded(
    "cpu_seconds", "This engine's renders of the conversations together ran past one CPU allowance."
)


def _ran_out(case: Conversation, problem: TemplateProblem | None) -> dict[str, Any]:
    """An engine not measured past `case`, with the limit it ran into (if its own)."""
    error = _error(case.name, problem) if problem is not None else None
    return {"cases": [], "first_difference": None, "first_error": error}


def _hit_a_limit(outcome: Rendered | TemplateProblem) -> bool:
    return isinstance(outcome, TemplateProblem) and outcome.limit is not None


def _case(case: Conversation, outcome: str, result: Rendered | TemplateProblem) -> dict[str, str]:
    """One case's outcome; a case that raises names its error's type too (a template's
    own `TemplateError`, a server's `InvalidRequest`, ...)."""
    if outcome == "raises" and isinstance(result, TemplateProblem):
        return {"conversation": case.name, "outcome": outcome, "type": result.type}
    return {"conversation": case.name, "outcome": outcome}


def _compare(expected: Rendered | TemplateProblem, actual: Rendered | TemplateProblem) -> str:
    if isinstance(actual, TemplateProblem):
        # A program that does not load the template fails where the reference's render
        # fails too: that is no agreement.
        both = isinstance(expected, TemplateProblem) and actual.type != LOAD_ERROR
        return "identical" if both else "raises"
    if isinstance(expected, Rendered) and expected.prompt == actual.prompt:
        return "identical"
    return "differs"
