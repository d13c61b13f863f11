"""The Analysis view: capabilities, content format, diagnostics and prefix stability.

`probe_template` runs in a sandbox worker: every render it makes is of the untrusted
template. `analyze` then adds what needs the model's vocabulary (token counts, BOS,
end-of-turn and marker checks), tokenized in a source worker.

The cost grows with the conversation (two renders per user turn, each the size of the
conversation so far), so at most `max_turns` user turns are followed and at most
`max_chars` characters are tokenized; the answer says when it stopped short.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.analysis.capabilities import detect_capabilities
from app.analysis.content_format import detect_content_format
from app.analysis.diagnostics import Diagnostic, end_of_turn_marker, template_diagnostics
from app.analysis.prefix import answered_requests, compare_requests, user_turn_requests
from app.analysis.vocab_checks import TokenIds, vocabulary_diagnostics
from app.display.prompt import template_markers
from app.render.chat import RenderRequest, render_chat
from app.render.pool import SandboxPool
from app.render.problems import TemplateProblem
from app.sources.source import Source

#: User turns whose requests the analysis follows (`PLAYGROUND_ANALYSIS_TURNS`).
DEFAULT_MAX_TURNS = 32
#: Characters of requests tokenized for token counts (`PLAYGROUND_OUTPUT_CHARS`).
DEFAULT_MAX_CHARS = 2_000_000


def _prompt(request: RenderRequest) -> str:
    return render_chat(request).prompt


def _render_or_none(request: RenderRequest) -> str | None:
    try:
        return _prompt(request)
    except TemplateProblem:
        return None


def probe_template(request: RenderRequest, max_turns: int = DEFAULT_MAX_TURNS) -> dict[str, Any]:
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
        "requests": [
            rendered(m, as_sent) for m in user_turn_requests(request.messages)[:max_turns]
        ],
        "answered": [
            rendered(m, as_answered) for m in answered_requests(request.messages)[:max_turns]
        ],
        "user_turns": len(user_turn_requests(request.messages)),
        "prompt": _render_or_none(request),
    }


def _prefix_stability(
    probed: dict[str, Any], token_ids: TokenIds | None, max_chars: int
) -> list[dict[str, Any]]:
    requests, answered = probed["requests"], probed["answered"]
    ids_of: dict[int, list[int]] = {}
    texts = [text for text in requests if text is not None]
    if token_ids is not None and texts and sum(map(len, texts)) <= max_chars:
        found = token_ids(texts)
        if found is not None:
            by_text = dict(zip(texts, found, strict=True))
            ids_of = {k: by_text[text] for k, text in enumerate(requests) if text is not None}
    pairs = []
    for k in range(len(requests) - 1):
        left, right = requests[k], requests[k + 1]
        if left is None or right is None:
            continue
        ids = (ids_of[k], ids_of[k + 1]) if ids_of else None
        pairs.append(compare_requests(k + 1, left, right, ids, answered[k]).to_json())
    return pairs


def _llama_cpp_rewrites(request: RenderRequest, pool: SandboxPool) -> list[str] | None:
    """What llama-server changes before rendering this conversation (None if it refuses)."""
    try:
        return pool.render(replace(request, engine="llama.cpp")).rewrites
    except TemplateProblem:
        return None


def analyze(
    request: RenderRequest,
    pool: SandboxPool,
    source: Source | None,
    token_ids: TokenIds | None = None,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> dict[str, Any]:
    """The whole analysis of a render request; raises TemplateProblem for hostile templates.

    `token_ids` tokenizes with the source's vocabulary (None: no token counts).
    """
    probed = pool.run(probe_template, request, max_turns)
    special_tokens = {**(source.special_tokens if source else {}), **request.special_tokens}
    vocabulary = vocabulary_diagnostics(
        probed["prompt"], request.template, special_tokens, source, probed["end_marker"], token_ids
    )
    diagnostics = [Diagnostic(**d) for d in probed["diagnostics"]] + vocabulary
    return {
        "llama_cpp_rewrites": _llama_cpp_rewrites(request, pool),
        "capabilities": probed["capabilities"],
        "content_format": probed["content_format"],
        "diagnostics": [d.to_json() for d in diagnostics],
        "end_of_turn_marker": probed["end_marker"],
        "prefix_stability": _prefix_stability(probed, token_ids, max_chars),
        "user_turns": probed["user_turns"],
        "turns_analysed": min(probed["user_turns"], max_turns),
    }
