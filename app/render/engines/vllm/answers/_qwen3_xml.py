"""Qwen3's XML tool calls as vLLM 0.33.0's Qwen3 parser engine reads them.

`<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>`:
the engine (the table of `reasoning_qwen3.GRAMMAR`) cuts the calls out, and the
arguments text of each is turned into a JSON object of strings by
`_qwen3_arg_converter`: every `<parameter=KEY>` opener (spaces allowed around `parameter`
and `=`) up to the next `</parameter>` or the next opener, one newline trimmed at each
end of the value, the first value of a repeated key kept in place but overwritten.
The schema then retypes the values (`_schema_types`). `qwen3_coder` and `qwen3_xml` are
the same parser in vLLM 0.33.0.
"""

from __future__ import annotations

import json
from dataclasses import replace

from app.render.engines.vllm.answers._engine_reading import read_given
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction
from app.render.engines.vllm.answers.reasoning_qwen3 import GRAMMAR as QWEN3

WORD = "parameter"


def _space_end(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _opener_start(text: str, at: int) -> int | None:
    """`<\\s*parameter\\s*=` at `at`: its end, or None."""
    at = _space_end(text, at + 1)
    if not text.startswith(WORD, at):
        return None
    at = _space_end(text, at + len(WORD))
    return at + 1 if text[at : at + 1] == "=" else None


def _opener(text: str, at: int, next_gt: list[int]) -> tuple[str, int] | None:
    """`<\\s*parameter\\s*=\\s*([^>]*)>` at `at`: (key, end), or None. `next_gt` caches
    the next `>` so that many unclosed openers cost one pass."""
    start = _opener_start(text, at)
    if start is None:
        return None
    at = _space_end(text, start)
    if next_gt[0] < at:
        next_gt[0] = text.find(">", at)
        if next_gt[0] == -1:
            next_gt[0] = len(text) + 1
    if next_gt[0] > len(text):
        return None
    return text[at : next_gt[0]], next_gt[0] + 1


def _closer_end(text: str, at: int) -> int | None:
    """`<\\s*/\\s*parameter\\s*>` at `at`: its end, or None."""
    at = _space_end(text, at + 1)
    if text[at : at + 1] != "/":
        return None
    at = _space_end(text, at + 1)
    if not text.startswith(WORD, at):
        return None
    at = _space_end(text, at + len(WORD))
    return at + 1 if text[at : at + 1] == ">" else None


def _trim(value: str) -> str:
    return value.removeprefix("\n").removesuffix("\n")


def convert(raw: str) -> str:
    """vLLM's `_qwen3_arg_converter(raw, partial=False)`, as one left-to-right scan."""
    params: dict[str, object] = {}
    next_gt = [-1]
    at = raw.find("<")
    while at != -1:
        opened = _opener(raw, at, next_gt)
        if opened is None:
            at = raw.find("<", at + 1)
            continue
        key, value_start = opened
        end = raw.find("<", value_start)
        while end != -1:
            if (close := _closer_end(raw, end)) is not None:
                params[key] = _trim(raw[value_start:end])
                at = raw.find("<", close)
                break
            if _opener_start(raw, end) is not None:
                params[key] = _trim(raw[value_start:end])
                at = end
                break
            end = raw.find("<", end + 1)
        else:
            break  # no end for this value: no later opener can match either
    return json.dumps(params, ensure_ascii=False)


GRAMMAR = replace(QWEN3, convert_args=convert)


def read_qwen3_tools(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for the Qwen3 engine's tool adapter (it drops no
    special tokens)."""
    return read_given(GRAMMAR, text, replace(given, special_tokens=()))
