"""What every engine shares: the engine interface and its guards (render, read an answer).

An engine (`app.render.engines`) reproduces one program's way of turning a chat
request into a prompt. The worker never asks which engine it runs: it calls
`render_with`, which applies the limits every engine runs under, lets the engine
prepare and render, and turns whatever goes wrong into a `TemplateProblem`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from app.errors import bounded_lines
from app.problems import TemplateProblem, limit_exceeded, problem_from_exception
from app.render.answer import (
    AnswerReader,
    AnswerRequest,
    ParsedAnswer,
    ParserOption,
    ReadContext,
    Reading,
)
from app.render.command_line import CommandWriter
from app.render.limits import DEFAULT_LIMITS, RenderLimits, check_template_size
from app.render.render_request import ModelFiles, RenderRequest


@dataclass(frozen=True)
class Rendered:
    """A prompt, the spans of its `{% generation %}` blocks, and any engine rewrites."""

    prompt: str
    generation_spans: list[tuple[int, int]]
    rewrites: list[str] = field(default_factory=list)
    #: What the engine says of how it rendered, by its own key (the render answer adds
    #: them as they are): plain JSON values.
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A rewrite may quote the request (a tool_choice or kwarg name of megabytes, one
        # sentence per dropped kwarg): cut in the worker that renders.
        object.__setattr__(self, "rewrites", list(bounded_lines(self.rewrites, "A rewrite.")))


@dataclass(frozen=True)
class Help:
    """What the page says in place of what an engine does not do."""

    #: Why it has no command line, as the Command view says it (None: it has some).
    no_command: str | None = None
    #: What its program does with the model's answer, said plainly, when the engine has
    #: no reader (None: it reads answers as its program does).
    no_parser: str | None = None


@dataclass(frozen=True)
class EngineInfo:
    """What an engine is: how requests, the page and sentences name it, and what its
    program is (`GET /api/engines` lists `to_json()`)."""

    #: What requests name it by (`"engine"` in the API and the page's menu).
    id: str
    #: How the page names it.
    name: str
    #: The version of the program it reproduces.
    version: str
    #: One sentence on what it reproduces.
    description: str
    #: How a sentence names the program it reproduces ("": its `label`).
    program: str = ""
    help: Help = Help()
    #: Whether it is a server behind an OpenAI-compatible chat API, whose clients send
    #: tool-call arguments as JSON text (a library takes them as objects).
    openai_server: bool = False
    #: Whether its program checks the template when it loads a model, refusing one it
    #: cannot parse (a `LOAD_ERROR` problem) before any request.
    checks_at_load: bool = False

    def __post_init__(self) -> None:
        if not self.program:
            object.__setattr__(self, "program", self.label)

    @property
    def label(self) -> str:
        """How a sentence names it: its `name` without what the brackets add."""
        return self.name.split(" (", 1)[0]

    def to_json(self) -> dict[str, str]:
        """Its entry in `GET /api/engines`."""
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "description": self.description,
        }


class Engine(ABC):
    """One program's chat-template rendering, registered by `info.id` in
    `app.render.engines`: what it is (`info`), how it renders (`prepare`, `render`), how
    it reads answers (`reader`), how its command lines are written (`commands`), and what
    the Analysis view asks of it.

    Engines run inside sandbox workers: they may raise anything, and `render_with`
    names it. They never import Flask.
    """

    info: ClassVar[EngineInfo]
    #: How it reads the model's answer (None: `info.help.no_parser` says what its
    #: program does instead).
    reader: ClassVar[AnswerReader | None] = None
    #: How its command lines are written (None: `info.help.no_command` says why it has
    #: none).
    commands: ClassVar[CommandWriter | None] = None
    #: The template languages it renders (`RenderRequest.template_kind`).
    template_kinds: ClassVar[tuple[str, ...]] = ("jinja",)

    def prepare(self, request: RenderRequest) -> RenderRequest:
        """The request as this engine reads it, checked before any template code runs."""
        return request

    @abstractmethod
    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Render a prepared request within `limits`."""

    def capabilities(self, template: str, limits: RenderLimits) -> dict[str, bool] | None:
        """What the template supports as this engine probes it; None: it has no probe."""
        return None

    def content_format(self, template: str) -> str | None:
        """The content format its program decides for `template` when told "auto"
        (None: it decides none)."""
        return None

    def caveats(self, template: str, model: str | None) -> list[str]:
        """Sentences on what the program does instead of rendering `template` when it
        serves `model` (a name, when known) another way; none by default."""
        return []

    def model_refusal(self, model: ModelFiles) -> str | None:
        """Why its program would not load the Hugging Face model whose template files
        `model` describes, whatever the template; None when it would (the default: the
        program lets a request choose among named templates, or ignores them)."""
        return None


def render_with(
    engine: Engine, request: RenderRequest, limits: RenderLimits = DEFAULT_LIMITS
) -> Rendered:
    """Render `request` with `engine`, raising `TemplateProblem` for anything that fails."""
    try:
        check_template_size(request.template, limits)
        check_template_kind(engine, request)
        return engine.render(engine.prepare(request), limits)
    except TemplateProblem:
        raise
    except Exception as error:
        raise problem_from_exception(error) from None


def check_template_kind(engine: Engine, request: RenderRequest) -> None:
    """Refuse a template in a language `engine`'s program does not read."""
    if request.template_kind not in engine.template_kinds:
        raise TemplateProblem(
            "UnsupportedTemplateKind",
            f"{engine.info.label} does not render {request.template_kind} templates: "
            f"it reads {' or '.join(engine.template_kinds)} templates only.",
        )


def read_with(engine: Engine, answer: AnswerRequest, limits: RenderLimits) -> Reading:
    """`engine`'s options and reading of `answer` (worker side), its options resolved and
    its prompt rendered (when a reader asks) once; raises `TemplateProblem` for a reading
    that runs out of memory or returns more than `limits.output_chars`."""
    reader = engine.reader
    if reader is None:
        return Reading(no_parser=engine.info.help.no_parser)
    options, context = reading_context(engine, reader, answer, limits)
    chosen = context.options
    if (instead := reader.declines(context)) is not None:
        return Reading(options, no_parser=instead, chosen=chosen)
    if not answer.completion:
        return Reading(options, chosen=chosen)
    try:
        parsed = reader.read(answer.completion, context)
    except MemoryError:
        message = "Reading the completion ran out of its memory allowance (PLAYGROUND_MEMORY_MB)."
        raise limit_exceeded("memory", message) from None
    check_message_size(parsed, limits)
    return Reading(options, parsed, chosen=chosen)


def reading_context(
    engine: Engine, reader: AnswerReader, answer: AnswerRequest, limits: RenderLimits
) -> tuple[tuple[ParserOption, ...], ReadContext]:
    """`reader`'s options for `answer`, and the context it reads `answer` in: the value of
    each option, and the prompt `engine` renders (on first use)."""
    options = reader.options(answer.render)
    chosen = {option.name: answer.option(options, option.name) for option in options}
    prompt = partial(_prompt, engine, answer.render, limits)
    return options, ReadContext(answer, chosen, limits, prompt)


def _prompt(engine: Engine, request: RenderRequest, limits: RenderLimits) -> str | None:
    """The prompt `engine` renders for `request`, None when it does not render."""
    try:
        return render_with(engine, request, limits).prompt
    except Exception:  # any failure, as `render_with` names it: no prompt to read with
        return None


def check_message_size(answer: ParsedAnswer, limits: RenderLimits) -> None:
    """Refuse a message larger than a render may be: a parser may write the completion out
    many times (transformers' response template names `{content}` as often as it likes)."""
    calls = answer.tool_calls
    size = len(answer.content or "") + len(answer.reasoning_content or "")
    size += sum(len(call.name) + len(call.arguments) + len(call.id) for call in calls)
    if size > limits.output_chars:
        raise limit_exceeded(
            "output_chars",
            f"The message read from the completion holds {size:,} characters; the limit is "
            f"{limits.output_chars:,} (PLAYGROUND_OUTPUT_CHARS).",
        )
