"""llama-server's reading of a completion: the chat format and PEG parser it derives.

llama-server (the engine's build b11434: common/chat.cpp and common/parsers/, see
docs/engines/llama.cpp.md) derives, from the template itself, a chat format and a PEG
parser for the model's answer when it applies the template
(`common_chat_templates_apply_jinja`: a specialized handler for some families, the
differential autoparser for every other template; `apply`), and reads the generated
text with it (`common_chat_parse`: the generation prompt, then the completion). A
completion the parser cannot read is an error (HTTP 500), not a message.

`LlamaCppReader.options` lists the operator's choices (`--reasoning-format`, the request's
`parse_tool_calls`); `LlamaCppReader` returns the message.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from app.problems import TemplateProblem
from app.render.answer import AnswerReader, ParsedAnswer, ParserOption, ReadContext, ToolCall
from app.render.core import RenderRequest
from app.render.engines.llamacpp.answers import reading_notes
from app.render.engines.llamacpp.apply.derive import (
    AUTOPARSER_FAILED,
    HandlerFailed,
    HandlerMissing,
)
from app.render.engines.llamacpp.apply.templates_apply import apply_for_completion
from app.render.engines.llamacpp.apply.types import ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg_mapper import ChatParseError, peg_parse
from app.render.engines.llamacpp.messages import LlamaCppInputError
from app.render.engines.llamacpp.peg.peg import DepthError
from app.render.limits import RenderLimits

#: The reasoning formats the page offers (deepseek-legacy differs only when streaming).
REASONING_CHOICES = ("auto", "none", "deepseek")


class LlamaCppReader(AnswerReader):
    """llama-server's `common_chat_parse` on a finished completion."""

    def options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        """llama-server's parsing choices: `--reasoning-format` and the request's
        `parse_tool_calls`, whatever the template."""
        return (
            ParserOption(
                name="reasoning_format",
                label="--reasoning-format",
                choices=REASONING_CHOICES,
                default="auto",
                why=(
                    "llama-server's default: reasoning goes to reasoning_content (auto reads "
                    "as deepseek for a complete answer); none leaves it in the content."
                ),
            ),
            ParserOption(
                name="parse_tool_calls",
                label="parse_tool_calls",
                choices=("true", "false"),
                default="true",
                why=(
                    "The request field's default; at this build no parser reads it, so the "
                    "tool calls are parsed either way."
                ),
            ),
        )

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The assistant message llama-server returns for `completion` (non-streamed)."""
        notes: list[str] = []
        if context.options["parse_tool_calls"] == "false":
            notes.append(
                "parse_tool_calls is false, but llama-server at this build reads no such "
                "switch: tool calls are parsed as with true."
            )
        reasoning_format = context.options["reasoning_format"]
        parsed = read_completion(context.request, completion, context.limits, reasoning_format)
        return dataclasses.replace(parsed, notes=(*notes, *parsed.notes))


def read_completion(
    request: RenderRequest,
    completion: str,
    limits: RenderLimits,
    reasoning_format: str = "auto",
    overrides: dict[str, Any] | None = None,
) -> ParsedAnswer:
    """common_chat_templates_apply_jinja then common_chat_parse for `completion`;
    `overrides` are ParseInputs fields the request sets (see `apply.apply`)."""
    try:
        applied = apply_for_completion(request, limits, reasoning_format, overrides)
    except LlamaCppInputError as error:
        return ParsedAnswer(parser="", error=str(error))
    try:
        params, derived_by = applied.params
    except HandlerMissing as missing:
        return ParsedAnswer(
            parser="",
            content=completion,
            notes=(
                f"llama.cpp reads this template with its {missing} handler, which is not "
                "reproduced here; the completion is shown as plain content.",
            ),
        )
    except HandlerFailed as failed:
        # Only the autoparser's failures are wrapped: a handler's render error is
        # thrown to llama-server as it is.
        return ParsedAnswer(parser="", error=str(failed), notes=failed.notes())
    except Exception as error:  # llama.cpp turns any autoparser failure into this one
        if isinstance(error, TemplateProblem) and error.limit:
            raise  # the playground's own limit, not llama.cpp's answer
        return ParsedAnswer(
            parser="",
            error=f"{AUTOPARSER_FAILED}{error}",
        )
    return _parse(completion, params, derived_by, [], applied.inputs)


def _parse(
    completion: str, params: ChatParams, derived_by: str, notes: list[str], inputs: ParseInputs
) -> ParsedAnswer:
    """common_chat_parse on the generation prompt followed by the completion."""
    try:
        message = peg_parse(
            params.parser,
            completion,
            is_partial=False,
            fmt=params.format,
            generation_prompt=params.generation_prompt,
        )
    except ChatParseError as error:
        stuck = reading_notes.parse_failure(
            completion, len(params.generation_prompt), error.furthest, params.format
        )
        return ParsedAnswer(
            parser=params.format,
            error=str(error),
            notes=(
                *notes,
                f"The completion does not read as the {params.format} grammar "
                f"({derived_by}) expects, so llama-server answers HTTP 500 with this error "
                "instead of a message.",
                *stuck,
            ),
        )
    except DepthError:
        return ParsedAnswer(
            parser=params.format,
            error="The completion nests too deeply to parse.",
            notes=(*notes, "llama-server would run out of stack on this nesting."),
        )
    grammar = f"{params.format} ({derived_by})"
    prompt_length = len(params.generation_prompt)
    calls = tuple(ToolCall(c.name, c.arguments, c.id) for c in message.tool_calls)
    content = message.content
    if not (content or message.reasoning_content or calls) and completion:
        # server-task.cpp: an empty parsed message is not sent; the raw text is.
        content = completion
        notes.extend(reading_notes.read_nothing(completion, prompt_length, message.parsed_to))
    else:
        notes.extend(
            reading_notes.dropped_tail(
                completion, prompt_length, message.parsed_to, grammar, inputs.source
            )
        )
        notes.extend(reading_notes.markup_left(content, params, inputs.has_tools()))
        notes.extend(reading_notes.arguments_not_json(message.tool_calls, params))
    if any(not call.id for call in calls):
        notes.append(
            "The parser gives no id to some tool calls; llama-server fills in a random one "
            "before it answers."
        )
    return ParsedAnswer(
        parser=params.format,
        content=content,
        reasoning_content=message.reasoning_content or None,
        tool_calls=calls,
        notes=tuple(notes),
    )
