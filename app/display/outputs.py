"""Everything the output views show for one state: prompt, tokens, diff and command.

This is the page's data flow in one place (state -> sandboxed render -> prompt -> tokens
-> views), kept free of Flask so tests can call it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from app.analysis.analyze import analyze
from app.analysis.commands import (
    build_commands,
    first_command,
    template_facts,
    without_commands,
)
from app.analysis.diff import (
    char_opcodes,
    diff_stats,
    side_by_side_flagged,
    token_opcodes,
    unified,
)
from app.display.prompt import prompt_marks
from app.display.token_data import columns
from app.display.tokens_view import TokensOf, id_blocks, tokens_view, tokens_with
from app.errors import RequestError
from app.problems import TemplateProblem
from app.render.core import Rendered, RenderRequest
from app.render.engines import get_engine
from app.render.pool import SandboxPool
from app.sources.source import Source
from app.sources.store import SourceStore
from app.state import PlaygroundState
from app.tokens.vocab import Token


@dataclass
class Problem:
    """Why a view has nothing to show: a template error, or an input that cannot be read."""

    kind: str
    message: str
    line: int | None = None
    field: str | None = None
    limit: str | None = None


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
    """One template's prompt (or problem), with its special tokens and markers.

    `marks` are `(start, end, kind)` over the whole prompt; `tokens` are the first
    `PageLimits.tokens` of `token_total`.
    """

    prompt: str | None = None
    problem: Problem | None = None
    marks: list[tuple[int, int, str]] = field(default_factory=list)
    generation_spans: list[tuple[int, int]] = field(default_factory=list)
    tokens: Sequence[Token] | None = None
    token_total: int = 0
    rewrites: list[str] = field(default_factory=list)
    #: How the page names the engine that rendered it (its rewrites and caveats say).
    engine_name: str = ""
    #: What that program does instead of this template for this model (`Engine.caveats`).
    caveats: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    """The diff of the main prompt against the compare template's prompt."""

    right: Rendering
    label: str = "the compared template"
    #: What the left side is: this template, with the engine when engines are compared.
    left_label: str = "this template"
    unified: list[Any] = field(default_factory=list)
    #: (left parts, right parts, changed): changed rows are the unified "-" and "+" lines.
    side_by_side: list[Any] = field(default_factory=list)
    #: Characters ("equal", "deleted", "inserted") and lines ("removed", "added"), whole diff.
    stats: dict[str, int] = field(default_factory=dict)
    token_rows: list[tuple[str, list[Token]]] | None = None
    #: Whether the line views stop short of the whole diff (`PageLimits.chars`).
    lines_cut: bool = False


@dataclass
class Outputs:
    """What the page shows beside the editors."""

    main: Rendering
    source: Source | None
    #: The Tokens view as compact data (`app.display.token_data`), or None without tokens
    #: or while another view is open (`main.tokens` still says how many there are).
    token_data: dict[str, Any] | None
    tokens_note: str | None
    comparison: Comparison | None
    command: str
    now: str | None
    analysis: dict[str, Any] | None = None
    analysis_problem: Problem | None = None
    commands: list[dict[str, Any]] | None = None
    builtin: str | None = None
    #: Why the engines without command lines have none (`Engine.no_command`).
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


def _render(pool: SandboxPool, request: RenderRequest) -> tuple[Rendered | None, Problem | None]:
    try:
        return pool.render(request), None
    except TemplateProblem as problem:
        return None, Problem(problem.type, problem.message, problem.line, limit=problem.limit)


def _cut_lines(lines: list[Any], max_chars: int, chars_of: Callable[[Any], int]) -> list[Any]:
    """The first lines of a diff view, up to about `max_chars` characters of text."""
    total = 0
    for index, line in enumerate(lines):
        total += chars_of(line)
        if total > max_chars:
            return lines[: index + 1]
    return lines


def _parts_chars(parts: list[tuple[str, str]] | None) -> int:
    return sum(len(text) for _, text in parts or [])


def rendering(
    pool: SandboxPool, request: RenderRequest, source: Source | None, limits: PageLimits
) -> Rendering:
    """Render one template and find the special tokens and markers of its prompt."""
    engine = get_engine(request.engine)
    said = {"engine_name": engine.name, "caveats": engine.caveats(request.template, _model(source))}
    rendered, problem = _render(pool, request)
    if rendered is None:
        return Rendering(problem=problem, **said)
    return Rendering(
        prompt=rendered.prompt,
        marks=prompt_marks(rendered.prompt, request.special_tokens.values(), request.template),
        generation_spans=rendered.generation_spans,
        rewrites=rendered.rewrites,
        **said,
    )


def _model(source: Source | None) -> str | None:
    """The loaded model's name and file, for the engines' caveats."""
    if source is None:
        return None
    named = [source.metadata.get("name"), source.file_name]
    return " ".join(part for part in named if isinstance(part, str)) or None


def _token_rows(left: Sequence[Token], right: Sequence[Token]) -> list[tuple[str, Sequence[Token]]]:
    rows: list[tuple[str, Sequence[Token]]] = []
    left_ids, right_ids = columns(left)[0], columns(right)[0]
    for tag, i1, i2, j1, j2 in token_opcodes(left_ids, right_ids):
        if tag == "equal":
            rows.append(("equal", left[i1:i2]))
            continue
        if i2 > i1:
            rows.append(("delete", left[i1:i2]))
        if j2 > j1:
            rows.append(("insert", right[j1:j2]))
    return rows


def compare(
    pool: SandboxPool,
    state: PlaygroundState,
    main: Rendering,
    source: Source | None,
    tokens_of: TokensOf,
    limits: PageLimits,
) -> Comparison | None:
    """Diff the main prompt against the other engine's, or against the compare template's."""
    if main.prompt is None:
        return None
    left_label = "this template"
    if other := state.compared_engine():
        right = rendering(pool, state.render_request(engine=other), source, limits)
        label, left_label = f"the {other} engine", f"the {state.engine} engine"
    elif state.compare_template:
        right = rendering(pool, state.render_request(state.compare_template), source, limits)
        label = "the compared template"
    else:
        return None
    if right.prompt is None:
        return Comparison(right=right, label=label, left_label=left_label)
    opcodes = char_opcodes(main.prompt, right.prompt)
    lines = unified(main.prompt, right.prompt, opcodes)
    rows, changed = side_by_side_flagged(main.prompt, right.prompt, opcodes)
    rows = [(a, b, flag) for (a, b), flag in zip(rows, changed, strict=True)]
    shown_lines = _cut_lines(lines, limits.chars, lambda line: _parts_chars(line.parts))
    shown_rows = _cut_lines(rows, limits.chars, lambda r: _parts_chars(r[0]) + _parts_chars(r[1]))
    # Line counts from the unified lines, so the numbers are the "-" and "+" lines shown.
    signs = [line.sign for line in lines]
    comparison = Comparison(
        right=right,
        label=label,
        left_label=left_label,
        unified=shown_lines,
        side_by_side=shown_rows,
        stats={**diff_stats(opcodes), "removed": signs.count("-"), "added": signs.count("+")},
        lines_cut=len(shown_lines) < len(lines) or len(shown_rows) < len(rows),
    )
    if main.tokens is not None:
        right_tokens, _ = tokens_of(right.prompt)
        if right_tokens is not None:
            right.tokens, right.token_total = right_tokens.tokens, right_tokens.total
            comparison.token_rows = _token_rows(main.tokens, right.tokens)
    return comparison


def _analysis(
    pool: SandboxPool, state: PlaygroundState, source: Source | None, budget: dict[str, Any]
) -> tuple[dict[str, Any] | None, Problem | None]:
    """The Analysis view's findings; only computed while that view is open (it renders a lot)."""
    try:
        return analyze(state.render_request(), pool, source, **budget), None
    except (RequestError, TemplateProblem) as error:
        return None, Problem(getattr(error, "type", "BadRequest"), error.message)


def _commands(
    pool: SandboxPool, state: PlaygroundState, model: str | None
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Every engine's command line; only computed while the Command view is open."""
    try:
        facts = pool.run(template_facts, state.template, state.kwargs, state.special_tokens)
    except TemplateProblem:
        return None, None
    commands = build_commands(
        state.template,
        state.kwargs,
        model,
        messages=state.messages,
        tools=state.tools,
        add_generation_prompt=state.add_generation_prompt,
        special_tokens=state.special_tokens,
        **facts,
    )
    return commands, facts["builtin"]


def gguf_file(state: PlaygroundState) -> str | None:
    """The loaded GGUF file's name, which the commands can run; Hugging Face files are no
    model a command could name (their names are "tokenizer.json, ..."), so None."""
    source = state.source
    if source is None or source.kind != "gguf" or not source.file_name:
        return None
    return source.file_name


def build_outputs(
    state: PlaygroundState,
    pool: SandboxPool,
    store: SourceStore,
    analysis_budget: Callable[[Source | None], dict[str, Any]] | None = None,
    limits: PageLimits = PageLimits(),
) -> Outputs:
    """Render the state and derive every view from the prompt.

    `analysis_budget(source)` gives `analyze` its vocabulary and limits (default: the
    source's vocabulary and the default limits); `limits` bound what the page draws.
    """
    # Tokens and vocabulary checks need the tokenizer: the render waits for its build.
    source = store.get_built(state.source.id) if state.source else None
    if source is not None:
        # llama.cpp strips the BOS/EOS text that this vocabulary adds by itself.
        state = replace(
            state,
            add_bos_token=state.add_bos_token or bool(source.add_bos_token),
            add_eos_token=state.add_eos_token or bool(source.add_eos_token),
        )
    request = state.render_request()
    main = rendering(pool, request, source, limits)
    tokens_of = tokens_with(store, source, limits.tokens)
    view = tokens_view(pool, state, request, main.prompt, source, tokens_of)
    if view.tokens is not None:
        main.tokens, main.token_total = view.tokens.tokens, view.tokens.total
    model = gguf_file(state)
    analysis, analysis_problem = None, None
    if state.view == "analysis" and main.prompt is not None:
        budget = (
            analysis_budget(source)
            if analysis_budget is not None
            else {"token_ids": partial(store.token_ids, source) if source else None}
        )
        analysis, analysis_problem = _analysis(pool, state, source, budget)
    commands, builtin = None, None
    if state.view == "command" and main.prompt is not None:
        commands, builtin = _commands(pool, state, model)
    return Outputs(
        commands=commands,
        builtin=builtin,
        analysis=analysis,
        analysis_problem=analysis_problem,
        main=main,
        source=source,
        token_data=view.data,
        tokens_note=view.note,
        tokens_later=view.later,
        token_ids=view.ids,
        token_id_blocks=id_blocks(view.ids),
        message_tokens=view.per_message,
        comparison=compare(pool, state, main, source, tokens_of, limits),
        command=first_command(state.template, model),
        no_commands=without_commands(),
        model=model,
        now=state.now,
    )
