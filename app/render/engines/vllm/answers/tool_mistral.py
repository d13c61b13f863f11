"""vLLM's `mistral` tool parser (0.33.0: the Mistral parser engine, v11+ tokenizers).

Mistral's v11+ models write `[TOOL_CALLS]NAME[ARGS]{...}` (or `[TOOL_CALLS]NAME{...}`),
one `[TOOL_CALLS]` per call; `[THINK]...[/THINK]` is reasoning when the tokenizer has
those tokens. The arguments are the first JSON value after the name, verbatim (text
after it is dropped), or the raw text when it is not JSON. The content is the text
before the first call, stripped. Tokenizers without `[ARGS]` (pre-v11, e.g. Mistral
Nemo) take vLLM's legacy path instead, which this module does not reproduce.
"""

from __future__ import annotations

import json

from app.render.answer import ToolCall
from app.render.engines.vllm.answers._schema_types import fix_arguments
from app.render.engines.vllm.answers._state_machine import (
    CALL_ARGS,
    CALL_END,
    CALL_NAME,
    CALL_START,
    TEXT,
    Grammar,
    Move,
    run,
)
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import State as S
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction, mistral_tool_call_id

NAME = "mistral"
#: vLLM's constructor refuses a tokenizer without it.
NEEDS_TOKENS = ("[TOOL_CALLS]",)
DECODER = json.JSONDecoder()


def first_json(raw: str) -> str:
    """vLLM's Mistral `_extract_args_json`: the first JSON value of the text, verbatim."""
    stripped = raw.strip()
    if not stripped:
        return "{}"
    try:
        _, end = DECODER.raw_decode(stripped)
    except (ValueError, RecursionError):
        return stripped
    return stripped[:end]


GRAMMAR = Grammar(
    name=NAME,
    markers={
        "THINK_START": ("[THINK]",),
        "THINK_END": ("[/THINK]",),
        "TOOL_CALLS": ("[TOOL_CALLS]",),
        "ARGS": ("[ARGS]",),
        "OPEN_BRACE": ("{",),
    },
    moves={
        (S.CONTENT, "THINK_START"): Move(S.REASONING),
        (S.REASONING, "THINK_START"): Move(S.REASONING),
        (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
        (S.CONTENT, "THINK_END"): Move(S.CONTENT),
        (S.REASONING, "TOOL_CALLS"): Move(S.TOOL_NAME, (R_END, CALL_START)),
        (S.CONTENT, "TOOL_CALLS"): Move(S.TOOL_NAME, (R_END, CALL_START)),
        (S.TOOL_NAME, "ARGS"): Move(S.TOOL_ARGS),
        (S.TOOL_NAME, "OPEN_BRACE"): Move(S.TOOL_ARGS, (CALL_ARGS,)),
        (S.TOOL_ARGS, "TOOL_CALLS"): Move(S.TOOL_NAME, (CALL_END, CALL_START)),
    },
    start=S.CONTENT,
    convert_args=first_json,
)


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser mistral` (v11+ tokenizer).

    Unlike the other engine formats, a call's name is final once `[ARGS]` or `{` follows
    it, empty included (vLLM returns a call named ""), and never taken from the
    arguments."""
    events = run(GRAMMAR, text, S.CONTENT, skip_reasoning=not given.with_reasoning_parser)
    content: list[str] = []
    names: dict[int, list[str]] = {}
    args: dict[int, list[str]] = {}
    for event in events:
        if event.kind == TEXT and not names:
            content.append(event.value)
        elif event.kind in (CALL_START, CALL_END) and not given.tool_choice_none:
            names.setdefault(event.call, [])
            args.setdefault(event.call, [])
        elif event.kind == CALL_NAME and not given.tool_choice_none:
            names.setdefault(event.call, []).append(event.value)
        elif event.kind == CALL_ARGS and not given.tool_choice_none:
            args.setdefault(event.call, []).append(event.value)
    calls: list[ToolCall] = []
    for index in sorted(names):
        name, raw = "".join(names[index]).strip(), "".join(args.get(index, ()))
        if not name and not raw:
            continue
        arguments = fix_arguments(first_json(raw) if raw.strip() else "{}", given.tools, name)
        calls.append(ToolCall(name, arguments, mistral_tool_call_id(len(calls), name)))
    said = "".join(content)
    if calls or (names and not said.strip()):
        said = said.strip()
    return ToolExtraction(tools_called=bool(calls), tool_calls=tuple(calls), content=said or None)
