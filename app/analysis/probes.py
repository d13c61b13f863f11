"""What the Analysis view learns by rendering: the worker side of `analyze.py`.

`probe_template` runs in a sandbox worker, where every render is of the untrusted
template, within the limits in force. The vocabulary checks, which need model files
(tokenizers, gguf), run in the web process on what it returns, so this module does not
import them.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from typing import Any

from app.analysis.bos_check import empty_bos
from app.analysis.diagnostics import (
    Diagnostic,
    end_of_turn_marker,
    template_diagnostics,
    turn_delimiters,
)
from app.analysis.prefix import answered_requests, compare_requests, user_turn_requests
from app.problems import TemplateProblem
from app.render import client
from app.render.core import RenderRequest, render_with
from app.render.engines import (
    CONTENT_FORMAT_ENGINE,
    REFERENCE_ENGINE,
    STATING_ENGINE,
    command_writers,
    get_engine,
)
from app.render.limits import RenderLimits, check_template_size
from app.text import template_markers


def probe_template(
    request: RenderRequest, max_turns: int, max_chars: int, limits: RenderLimits
) -> dict[str, Any]:
    """Everything the analysis learns by rendering (worker side), within `limits`.

    The requests of each turn are compared here, in the worker: they can add up to tens
    of megabytes, which only come back (for token counts) within `max_chars`.
    """
    check_template_size(request.template, limits)

    reference = get_engine(REFERENCE_ENGINE)
    # Every probe renders with the reference, the conversation as its caller sends it.
    request, _ = client.as_sent(request)

    def _prompt(request: RenderRequest) -> str:
        return render_with(reference, request, limits).prompt

    def _render_or_none(request: RenderRequest) -> str | None:
        try:
            return _prompt(request)
        except TemplateProblem:
            return None

    markers = sorted(
        set(template_markers(request.template)) | set(request.special_tokens.values()),
        key=len,
        reverse=True,
    )
    as_sent = {"add_generation_prompt": True, "continue_final_message": False}
    as_answered = {"add_generation_prompt": False, "continue_final_message": False}

    def rendered(messages: list | None, options: dict[str, bool]) -> str | None:
        if messages is None:
            return None
        return _render_or_none(replace(request, messages=messages, **options))

    requests = [rendered(m, as_sent) for m in user_turn_requests(request.messages)[:max_turns]]
    answered = [rendered(m, as_answered) for m in answered_requests(request.messages)[:max_turns]]
    pairs = [
        compare_requests(k + 1, left, right, None, answered[k]).to_json()
        for k, (left, right) in enumerate(pairwise(requests))
        if left is not None and right is not None
    ]
    small = sum(len(text) for text in requests if text is not None) <= max_chars
    return {
        "capabilities": get_engine(STATING_ENGINE).capabilities(request.template, limits),
        "content_format": get_engine(CONTENT_FORMAT_ENGINE).content_format(request.template),
        "diagnostics": [
            d.to_json()
            for d in [
                *template_diagnostics(request, _prompt),
                *empty_bos(request, _prompt),
                *_runtime_findings(request.template),
            ]
        ],
        "end_marker": end_of_turn_marker(request, _prompt, markers),
        "turn_markers": turn_delimiters(request, _prompt, markers),
        "pairs": pairs,
        "requests": requests if small else None,
        "user_turns": len(user_turn_requests(request.messages)),
        "prompt": _render_or_none(request),
    }


def _runtime_findings(template: str) -> list[Diagnostic]:
    """What the runtimes' own choice of template does wrong with this one: a runtime that
    swaps it for another may drop what it supports (`CommandWriter.findings`)."""
    return [
        Diagnostic(**finding)
        for writer in command_writers()
        for finding in writer.findings(template)
    ]
