"""What one vLLM parser returns: the shapes every `tool_*` and `reasoning_*` module shares.

vLLM reads a completion in two steps (non-streaming chat completions): the reasoning
parser (`--reasoning-parser`) splits off the reasoning, then the tool parser
(`--tool-call-parser`, with `--enable-auto-tool-choice`) reads tool calls out of what is
left. Each parser here is one module reproducing one of vLLM's, named as vLLM registers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.render.answer import ToolCall, stable_digest


@dataclass(frozen=True)
class ToolExtraction:
    """A tool parser's reading: vLLM's `ExtractedToolCallInformation`."""

    #: Whether vLLM reports tool calls (its `tools_called`).
    tools_called: bool
    tool_calls: tuple[ToolCall, ...] = ()
    #: The message's content: the text the parser left (None where vLLM sends null).
    content: str | None = None
    #: Sentences for the user on what did not read as the format means it.
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReasoningExtraction:
    """A reasoning parser's reading: vLLM's `(reasoning, content)` pair."""

    reasoning: str | None
    content: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParserInput:
    """What vLLM hands a parser besides the text: every parser is `extract(text, given)`
    (`registry`), and reads only the fields its vLLM class reads."""

    #: The request's tools (None: it declares none).
    tools: list[dict] | None = None
    #: The request's chat_template_kwargs (a thinking switch, mostly).
    kwargs: dict = field(default_factory=dict)
    #: The tokenizer's special tokens; those a format does not use are dropped.
    special_tokens: tuple[str, ...] = ()
    #: The rendered prompt, for the parsers that ask whether it closed the thinking.
    prompt: str | None = None
    #: Whether a reasoning parser runs first (without one, reasoning markers stay text).
    with_reasoning_parser: bool = True
    #: Whether the request's tool_choice is "none".
    tool_choice_none: bool = False


class FailsInVllm(ValueError):
    """Where vLLM's parser raises (its server answers an error): the playground reads on
    with `arguments` and says so in `note`."""

    def __init__(self, note: str, arguments: str) -> None:
        super().__init__(note)
        self.note, self.arguments = note, arguments


def tool_call_id(index: int, name: str) -> str:
    """A stand-in for the random id vLLM 0.33.0 gives a tool call (`chatcmpl-tool-` and 16
    hex digits: its `random_uuid` keeps 64 bits): the same shape, but the same for the
    same call, so that pages, shares and round trips are reproducible."""
    return f"chatcmpl-tool-{stable_digest(index, name)[:16]}"


#: The characters of Mistral's tool-call ids (`MistralToolCall.generate_random_id`).
_ALPHANUMERIC = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def mistral_tool_call_id(index: int, name: str) -> str:
    """A stand-in for the random id vLLM's mistral parser gives a call (9 alphanumeric
    characters, `MistralToolCall`; Mistral's templates refuse any other length), stable as
    `tool_call_id` is."""
    number = int(stable_digest(index, name), 16)
    digits = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHANUMERIC))
        digits.append(_ALPHANUMERIC[digit])
    return "".join(digits)
