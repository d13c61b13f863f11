"""What the output views show for one state, typed: the page's templates read these, and
their JSON forms are the page's JSON twin (`POST /api/outputs`) and, piece by piece, the
answers of `/api/render`, `/api/diff`, `/api/analyze` and `/api/command`.

`app.pipeline.outputs` builds them; nothing here renders or tokenizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.analysis.analyze import Analysis
from app.answers.reading import Response
from app.problems import LOAD_ERROR, TemplateProblem
from app.render.command_line import CommandLine
from app.sources.source import Source
from app.sources.store import TokenizerUnavailable
from app.tokens.vocab import Token


@dataclass(frozen=True)
class PageLimits:
    """How much of a long prompt the page draws; the whole of it is a download or an API
    call away. A 2 MB prompt drawn in full, marker by marker and token by token, made a
    166 MB page."""

    #: Diff text drawn (`PLAYGROUND_PAGE_CHARS`); the prompt is drawn whole, only what is
    #: on screen with its markers.
    chars: int = 100_000
    #: Tokens sent to the Tokens view (as compact data, drawn on screen only) and drawn in
    #: the token diff (`PLAYGROUND_PAGE_TOKENS`).
    tokens: int = 200_000


@dataclass
class Rendering:
    """One template's prompt (or the problem that stopped it), with its special tokens and
    markers.

    `marks` are `(start, end, kind)` over the whole prompt; `tokens` are the first
    `PageLimits.tokens` of `token_total`.
    """

    prompt: str | None = None
    problem: TemplateProblem | None = None
    marks: list[tuple[int, int, str]] = field(default_factory=list)
    generation_spans: list[tuple[int, int]] = field(default_factory=list)
    tokens: Sequence[Token] | None = None
    token_total: int = 0
    rewrites: list[str] = field(default_factory=list)
    #: The engine that rendered it: its id, and how the page names it (its rewrites and
    #: caveats say).
    engine: str = ""
    engine_name: str = ""
    #: What that program does instead of this template for this model (`Engine.caveats`).
    caveats: list[str] = field(default_factory=list)
    #: How the request was shaped as the engine's callers send it (`app.render.client`).
    sent_as: list[str] = field(default_factory=list)
    #: The page's own word on the problem: which message it tripped on (`pipeline.hints`).
    hint: str | None = None
    #: What the engine says of how it rendered (`Rendered.details`).
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "error": None if self.problem is None else self.problem.to_json(),
            "engine": self.engine,
            "generation_spans": [list(span) for span in self.generation_spans],
            "rewrites": self.rewrites,
            "caveats": self.caveats,
            "sent_as": self.sent_as,
            "marks": [list(mark) for mark in self.marks],
            "token_count": self.token_total if self.tokens is not None else None,
        }


@dataclass
class Comparison:
    """The diff of the main prompt against the compare template's or engine's prompt."""

    right: Rendering
    label: str = "the compared template"
    #: What the left side is: this template, with the engine when engines are compared.
    left_label: str = "this template"
    #: Character opcodes (`[tag, i1, i2, j1, j2]`) of the whole diff, as `/api/diff` says.
    opcodes: list[tuple[str, int, int, int, int]] = field(default_factory=list)
    unified: list[Any] = field(default_factory=list)
    #: (left parts, right parts, changed): changed rows are the unified "-" and "+" lines.
    side_by_side: list[Any] = field(default_factory=list)
    #: Characters ("equal", "deleted", "inserted") and lines ("removed", "added"), whole diff.
    stats: dict[str, int] = field(default_factory=dict)
    #: Token opcodes of the two prompts' tokens, and the rows the token diff draws.
    token_opcodes: list[tuple[str, int, int, int, int]] | None = None
    token_rows: list[tuple[str, Sequence[Token]]] | None = None
    #: Why the prompts have no tokens to compare, when the vocabulary failed them.
    tokens_error: TokenizerUnavailable | None = None
    #: Whether the line views stop short of the whole diff (`PageLimits.chars`).
    lines_cut: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "left_label": self.left_label,
            "right": self.right.to_json(),
            "opcodes": [list(op) for op in self.opcodes],
            "stats": self.stats,
        }


@dataclass
class Outputs:
    """What the page shows beside the editors, for one state."""

    main: Rendering
    source: Source | None
    #: The Tokens view as compact data (`app.pipeline.token_data`), or None without tokens
    #: or while another view is open (`main.tokens` still says how many there are).
    token_data: dict[str, Any] | None
    tokens_note: str | None
    comparison: Comparison | None
    #: The first command line, shown before the Command view asks for them all.
    command: CommandLine
    now: str | None
    analysis: Analysis | None = None
    analysis_problem: TemplateProblem | None = None
    commands: list[CommandLine] | None = None
    #: What the engines learnt of the template for their command lines, and what their
    #: notes say of it (`CommandWriter.facts`, `CommandWriter.notes`).
    facts: dict[str, Any] = field(default_factory=dict)
    command_notes: dict[str, str] = field(default_factory=dict)
    #: Why the engines without command lines have none (`Help.no_command`).
    no_commands: list[str] = field(default_factory=list)
    #: The GGUF file the commands name; None when none is loaded (they say MODEL.gguf).
    model: str | None = None
    #: The token ids as a JSON array, and the tokens of each message (Tokens view only).
    token_ids: str = "[]"
    #: `token_ids` cut in pieces the browser lays out only near the screen (`id_blocks`).
    token_id_blocks: list[str] = field(default_factory=list)
    #: Whether the prompt was left untokenized, no view on screen showing its tokens.
    tokens_later: bool = False
    message_tokens: list[dict[str, Any]] | None = None
    #: Every engine's reading of the completion (Response and Analysis views), or why not.
    response: Response | None = None
    response_problem: TemplateProblem | None = None

    @property
    def commands_outlive_the_problem(self) -> bool:
        """Whether the command lines stay current while the render failed: they come from
        the template alone, and a program that would not load it (Edge-LLM) says so in
        them; after any other problem the page keeps the last good ones, stale."""
        problem = self.main.problem
        return bool(self.commands) and problem is not None and problem.type == LOAD_ERROR

    def to_json(self) -> dict[str, Any]:
        """The page's JSON twin: the same state in, the same results out."""
        return {
            "now": self.now,
            "prompt": self.main.to_json(),
            "tokens": None
            if self.token_data is None
            else {"data": self.token_data, "per_message": self.message_tokens},
            "tokens_note": self.tokens_note,
            "comparison": None if self.comparison is None else self.comparison.to_json(),
            "analysis": None if self.analysis is None else self.analysis.to_json(),
            "analysis_error": None
            if self.analysis_problem is None
            else self.analysis_problem.to_json(),
            "commands": None
            if self.commands is None
            else [line.to_json() for line in self.commands],
            **({} if self.commands is None else self.facts),
            "response": None if self.response is None else self.response.to_json(),
            "response_error": None
            if self.response_problem is None
            else self.response_problem.to_json(),
        }
