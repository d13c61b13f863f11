"""vLLM 0.33.0's answer parsers, by the names its server flags take, and the chat API's
way of running them on a completion.

`vllm serve --enable-auto-tool-choice --tool-call-parser T --reasoning-parser R` answers a
non-streaming chat request by composing the two parsers (`ParserManager.get_parser`, a
`DelegatingParser`): the reasoning parser splits off the reasoning, then the tool parser
reads calls out of what is left, and `assemble_chat_message_fields` keeps the calls only
when the request's tool_choice lets it. A request without tools has tool_choice "none":
the tool parser is then skipped (legacy parsers) or run only to drop its markup (parsers
on vLLM's parser engine, when both parsers are). The parsers are in `registry`, each a
module `tool_<name>` or `reasoning_<name>` of this package; `suggest` picks the pair
that fits a template.
"""

from __future__ import annotations

from app.render.answer import AnswerReader, ParsedAnswer, ParserOption, ReadContext, ToolCall
from app.render.core import RenderRequest
from app.render.engines.vllm.answers.base import ParserInput
from app.render.engines.vllm.answers.registry import (
    CONTENT_FROM_TOOL_PARSER,
    ENGINE_BASED_REASONING,
    ENGINE_BASED_TOOLS,
    HARMONY_REASONING,
    HARMONY_TOOL,
    READS_PROMPT,
    REASONING_PARSERS,
    TOOL_PARSERS,
    ToolParser,
)
from app.render.engines.vllm.answers.suggest import suggest
from app.render.engines.vllm.answers.tool_openai import read_pair
from app.render.engines.vllm.render import checked


def _label(tool: str, reasoning: str) -> str:
    named = [name for name in (tool, reasoning) if name != "none"]
    return " + ".join(named) or "none"


def _harmony(completion: str, request: RenderRequest, tool: str, reasoning: str) -> ParsedAnswer:
    """gpt-oss: vLLM reads Harmony with one parser for both flags (`tool_openai`)."""
    reading = read_pair(
        completion, reasoning_parser=reasoning != "none", tool_parser=tool != "none"
    )
    calls = tuple(reading.tool_calls) if tool != "none" and request.tools else ()
    return ParsedAnswer(
        parser=_label(tool, reasoning),
        content=reading.content,
        reasoning_content=reading.reasoning,
        tool_calls=calls,
        notes=tuple(reading.notes),
    )


def _skipped_note(parser: ToolParser, name: str, content: str) -> tuple[str, ...]:
    """A sentence when a skipped tool parser would have found calls in `content` (a
    request without tools, read as vLLM's parser would read it)."""
    found = parser(content, ParserInput())
    if not found.tools_called:
        return ()
    return (
        f'The request declares no tools, so its tool_choice is "none" and vLLM does not '
        f"return the {len(found.tool_calls)} tool call(s) the {name} parser reads here.",
    )


class VllmReader(AnswerReader):
    """vLLM's chat API on a finished completion: the reasoning parser, then the tool
    parser, with the flags the options choose."""

    def options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        """`--tool-call-parser` and `--reasoning-parser`, defaulting to the pair that fits
        the request's template."""
        pick = suggest(request.template, set(TOOL_PARSERS), set(REASONING_PARSERS))
        return (
            ParserOption(
                "tool_call_parser", "--tool-call-parser", ("none", *sorted(TOOL_PARSERS)),
                pick.tool, pick.tool_why,
            ),
            ParserOption(
                "reasoning_parser", "--reasoning-parser", ("none", *sorted(REASONING_PARSERS)),
                pick.reasoning, pick.reasoning_why,
            ),
        )  # fmt: skip

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The assistant message vLLM's chat API returns for `completion` with the chosen
        parsers (a non-streaming request with the render request's tools and kwargs);
        a request vLLM's server refuses (object arguments, say) is refused in its words,
        as the engine's render refuses it: the server answers a 400 and generates nothing."""
        checked(context.request)
        tool, reasoning = context.options["tool_call_parser"], context.options["reasoning_parser"]
        if tool == HARMONY_TOOL or reasoning == HARMONY_REASONING:
            return _harmony(completion, context.request, tool, reasoning)
        return _read(completion, context, tool, reasoning)


#: The one reader: the engine's, and what its command lines ask which parsers fit.
READER = VllmReader()


def _read(completion: str, context: ReadContext, tool: str, reasoning: str) -> ParsedAnswer:
    """The reasoning parser, then the tool parser, as `assemble_chat_message_fields` keeps
    their readings."""
    request = context.request
    kwargs = dict(request.kwargs)
    tools = request.tools or None
    special = tuple(request.special_tokens.values())
    notes: list[str] = []

    said: str | None = None
    content: str | None = completion
    if reasoning != "none":
        # vLLM hands the prompt to the parsers that ask whether it closed the thinking.
        prompt = context.prompt if reasoning in READS_PROMPT else None
        given = ParserInput(tools, kwargs, special, prompt, tool_choice_none=tools is None)
        split = REASONING_PARSERS[reasoning](completion, given)
        said, content = split.reasoning, split.content
        notes += split.notes

    calls: tuple[ToolCall, ...] = ()
    if tool != "none":
        parser = TOOL_PARSERS[tool]
        engine = tool in CONTENT_FROM_TOOL_PARSER or (
            tool in ENGINE_BASED_TOOLS
            and (reasoning == "none" or reasoning in ENGINE_BASED_REASONING)
        )
        # vLLM's chat API tells a tool parser nothing of a tool_choice "none".
        given = ParserInput(tools, kwargs, special, with_reasoning_parser=reasoning != "none")
        if tools is None:  # tool_choice "none"
            if engine:  # the calls are read, then dropped: only their markup goes
                content = parser(content or "", given).content
            elif content:
                notes += _skipped_note(parser, tool, content)
        else:
            found = parser(content if content is not None else "", given)
            notes += found.notes
            if found.tools_called:
                calls = tuple(found.tool_calls)
                content = found.content
                if content is not None and not content.strip():
                    content = None
            elif engine:
                content = found.content or None
    return ParsedAnswer(
        parser=_label(tool, reasoning),
        content=content,
        reasoning_content=said,
        tool_calls=calls,
        notes=tuple(notes),
    )
