"""vLLM's `hermes` tool parser (0.33.0: `Hermes2ProToolParser`), on the whole answer.

Hermes-style models write each call as `<tool_call>{"name": ..., "arguments": {...}}
</tool_call>`; a last `<tool_call>` may be left unclosed (it runs to the end). vLLM
loads every block as JSON; if any block fails (not JSON, no "name" or "arguments", a
name that is not a string) it returns the whole answer as content and no call. The
content is the text before the first `<tool_call>` (text between and after the calls
is dropped), null when there is none.
"""

from __future__ import annotations

import json

from app.render.answer import ToolCall
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction, tool_call_id

NAME = "hermes"
START = "<tool_call>"
END = "</tool_call>"


def blocks(text: str) -> list[str]:
    """The bodies vLLM's `<tool_call>(.*?)</tool_call>|<tool_call>(.*)` finds, found
    with `str.find` so that a text full of openers costs one pass."""
    found: list[str] = []
    at = text.find(START)
    while at != -1:
        body = at + len(START)
        end = text.find(END, body)
        if end == -1:
            found.append(text[body:])
            break
        found.append(text[body:end])
        at = text.find(START, end + len(END))
    return found


def json_problem(body: str) -> str | None:
    """Why `body` is not one tool call as Hermes writes it (None: it is one)."""
    try:
        call = json.loads(body)
    except RecursionError:
        return "is nested too deeply for Python's JSON reader"
    except ValueError as error:
        return f"is not valid JSON ({error})"
    if not isinstance(call, dict):
        return "is JSON but not an object"
    if "name" not in call:
        return 'has no "name"'
    if "arguments" not in call:
        return 'has no "arguments"'
    if not isinstance(call["name"], str):
        return 'has a "name" that is not a string'
    return None


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser hermes`."""
    if START not in text:
        return ToolExtraction(tools_called=False, content=text)
    calls: list[ToolCall] = []
    for number, body in enumerate(blocks(text), start=1):
        if (problem := json_problem(body)) is not None:
            note = (
                f"`<tool_call>` block {number} {problem}, so vLLM's hermes parser returns "
                "the whole completion as content and no tool call."
            )
            return ToolExtraction(tools_called=False, content=text, notes=(note,))
        call = json.loads(body)
        arguments = json.dumps(call["arguments"], ensure_ascii=False)
        calls.append(ToolCall(call["name"], arguments, tool_call_id(len(calls), call["name"])))
    content = text[: text.find(START)]
    notes: tuple[str, ...] = ()
    if _text_between(text[len(content) :]):
        notes = ("vLLM's hermes parser drops the text between and after the tool calls.",)
    return ToolExtraction(
        tools_called=True, tool_calls=tuple(calls), content=content or None, notes=notes
    )


def _text_between(rest: str) -> bool:
    """Whether anything but whitespace stands outside the blocks after the first one."""
    outside = []
    at = 0
    while (start := rest.find(START, at)) != -1:
        outside.append(rest[at:start])
        end = rest.find(END, start + len(START))
        if end == -1:
            at = len(rest)
            break
        at = end + len(END)
    outside.append(rest[at:])
    return any(part.strip() for part in outside)
