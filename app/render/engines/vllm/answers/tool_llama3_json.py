"""vLLM's `llama3_json` tool parser (0.33.0: `Llama3JsonToolParser`, also `llama4_json`).

Llama 3.1/3.2 answer a call with a JSON object `{"name": ..., "parameters": {...}}`
(or "arguments"), optionally after `<|python_tag|>`, several separated by `;`. vLLM
decodes a JSON object at every `{` that is not inside one already decoded; if any of
them fails to decode or lacks "name" or both "arguments" and "parameters", the whole
answer is content. When calls are found the content is null: text around them is lost.
"""

from __future__ import annotations

import json

from app.render.answer import ToolCall
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction, tool_call_id

NAME = "llama3_json"
#: vLLM's constructor refuses a tokenizer without it.
NEEDS_TOKENS = ("<|python_tag|>",)
BOT = "<|python_tag|>"
DECODER = json.JSONDecoder()


def _fail(text: str, why: str) -> ToolExtraction:
    note = f"{why}, so vLLM's llama3_json parser returns the whole completion as content."
    return ToolExtraction(tools_called=False, content=text, notes=(note,))


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser llama3_json`."""
    calls: list[ToolCall] = []
    end = -1
    at = text.find("{")
    while at != -1:
        if at > end:
            try:
                # raw_decode with an offset reads in place (vLLM slices the text).
                obj, end = DECODER.raw_decode(text, at)
            except RecursionError:
                return _fail(text, f"The JSON at character {at} is nested too deeply")
            except ValueError as error:
                return _fail(text, f"The text from character {at} is not a JSON object ({error})")
            if "name" not in obj or not ("arguments" in obj or "parameters" in obj):
                return _fail(
                    text,
                    f'The JSON object at character {at} has no "name" and '
                    '"arguments" or "parameters"',
                )
            if not isinstance(obj["name"], str):
                return _fail(
                    text, f'The "name" of the JSON object at character {at} is not a string'
                )
            value = obj["arguments"] if "arguments" in obj else obj["parameters"]
            name = obj["name"]
            arguments = json.dumps(value, ensure_ascii=False)
            calls.append(ToolCall(name, arguments, tool_call_id(len(calls), name)))
            # vLLM skips every brace up to and including the one just past the object.
            at = text.find("{", end + 1)
            continue
        at = text.find("{", at + 1)
    if not calls:
        return ToolExtraction(tools_called=False, content=text)
    notes: tuple[str, ...] = ()
    if text.replace(BOT, "").strip()[:1] != "{" or text.rstrip()[-1:] != "}":
        notes = (
            "vLLM's llama3_json parser returns no content with tool calls: the text "
            "around the JSON is dropped.",
        )
    return ToolExtraction(tools_called=True, tool_calls=tuple(calls), content=None, notes=notes)
