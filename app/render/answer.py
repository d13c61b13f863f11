"""What a runtime makes of the model's answer: the completion read back as a message.

A runtime behind a chat API does not hand the model's raw text to its client: it cuts
what the model generated after the prompt (the *completion*) into an assistant message
(`content`, `reasoning_content`, `tool_calls`) with a parser of its own, chosen from
the template or by a server flag. An engine that reproduces one reads a completion as
its program does (its `AnswerReader`); one whose program reads none says what it does
instead (`EngineInfo.help.no_parser`).

Everything here but the reader is plain data: it crosses from a sandbox worker to the
web process.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from app.errors import bounded_lines, bounded_text
from app.render.limits import RenderLimits
from app.render.render_request import RenderRequest


def stable_digest(index: int, name: str) -> str:
    """The hex digest that stands in for a runtime's random tool-call id: the same for the
    same call (its place and name), so that pages, shares and round trips reproduce."""
    return hashlib.sha256(f"{index}:{name}".encode()).hexdigest()


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the runtime's API returns it."""

    name: str
    #: The arguments as JSON text, byte for byte what the API sends (its spacing, its key
    #: order); text that is not JSON when the runtime passes it on as it is.
    arguments: str
    #: The id the runtime gives it ("" when it gives none, as some do).
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class ParsedAnswer:
    """The assistant message a runtime returns for a completion, and how it got there."""

    #: The parser that read it, as its runtime names it ("peg-native", "hermes", ...).
    parser: str
    #: The message's fields; None where the runtime's answer has null (or no field).
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    #: Sentences on what did not read as the format means it, in the runtime's terms:
    #: markup left in the content, a tool call dropped, arguments re-serialised.
    notes: tuple[str, ...] = ()
    #: The runtime's error when it answers one instead of a message (llama-server's
    #: "Failed to parse input" is an HTTP 500 to its client), else None.
    error: str | None = None
    #: Whether its API leaves a null field out of the message instead of sending null
    #: (Edge-LLM's server writes its response with pydantic's `exclude_none`).
    omits_null: bool = False

    def __post_init__(self) -> None:
        # Notes and errors may quote the completion (the region that is not JSON, the
        # name of a function dropped): cut here, where the worker makes the answer, so a
        # completion of PLAYGROUND_COMPLETION_KB is not sent back once per sentence. The
        # message's own fields are the runtime's answer, and stay whole.
        object.__setattr__(self, "notes", bounded_lines(self.notes, "A note."))
        if self.error is not None:
            object.__setattr__(self, "error", bounded_text(self.error, "An error."))

    def message(self) -> dict[str, Any] | None:
        """The assistant message as the runtime's OpenAI-compatible API sends it (None
        when it answers an error)."""
        if self.error is not None:
            return None
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.content is None and self.omits_null:
            del message["content"]
        if self.reasoning_content is not None:
            message["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            message["tool_calls"] = [call.to_json() for call in self.tool_calls]
        return message

    def to_json(self) -> dict[str, Any]:
        return {
            "parser": self.parser,
            "message": self.message(),
            "notes": list(self.notes),
            "error": self.error,
        }


@dataclass(frozen=True)
class ParserOption:
    """One choice a runtime's operator makes about parsing: a server flag, mostly."""

    #: Its key in `AnswerRequest.options` and in the API ("reasoning_format", ...).
    name: str
    #: How the page labels it: the flag as the runtime spells it ("--reasoning-format").
    label: str
    #: The values it takes, in the order the page lists them.
    choices: tuple[str, ...]
    #: What the runtime uses for this template when the operator says nothing, or what
    #: fits the template best where the runtime picks nothing itself (vLLM's parsers).
    default: str
    #: One sentence on why `default` is the default.
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "choices": list(self.choices),
            "default": self.default,
            "why": self.why,
        }


@dataclass(frozen=True)
class AnswerRequest:
    """A completion to read, and everything its reading depends on."""

    #: The request whose prompt the completion continues (its tools, options, template).
    render: RenderRequest
    #: What the model generated after that prompt, its stop token left out (a runtime
    #: never passes the stop token to its parser).
    completion: str
    #: The engine's parser options by name; a missing one takes its default.
    options: dict[str, str] = field(default_factory=dict)
    #: The source's `response_template` (the `tokenizer_config.json` key transformers'
    #: `parse_response` reads) as JSON text, when it has one: parsed by the engine that
    #: reads it, in its sandbox worker.
    response_template: str | None = None
    #: What the playground knows of the model's name (its library entry, a loaded
    #: model's name, architecture, file and repository), for a runtime that picks its
    #: parser by the model rather than by the template.
    model_names: tuple[str, ...] = ()

    def option(self, choices: tuple[ParserOption, ...], name: str) -> str:
        """The value of option `name`: the one asked for when it is one of its choices,
        else its default."""
        option = next(o for o in choices if o.name == name)
        value = self.options.get(name)
        return value if value in option.choices else option.default


@dataclass(frozen=True)
class Reading:
    """What one engine says about a completion: its parser options for the request, and
    the message it returns (None when there is no completion or it reads none)."""

    options: tuple[ParserOption, ...] = ()
    answer: ParsedAnswer | None = None
    #: What the program does instead of parsing, when it does not (`AnswerReader.declines`,
    #: or the engine's `help.no_parser` when it has no reader).
    no_parser: str | None = None
    #: The value each option takes for this answer (`AnswerRequest.option`), by name.
    chosen: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadContext:
    """What a reading depends on besides the completion, worked out once per reading."""

    #: The completion's request: its render request, response template, model names.
    answer: AnswerRequest
    #: The value of each of the reader's options for this answer, by name.
    options: dict[str, str]
    limits: RenderLimits
    #: Renders the request's prompt with the reading engine (None when it fails).
    render_prompt: Callable[[], str | None] = field(repr=False, compare=False)

    @property
    def request(self) -> RenderRequest:
        """The render request whose prompt the completion continues."""
        return self.answer.render

    @cached_property
    def prompt(self) -> str | None:
        """The prompt the completion continues, as the engine renders it (None when it
        does not render): rendered on first use, once, for the readers that read it."""
        return self.render_prompt()


class AnswerReader(ABC):
    """How an engine reads the model's answer as its program does (runs in a sandbox
    worker, with the completion's `ReadContext`)."""

    def options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        """The choices its operator makes about reading answers (server flags), each with
        what the program takes for this request's template; none by default."""
        return ()

    def declines(self, context: ReadContext) -> str | None:
        """What its program does instead of parsing this answer, if it does not (None:
        it parses, the default)."""
        return None

    @abstractmethod
    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The message its program returns for `completion`, within `context.limits`."""
