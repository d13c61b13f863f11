"""The Analysis view: capabilities, content format, diagnostics and prefix stability.

`probe_template` runs in a sandbox worker: every render it makes is of the untrusted
template. `analyze` then adds what needs the model's vocabulary (token counts, BOS,
end-of-turn and marker checks), in the web process.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.analysis.capabilities import detect_capabilities
from app.analysis.content_format import detect_content_format
from app.analysis.diagnostics import Diagnostic, end_of_turn_marker, template_diagnostics
from app.analysis.prefix import answered_requests, compare_requests, user_turn_requests
from app.analysis.vocab_checks import vocabulary_diagnostics
from app.display.prompt import template_markers
from app.render.chat import RenderRequest, render_chat
from app.render.pool import SandboxPool
from app.render.problems import TemplateProblem
from app.sources.source import Source
from app.tokens.vocab import tokenize


def _prompt(request: RenderRequest) -> str:
    return render_chat(request).prompt


def _render_or_none(request: RenderRequest) -> str | None:
    try:
        return _prompt(request)
    except TemplateProblem:
        return None


def probe_template(request: RenderRequest) -> dict[str, Any]:
    """Everything the analysis learns by rendering (worker side)."""
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

    return {
        "capabilities": detect_capabilities(request.template),
        "content_format": detect_content_format(request.template),
        "diagnostics": [d.to_json() for d in template_diagnostics(request, _prompt)],
        "end_marker": end_of_turn_marker(request, _prompt, markers),
        "requests": [rendered(m, as_sent) for m in user_turn_requests(request.messages)],
        "answered": [rendered(m, as_answered) for m in answered_requests(request.messages)],
        "prompt": _render_or_none(request),
    }


def _prefix_stability(probed: dict[str, Any], source: Source | None) -> list[dict[str, Any]]:
    tok = source.tokenizer if source else None
    ids = None
    if tok is not None and tok.support.supported:

        def ids(text: str) -> list[int]:
            return [t.id for t in tokenize(tok, text)]

    pairs = []
    requests, answered = probed["requests"], probed["answered"]
    for k in range(len(requests) - 1):
        left, right = requests[k], requests[k + 1]
        if left is None or right is None:
            continue
        pair = compare_requests(k + 1, left, right, ids, answered[k])
        pairs.append(pair.to_json())
    return pairs


def _llama_cpp_rewrites(request: RenderRequest, pool: SandboxPool) -> list[str] | None:
    """What llama-server changes before rendering this conversation (None if it refuses)."""
    try:
        return pool.render(replace(request, engine="llama.cpp")).rewrites
    except TemplateProblem:
        return None


def analyze(request: RenderRequest, pool: SandboxPool, source: Source | None) -> dict[str, Any]:
    """The whole analysis of a render request; raises TemplateProblem for hostile templates."""
    probed = pool.run(probe_template, request)
    special_tokens = {**(source.special_tokens if source else {}), **request.special_tokens}
    vocabulary = vocabulary_diagnostics(
        probed["prompt"], request.template, special_tokens, source, probed["end_marker"]
    )
    diagnostics = [Diagnostic(**d) for d in probed["diagnostics"]] + vocabulary
    return {
        "llama_cpp_rewrites": _llama_cpp_rewrites(request, pool),
        "capabilities": probed["capabilities"],
        "content_format": probed["content_format"],
        "diagnostics": [d.to_json() for d in diagnostics],
        "end_of_turn_marker": probed["end_marker"],
        "prefix_stability": _prefix_stability(probed, source),
    }
