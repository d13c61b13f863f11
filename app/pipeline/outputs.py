"""One state in, every output view out: the page's data flow in one place (state ->
sandboxed render -> prompt -> tokens -> views), kept free of Flask.

`build_outputs(state, pipeline)` gives the typed `Outputs` (`app.pipeline.views`) that the
page's fragment and its JSON twin both write out. The API's older endpoints are steps of
the same pipeline: `/api/render` is `render_main`, `/api/diff` two of those and
`compare_sides` (`app.pipeline.comparison`), `/api/analyze` `analysis_of`, `/api/command`
`commands_of`; each starts from `Pipeline.bind`, as `build_outputs` does.
What is computed follows the open view (`state.view`): the prompt always; its tokens for
the Tokens and Diff views; the analysis and the command lines only while theirs is open.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from app.analysis.analyze import DEFAULT_MAX_CHARS, DEFAULT_MAX_TURNS, Analysis, analyze
from app.analysis.commands import (
    build_command_lines,
    first_command,
    template_facts,
    without_commands,
)
from app.analysis.model_files import model_files
from app.answers.reading import (
    DEFAULT_COMPLETION_KB,
    Response,
    check_completion_size,
    read_completion,
)
from app.errors import RequestError
from app.pipeline.comparison import compare_sides
from app.pipeline.hints import missing_field_hint
from app.pipeline.prompt import prompt_marks
from app.pipeline.tokens_view import TokensOf, id_blocks, tokens_view, tokens_with
from app.pipeline.views import Comparison, Outputs, PageLimits, Rendering
from app.problems import LOAD_ERROR, TemplateProblem
from app.render.client import as_sent
from app.render.command_line import CommandLine
from app.render.engines import command_notes, get_engine, model_refusals
from app.render.pool import SandboxPool
from app.render.render_request import RenderRequest
from app.sources.source import Source
from app.sources.store import SourceRefused, SourceStore
from app.state import PlaygroundState, SourceRef

__all__ = ["Outputs", "PageLimits", "Pipeline", "build_outputs"]


@dataclass(frozen=True)
class Pipeline:
    """What building outputs draws on: the sandbox and source workers, and the budgets."""

    pool: SandboxPool
    store: SourceStore
    limits: PageLimits = field(default_factory=PageLimits)
    #: User turns the analysis follows (`PLAYGROUND_ANALYSIS_TURNS`).
    analysis_turns: int = DEFAULT_MAX_TURNS
    #: Characters the analysis tokenizes (`PLAYGROUND_OUTPUT_CHARS`).
    analysis_chars: int = DEFAULT_MAX_CHARS
    #: The largest completion read (`PLAYGROUND_COMPLETION_KB`).
    completion_kb: int = DEFAULT_COMPLETION_KB

    def source_of(self, state: PlaygroundState) -> Source | None:
        """The state's source, its tokenizer built (tokens and vocabulary checks need it);
        None when it is gone, or refused by the limits in force (a share opens without
        it, as it does once its source expired)."""
        if state.source is None:
            return None
        try:
            return self.store.get_built(state.source.id)
        except SourceRefused:
            return None

    def bind(self, state: PlaygroundState) -> tuple[PlaygroundState, Source | None]:
        """The state's source (its tokenizer built), and the state as that source says:
        every output of a state starts here, once.

        A bare id must name a loaded source (`named`); a source object that is gone since
        (a share's, expired) is left out. The vocabulary's flags come along: llama.cpp
        strips the BOS/EOS text that a vocabulary adds by itself; and so does what the
        source says of its model (`model_files`: a Modelfile's renderer, parser ...).
        """
        state = self.named(state)
        source = self.source_of(state)
        if source is None:
            return state, None
        asked = state.request
        return state.asking(
            add_bos_token=asked.add_bos_token or bool(source.add_bos_token),
            add_eos_token=asked.add_eos_token or bool(source.add_eos_token),
            model=model_files(source),
            template_kind=_template_kind(asked, source),
        ), source

    def named(self, state: PlaygroundState) -> PlaygroundState:
        """The state with a bare source id replaced by what the loaded source is (kind,
        file), as a share stores it; a `RequestError` when no source has that id."""
        if state.source is None or not state.source.bare:
            return state
        source = self.store.get(state.source.id)
        if source is None:
            message = f"No loaded source has the id {state.source.id[:100]!r}."
            raise RequestError("source", message)
        return replace(state, source=SourceRef(source.id, source.kind, source.file_name))


def _template_kind(asked: RenderRequest, source: Source) -> str:
    """The language of the request's template: a Go source's own template is Go (a body
    that sends it back need not say so), else what the body says."""
    if source.template_kind != "jinja" and asked.template in source.templates.values():
        return source.template_kind
    return asked.template_kind


def render_main(
    state: PlaygroundState, pipeline: Pipeline, source: Source | None, template: str | None = None
) -> Rendering:
    """The state's prompt (or its problem), its markers, rewrites and caveats, and how the
    request went to the engine; `template` renders another template with the same
    conversation."""
    request = state.render_request(template)
    engine = get_engine(request.engine)
    # Shaped here once, for the note, and rendered as shaped (not reshaped in the worker).
    sent, sent_as = as_sent(request)
    said = {
        "engine": engine.info.id,
        "engine_name": engine.info.name,
        "caveats": engine.caveats(request.template, _model(source, state.source)),
        "sent_as": sent_as,
    }
    # The program would not load the model the template came from, whatever the template.
    model = model_files(source)
    if model is not None and (refusal := engine.model_refusal(model)):
        return Rendering(problem=TemplateProblem(LOAD_ERROR, refusal), **said)
    try:
        rendered = pipeline.pool.render_exactly(sent)
    except TemplateProblem as problem:
        return Rendering(problem=problem, hint=missing_field_hint(problem, sent.messages), **said)
    return Rendering(
        prompt=rendered.prompt,
        marks=prompt_marks(rendered.prompt, request.special_tokens.values(), request.template),
        generation_spans=rendered.generation_spans,
        rewrites=rendered.rewrites,
        details=rendered.details,
        **said,
    )


def _model(source: Source | None, ref: SourceRef | None) -> str | None:
    """The loaded model's name, file and repository (a Hub id names the model when its
    files do not), for the engines' caveats."""
    if source is None:
        return None
    origin = (ref.origin if ref is not None else None) or {}
    named = [source.metadata.get("name"), source.file_name, origin.get("repo")]
    return " ".join(part for part in named if isinstance(part, str)) or None


def compare(
    state: PlaygroundState,
    pipeline: Pipeline,
    main: Rendering,
    source: Source | None,
    tokens_of: TokensOf,
) -> Comparison | None:
    """Diff the main prompt against the other engine's, or against the compare template's."""
    if main.prompt is None:
        return None
    if other := state.compared_engine():
        right = render_main(state.asking(engine=other), pipeline, source)
        labels = {
            "label": f"the {other} engine",
            "left_label": f"the {state.request.engine} engine",
        }
    elif state.compare_template:
        right = render_main(state, pipeline, source, state.compare_template)
        labels = {"label": "the compared template", "left_label": "this template"}
    else:
        return None
    # By tokens too when a view on screen shows the main prompt's (Tokens, Diff).
    by_tokens = tokens_of if main.tokens is not None else None
    return compare_sides(main, right, pipeline.limits, by_tokens, **labels)


def analysis_of(state: PlaygroundState, pipeline: Pipeline, source: Source | None) -> Analysis:
    """The Analysis view's findings (it renders a lot); raises `TemplateProblem`."""
    token_ids = partial(pipeline.store.token_ids, source) if source is not None else None
    try:
        return analyze(
            state.render_request(),
            pipeline.pool,
            source,
            token_ids,
            max_turns=pipeline.analysis_turns,
            max_chars=pipeline.analysis_chars,
        )
    except RequestError as error:  # a conversation the probes cannot take apart
        raise TemplateProblem("BadRequest", error.message) from None


def commands_of(
    state: PlaygroundState, pipeline: Pipeline, model: str | None, source: Source | None = None
) -> tuple[list[CommandLine], dict[str, Any]]:
    """Every engine's command lines, and what they learnt of the template (and of the
    loaded `source`: which programs would not load it, `model_refusals`); raises
    `TemplateProblem` when the template cannot even be probed (too large, say)."""
    asked = state.request
    files = model_files(source)
    facts = pipeline.pool.run(
        template_facts, asked.template, asked.kwargs, asked.special_tokens, files
    )
    commands = build_command_lines(
        asked.template,
        asked.kwargs,
        model,
        messages=asked.messages,
        tools=asked.tools,
        add_generation_prompt=asked.add_generation_prompt,
        special_tokens=asked.special_tokens,
        parsers=state.parsers,
        engine=asked.engine,
        model_refusals=model_refusals(files) if files else {},
        **facts,
    )
    return commands, facts


def response_of(
    state: PlaygroundState, pipeline: Pipeline, source: Source | None, round_trip: bool = True
) -> Response:
    """Every engine's reading of the state's completion (and its round trip); raises
    `TemplateProblem` for a completion over `PLAYGROUND_COMPLETION_KB`."""
    check_completion_size(state.completion, pipeline.completion_kb)
    template = source.response_template if source is not None else None
    return read_completion(
        state.render_request(),
        state.completion,
        state.parsers,
        pipeline.pool.run,
        template,
        round_trip=round_trip,
        model_names=model_names(state, source),
    )


def model_names(state: PlaygroundState, source: Source | None) -> tuple[str, ...]:
    """What the playground knows of the model's name: its library entry, a loaded model's
    name, architecture and file, and the repository it came from (a runtime may pick its
    parser by the model, as Edge-LLM's `auto` does by the checkpoint)."""
    names: list[object] = [state.library]
    if source is not None:
        origin = (state.source.origin if state.source is not None else None) or {}
        metadata = source.metadata
        names += [metadata.get("name"), metadata.get("architecture"), source.file_name]
        names.append(origin.get("repo"))
    return tuple(dict.fromkeys(name for name in names if isinstance(name, str) and name))


def gguf_file(state: PlaygroundState) -> str | None:
    """The loaded GGUF file's name, which the commands can run; Hugging Face files are no
    model a command could name (their names are "tokenizer.json, ..."), so None."""
    source = state.source
    if source is None or source.kind != "gguf" or not source.file_name:
        return None
    return source.file_name


def build_outputs(state: PlaygroundState, pipeline: Pipeline) -> Outputs:
    """Render the state and derive every view it shows from the prompt."""
    # Tokens and vocabulary checks need the tokenizer: the render waits for its build.
    state, source = pipeline.bind(state)
    main = render_main(state, pipeline, source)
    tokens_of = tokens_with(pipeline.store, source, pipeline.limits.tokens)
    request = state.render_request()
    view = tokens_view(pipeline.pool, state, request, main.prompt, source, tokens_of)
    if view.tokens is not None:
        main.tokens, main.token_total = view.tokens.tokens, view.tokens.total
    model = gguf_file(state)
    outputs = Outputs(
        main=main,
        source=source,
        token_data=view.data,
        tokens_note=view.note,
        tokens_later=view.later,
        token_ids=view.ids,
        token_id_blocks=id_blocks(view.ids),
        message_tokens=view.per_message,
        comparison=compare(state, pipeline, main, source, tokens_of),
        command=first_command(state.request.template, model),
        no_commands=without_commands(),
        model=model,
        now=state.now_text,
    )
    if state.view == "command":
        # Also when this engine refuses the template (Edge-LLM will not load it): the
        # command lines say so; a template that cannot even be probed shows the first one.
        with contextlib.suppress(TemplateProblem):
            outputs.commands, outputs.facts = commands_of(state, pipeline, model, source)
            outputs.command_notes = command_notes(outputs.facts)
    if main.prompt is None:
        return outputs
    if state.view == "analysis":
        try:
            outputs.analysis = analysis_of(state, pipeline, source)
        except TemplateProblem as problem:
            outputs.analysis_problem = problem
    # The Response view always (its parser options show without a completion); the
    # Analysis view's prefix section only has round trips to show when there is one.
    if state.view == "response" or (state.view == "analysis" and state.completion):
        try:
            outputs.response = response_of(state, pipeline, source)
        except TemplateProblem as problem:
            outputs.response_problem = problem
    return outputs
