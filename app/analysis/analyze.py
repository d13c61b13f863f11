"""The Analysis view: capabilities, content format, diagnostics, prefix stability and the
engines' portability (`portability.py`).

`probe_template` (`probes.py`) runs in a sandbox worker: every render it makes is of
the untrusted template. `analyze` then adds what needs the model's vocabulary (token counts, BOS,
end-of-turn and marker checks), tokenized in a source worker.

The cost grows with the conversation (two renders per user turn, each the size of the
conversation so far), so at most `max_turns` user turns are followed and at most
`max_chars` characters are tokenized; the answer says when it stopped short.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from app.analysis.diagnostics import Diagnostic
from app.analysis.model_files import model_files
from app.analysis.portability import portability
from app.analysis.probes import probe_template
from app.analysis.vocab_checks import TokenIds, vocabulary_diagnostics
from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines import STATING_ENGINE
from app.render.pool import SandboxPool
from app.sources.source import Source
from app.text import common_prefix_length

#: User turns whose requests the analysis follows (`PLAYGROUND_ANALYSIS_TURNS`).
DEFAULT_MAX_TURNS = 32
#: Characters of requests tokenized for token counts (`PLAYGROUND_OUTPUT_CHARS`).
DEFAULT_MAX_CHARS = 2_000_000


@dataclass
class Analysis:
    """What the Analysis view shows, field for field `/api/analyze`'s answer."""

    #: What the stating engine's server changes before rendering; None: it refuses.
    rewrites: list[str] | None
    #: Every engine against the reference over the report's conversations.
    portability: dict[str, Any]
    #: The stating engine's capabilities.
    capabilities: dict[str, bool] | None
    #: What the content-format engine decides for the template.
    content_format: str | None
    diagnostics: list[dict[str, Any]]
    end_of_turn_marker: str | None
    prefix_stability: list[dict[str, Any]]
    user_turns: int
    turns_analysed: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _prefix_stability(probed: dict[str, Any], token_ids: TokenIds | None) -> list[dict[str, Any]]:
    """The worker's turn pairs, with how many tokens each pair shares when the requests
    came back small enough to tokenize."""
    pairs, requests = probed["pairs"], probed["requests"]
    texts = [text for text in requests or [] if text is not None]
    found = token_ids(texts) if token_ids is not None and texts else None
    if found is not None:
        by_text = dict(zip(texts, found, strict=True))
        for pair in pairs:
            left, right = requests[pair["from_turn"] - 1], requests[pair["to_turn"] - 1]
            pair["shared_tokens"] = common_prefix_length(by_text[left], by_text[right])
    return pairs


def _stated_rewrites(request: RenderRequest, pool: SandboxPool) -> list[str] | None:
    """What the stating engine changes before rendering this conversation (None if it
    refuses)."""
    try:
        return pool.render(replace(request, engine=STATING_ENGINE)).rewrites
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
) -> Analysis:
    """The whole analysis of a render request; raises TemplateProblem for hostile templates.

    `token_ids` tokenizes with the source's vocabulary (None: no token counts).
    """
    probed = pool.run(probe_template, request, max_turns, max_chars)
    special_tokens = {**(source.special_tokens if source else {}), **request.special_tokens}
    vocabulary = vocabulary_diagnostics(
        probed["prompt"],
        request.template,
        special_tokens,
        source,
        probed["end_marker"],
        token_ids,
        turn_markers=probed["turn_markers"],
    )
    diagnostics = [Diagnostic(**d) for d in probed["diagnostics"]] + vocabulary
    return Analysis(
        rewrites=_stated_rewrites(request, pool),
        portability=portability(request, pool, model_files(source)),
        capabilities=probed["capabilities"],
        content_format=probed["content_format"],
        diagnostics=[d.to_json() for d in diagnostics],
        end_of_turn_marker=probed["end_marker"],
        prefix_stability=_prefix_stability(probed, token_ids),
        user_turns=probed["user_turns"],
        turns_analysed=min(probed["user_turns"], max_turns),
    )
