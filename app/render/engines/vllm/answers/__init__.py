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

from app.render.answer import AnswerRequest, ParsedAnswer, ParserOption, ToolCall
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
from app.render.engines.vllm.render import render
from app.render.limits import RenderLimits, check_template_size


def parser_options(request: RenderRequest) -> tuple[ParserOption, ...]:
    """`--tool-call-parser` and `--reasoning-parser`, defaulting to the pair that fits
    the request's template."""
    pick = suggest(request.template, set(TOOL_PARSERS), set(REASONING_PARSERS))
    return (
        ParserOption(
            "tool_call_parser", "--tool-call-parser", ("none", *sorted(TOOL_PARSERS)), pick.tool,
            pick.tool_why,
        ),
        ParserOption(
            "reasoning_parser", "--reasoning-parser", ("none", *sorted(REASONING_PARSERS)),
            pick.reasoning, pick.reasoning_why,
        ),
    )  # fmt: skip


def _prompt(answer: AnswerRequest, limits: RenderLimits) -> str | None:
    """The prompt vLLM renders for the request (None when it does not render)."""
    try:
        check_template_size(answer.render.template, limits)
        return render(answer.render, limits).prompt
    except Exception:  # any failure, as `render_with` names it: vLLM renders no prompt
        return None


def _label(tool: str, reasoning: str) -> str:
    named = [name for name in (tool, reasoning) if name != "none"]
    return " + ".join(named) or "none"


def _harmony(answer: AnswerRequest, tool: str, reasoning: str) -> ParsedAnswer | None:
    """gpt-oss: vLLM reads Harmony with one parser for both flags (`tool_openai`)."""
    if tool != HARMONY_TOOL and reasoning != HARMONY_REASONING:
        return None
    reading = read_pair(
        answer.completion, reasoning_parser=reasoning != "none", tool_parser=tool != "none"
    )
    calls = tuple(reading.tool_calls) if tool != "none" and answer.render.tools else ()
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


def read_answer(answer: AnswerRequest, limits: RenderLimits) -> ParsedAnswer:
    """The assistant message vLLM's chat API returns for `answer.completion` with the
    chosen parsers (a non-streaming request with the render request's tools and kwargs)."""
    options = parser_options(answer.render)
    tool = answer.option(options, "tool_call_parser")
    reasoning = answer.option(options, "reasoning_parser")
    if (harmony := _harmony(answer, tool, reasoning)) is not None:
        return harmony
    kwargs = dict(answer.render.kwargs)
    tools = answer.render.tools or None
    special = tuple(answer.render.special_tokens.values())
    notes: list[str] = []

    said: str | None = None
    content: str | None = answer.completion
    if reasoning != "none":
        # vLLM hands the prompt to the parsers that ask whether it closed the thinking.
        prompt = _prompt(answer, limits) if reasoning in READS_PROMPT else None
        given = ParserInput(tools, kwargs, special, prompt, tool_choice_none=tools is None)
        split = REASONING_PARSERS[reasoning](answer.completion, given)
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
