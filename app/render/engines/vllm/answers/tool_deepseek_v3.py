"""vLLM's `deepseek_v3` tool parser (0.33.0: `DeepSeekV3ToolParser`).

DeepSeek V3 / R1 write each call with its type, its name and a fenced JSON block::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

vLLM passes the fenced text on as the arguments without reading it as JSON. Once the
calls marker is in the answer it reports tool calls even when no call is well formed.
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

NAME = "deepseek_v3"
#: vLLM refuses to start this parser when the tokenizer lacks these tokens.
NEEDS_TOKENS = (CALLS_BEGIN, CALLS_END)

FENCE_OPEN = "\n```json\n"
FENCE_CLOSE = "\n```" + CALL_END


def _calls(text: str) -> list[tuple[str, str, str]]:
    """(type, name, arguments) of each call vLLM's expression finds: a begin marker, a
    type running to the line's last separator, the rest of the line as the name, the
    fence on the next line, and the arguments up to the first fence close."""
    found: list[tuple[str, str, str]] = []
    closes, newlines = Later(text, FENCE_CLOSE), Later(text, "\n")
    last_sep: dict[int, int] = {}
    at = text.find(CALL_BEGIN)
    while at != -1:
        start = at + len(CALL_BEGIN)
        line_end = newlines.at_or_after(start)
        if line_end == -1:
            break
        if line_end not in last_sep:
            # The line's last separator is the same for every begin marker on it.
            last_sep[line_end] = text.rfind(SEP, start, line_end)
        sep = last_sep[line_end] if last_sep[line_end] >= start else -1
        if sep != -1 and text.startswith(FENCE_OPEN, line_end):
            args_start = line_end + len(FENCE_OPEN)
            close = closes.at_or_after(args_start)
            if close == -1:
                break
            found.append((text[start:sep], text[sep + len(SEP) : line_end], text[args_start:close]))
            at = text.find(CALL_BEGIN, close + len(FENCE_CLOSE))
        else:
            at = text.find(CALL_BEGIN, at + 1)
    return found


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser deepseek_v3`."""
    if CALLS_BEGIN not in text:
        return ToolExtraction(tools_called=False, content=text)
    calls = _calls(text)
    if any(kind != "function" for kind, _, _ in calls):
        # vLLM's ToolCall only takes type "function": the error sends everything back.
        note = (
            "A DeepSeek call's type is not `function`, so vLLM's deepseek_v3 parser fails "
            "and returns the whole completion as content."
        )
        return ToolExtraction(tools_called=False, content=text, notes=(note,))
    content = text[: text.find(CALLS_BEGIN)]
    end = text.rfind(CALLS_END)
    if end != -1:
        content += text[end + len(CALLS_END) :]
    tool_calls = tuple(
        ToolCall(name=name, arguments=args, id=tool_call_id(i, name))
        for i, (_, name, args) in enumerate(calls)
    )
    return ToolExtraction(
        tools_called=True,
        tool_calls=tool_calls,
        content=content or None,
        notes=calls_note(NAME, text, len(tool_calls)),
    )
