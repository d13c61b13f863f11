"""vLLM's `deepseek_v31` tool parser (0.33.0: `DeepSeekV31ToolParser`).

DeepSeek V3.1 writes a call as its name, a separator and the raw JSON::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}
    <｜tool▁call▁end｜><｜tool▁calls▁end｜>

(one line in the answer)

vLLM passes the arguments on as written, without reading them as JSON; the content is
the text before the calls marker (text after the calls is dropped). Once the marker is
in the answer it reports tool calls even when no call is well formed.
"""

from __future__ import annotations

from app.render.answer import ToolCall
from app.render.engines.vllm.answers._deepseek_markup import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    SEP,
    Later,
    calls_note,
)
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction, tool_call_id

NAME = "deepseek_v31"
#: vLLM refuses to start this parser when the tokenizer lacks these tokens.
NEEDS_TOKENS = (CALLS_BEGIN, CALLS_END)


def _calls(text: str) -> list[tuple[str, str]]:
    """(name, arguments) of each call vLLM's expression finds: a begin marker, a name up
    to the first separator on the same line, the arguments up to the first end marker."""
    found: list[tuple[str, str]] = []
    ends, seps, newlines = Later(text, CALL_END), Later(text, SEP), Later(text, "\n")
    at = text.find(CALL_BEGIN)
    while at != -1:
        start = at + len(CALL_BEGIN)
        sep = seps.at_or_after(start)
        if sep == -1:
            break
        newline = newlines.at_or_after(start)
        if newline == -1 or newline > sep:
            args_start = sep + len(SEP)
            end = ends.at_or_after(args_start)
            if end == -1:
                break
            found.append((text[start:sep], text[args_start:end]))
            at = text.find(CALL_BEGIN, end + len(CALL_END))
        else:
            at = text.find(CALL_BEGIN, at + 1)
    return found


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser deepseek_v31`."""
    if CALLS_BEGIN not in text:
        return ToolExtraction(tools_called=False, content=text)
    calls = _calls(text)
    content = text[: text.find(CALLS_BEGIN)]
    notes = calls_note(NAME, text, len(calls))
    tail = text.rfind(CALLS_END)
    if text[tail + len(CALLS_END) :].strip() if tail != -1 else False:
        notes += ("vLLM's deepseek_v31 parser drops the text after the tool calls.",)
    return ToolExtraction(
        tools_called=True,
        tool_calls=tuple(
            ToolCall(name=name, arguments=args, id=tool_call_id(i, name))
            for i, (name, args) in enumerate(calls)
        ),
        content=content or None,
        notes=notes,
    )
