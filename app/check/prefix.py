"""Prefix stability with every engine: does request k+1 start with request k, and with
request k and its answer, as each runtime renders them (the Analysis view measures it
with the reference; `app.analysis.prefix` compares the requests). Reported for an engine
only where its answer differs from the reference's: the reference's own is the
Analysis view's finding."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from typing import Any

from app.analysis.prefix import answered_requests, compare_requests, user_turn_requests
from app.check.findings import Finding
from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from app.render.limits import RenderLimits
from app.render.pool import SandboxPool


def engine_prefixes(request: RenderRequest, limits: RenderLimits) -> list[dict[str, Any]] | None:
    """Each turn pair of `request`'s conversation as its engine renders it (worker
    side); None when a request does not render."""

    def rendered(messages: list[dict[str, Any]] | None, generation: bool) -> str | None:
        """The prompt of `messages` (None: no such request)."""
        if messages is None:
            return None
        asked = replace(request, messages=messages, add_generation_prompt=generation)
        return engines.render(asked, limits).prompt

    try:
        asked = [rendered(m, True) for m in user_turn_requests(request.messages)]
        answered = [rendered(m, False) for m in answered_requests(request.messages)]
    except TemplateProblem:
        return None
    pairs = zip(pairwise(asked), answered, strict=False)
    return [
        compare_requests(k + 1, *both, None, answered=a).to_json()
        for k, (both, a) in enumerate(pairs)
    ]


def prefix_findings(
    request: RenderRequest, pool: SandboxPool, conversation: str, only: set[str] | None
) -> list[Finding]:
    """Where an engine keeps or loses a prefix the reference does not."""
    reference = engines.REFERENCE_ENGINE
    expected = _run(pool, replace(request, engine=reference))
    found = []
    for engine in engines.ENGINES:
        if engine == reference or (only is not None and engine not in only):
            continue
        actual = _run(pool, replace(request, engine=engine))
        if expected is None or actual is None:
            continue
        for want, got in zip(expected, actual, strict=True):
            found += _differences(engine, conversation, want, got)
    return found


def _run(pool: SandboxPool, request: RenderRequest) -> list[dict[str, Any]] | None:
    """The request's turn pairs as its engine renders them, in a sandbox worker."""
    try:
        return pool.run(engine_prefixes, request)
    except TemplateProblem:
        return None


def _differences(engine: str, conversation: str, want: dict, got: dict) -> list[Finding]:
    """One turn pair where `engine` and the reference disagree on a prefix."""
    turn, reference = got["from_turn"], engines.REFERENCE_ENGINE
    found = []
    if (want["first_difference"] is None) != (got["first_difference"] is None):
        kept = got["first_difference"] is None
        message = (
            f"request {turn + 1} {'starts' if kept else 'does not start'} with request {turn} "
            f"as it renders them, where {reference}'s {'does not' if kept else 'does'}"
        )
        found.append(
            Finding("warning", engine, conversation, message, "prefix", f"prefix:{engine}:{turn}")
        )
    if (
        want["answer_stays_prefix"] != got["answer_stays_prefix"]
        and got["answer_stays_prefix"] is False
    ):
        message = (
            f"request {turn + 1} does not start with request {turn} and its answer as it "
            f"renders them, where {reference}'s does (the server's cache of the answer is lost)"
        )
        name = f"prefix:answer:{engine}:{turn}"
        found.append(Finding("warning", engine, conversation, message, "prefix", name))
    return found
