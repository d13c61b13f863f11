"""What every engine shares: the request, the answer, the engine interface and its guard.

An engine (`app.render.engines`) reproduces one program's way of turning a chat
request into a prompt. The worker never asks which engine it runs: it calls
`render_with`, which applies the limits every engine runs under, lets the engine
prepare and render, and turns whatever goes wrong into a `TemplateProblem`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from app.errors import bounded_lines
from app.problems import TemplateProblem, problem_from_exception
from app.render.command_line import CommandContext, CommandLine
from app.render.limits import DEFAULT_LIMITS, RenderLimits, check_template_size

if TYPE_CHECKING:  # app.render.answer builds on RenderRequest, below
    from app.render.answer import AnswerRequest, ParsedAnswer, ParserOption


@dataclass(frozen=True)
class RenderRequest:
    """Everything a render depends on; the same fields as the `/api/render` body."""

    template: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    documents: list[dict[str, Any]] | None = None
    add_generation_prompt: bool = False
    continue_final_message: bool | str = False
    special_tokens: dict[str, str] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    now: datetime | None = None
    #: The id of a registered engine (`app.render.engines`); None: the reference engine.
    engine: str | None = None
    #: Whether the vocabulary adds BOS/EOS itself (llama.cpp strips them from the text).
    add_bos_token: bool = False
    add_eos_token: bool = False
    #: How vLLM-style engines shape message content (`--chat-template-content-format`):
    #: "auto" detects it from the template, "string" or "openai" force it.
    content_format: str = "auto"
    #: How the caller sends tool-call arguments (`app.render.client`): "as_written" (the
    #: messages exactly as given), "json_text" (as OpenAI clients send them) or "objects"
    #: (as library callers pass them). The same for every engine.
    tool_arguments: str = "as_written"


@dataclass(frozen=True)
class ModelFiles:
    """What a loaded Hugging Face model's template files are, for engines whose program
    checks them when it loads the model (`Engine.model_refusal`)."""

    #: Its named templates besides the default one: `additional_chat_templates/NAME.jinja`
    #: files, or the names of a `chat_template` list in tokenizer_config.json.
    named_templates: tuple[str, ...] = ()
    #: Whether a `chat_template.json` holds a template (a processor's).
    json_template: bool = False


#: The values `RenderRequest.content_format` takes, as vLLM's server flag does.
CONTENT_FORMATS = ("auto", "string", "openai")
#: The values `RenderRequest.tool_arguments` takes (see `app.render.client`).
TOOL_ARGUMENT_FORMS = ("as_written", "json_text", "objects")


#: A template's prompt for a conversation, by the reference engine (None when it fails).
Render = Callable[[list[dict[str, Any]], bool], "str | None"]


@dataclass(frozen=True)
class Rendered:
    """A prompt, the spans of its `{% generation %}` blocks, and any engine rewrites."""

    prompt: str
    generation_spans: list[tuple[int, int]]
    rewrites: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # A rewrite may quote the request (a tool_choice or kwarg name of megabytes, one
        # sentence per dropped kwarg): cut in the worker that renders.
        object.__setattr__(self, "rewrites", list(bounded_lines(self.rewrites, "A rewrite.")))


class Engine(ABC):
    """One program's chat-template rendering, registered by `id` in `app.render.engines`.

    Engines run inside sandbox workers: they may raise anything, and `render_with`
    names it. They never import Flask.
    """

    #: What requests name it by (`"engine"` in the API and the page's menu).
    id: ClassVar[str]
    #: How the page names it.
    name: ClassVar[str]
    #: The version of the program it reproduces.
    version: ClassVar[str]
    #: One sentence on what it reproduces.
    description: ClassVar[str]
    #: Whether it is a server behind an OpenAI-compatible chat API, whose clients send
    #: tool-call arguments as JSON text (a library takes them as objects).
    openai_server: ClassVar[bool] = False
    #: Where its command lines come in the Command view, lowest first.
    command_rank: ClassVar[int] = 100
    #: Why it has no command line, as the page says it (None: it has some).
    no_command: ClassVar[str | None] = None
    #: Whether its program checks the template when it loads a model, refusing one it
    #: cannot parse (a `LOAD_ERROR` problem) before any request.
    checks_at_load: ClassVar[bool] = False
    #: What its program does with the model's answer when the engine does not read it
    #: as the program does, said plainly (None: it does, see `read_answer`).
    no_parser: ClassVar[str | None] = None
    #: How a sentence names the program whose rendering it reproduces, when that is not
    #: its `label` ("llama-server").
    program_name: ClassVar[str | None] = None

    @property
    def label(self) -> str:
        """How a sentence names it: its `name` without what the brackets add."""
        return self.name.split(" (", 1)[0]

    @property
    def program(self) -> str:
        """How a sentence names the program it reproduces."""
        return self.program_name or self.label

    def info(self) -> dict[str, str]:
        """Its entry in `GET /api/engines`."""
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "description": self.description,
        }

    def prepare(self, request: RenderRequest) -> RenderRequest:
        """The request as this engine reads it, checked before any template code runs."""
        return request

    @abstractmethod
    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Render a prepared request within `limits`."""

    def capabilities(self, template: str, limits: RenderLimits) -> dict[str, bool] | None:
        """What the template supports as this engine probes it; None: it has no probe."""
        return None

    def command_facts(self, template: str, special_tokens: dict[str, str], render: Render) -> dict:
        """What its command lines need to know of the template, learnt in a sandbox worker;
        `render(messages, add_generation_prompt)` is the template's prompt by the reference
        engine (None when it fails). Its keys are part of `/api/command`'s answer."""
        return {}

    def command_lines(self, context: CommandContext) -> list[CommandLine]:
        """The command lines that run its program with the template (`app.render.command_line`)."""
        return []

    def command_notes(self, facts: dict[str, Any]) -> dict[str, str]:
        """Sentences the Command view says about its command lines, given what
        `command_facts` learnt, by a short key (`backquoted` parts are code)."""
        return {}

    def content_format(self, template: str) -> str | None:
        """The content format its program decides for `template` when told "auto"
        (None: it decides none)."""
        return None

    def answer_options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        """The choices its operator makes about reading answers (server flags), each with
        what the program takes for this request's template."""
        return ()

    def no_parser_for(self, answer: AnswerRequest) -> str | None:
        """What its program does instead of parsing this answer, if it does not (by
        default `no_parser`, whatever the answer)."""
        return self.no_parser

    def read_answer(self, answer: AnswerRequest, limits: RenderLimits) -> ParsedAnswer:
        """The message its program returns for `answer.completion`, within `limits` (runs
        in a sandbox worker). Only engines whose `no_parser` is None read answers."""
        raise NotImplementedError(f"{self.name} does not read answers: {self.no_parser}")

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
        return engine.render(engine.prepare(request), limits)
    except TemplateProblem:
        raise
    except Exception as error:
        raise problem_from_exception(error) from None
