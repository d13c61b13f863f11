"""GLM-4.5/4.6/4.7's format as vLLM 0.33.0 reads it (`vllm/parser/glm47_moe.py`): one table
for both the `glm45` tool parser and the `glm45` reasoning parser (vLLM registers
`glm45` and `glm47` as the same parser since 0.33)::

    <think>...</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left

from app.render.engines.vllm.answers._state_machine import (
    CALL_ARGS,
    CALL_END,
    CALL_START,
    Grammar,
    Move,
)
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import REASONING_START as R_START
from app.render.engines.vllm.answers._state_machine import State as S

KEY_OPEN, KEY_CLOSE = "<arg_key>", "</arg_key>"
VALUE_OPEN, VALUE_CLOSE = "<arg_value>", "</arg_value>"
#: What may stand between a key's close and its value's open.
_GAP = re.compile(r"\s*" + re.escape(VALUE_OPEN))


def read_args(raw: str) -> str:
    """The `<arg_key>k</arg_key><arg_value>v</arg_value>` pairs as a JSON object of
    strings (keys stripped, a repeated key keeps its first place and its last value).

    The same pairs vLLM's lazy regular expression finds, found in linear time: a key
    runs to the first `</arg_key>` that is followed by `<arg_value>` and some
    `</arg_value>` after it, its value to the first `</arg_value>`."""
    # Each key close that a value open follows, and where that value starts.
    closes: list[int] = []
    starts: list[int] = []
    at = raw.find(KEY_CLOSE)
    while at != -1:
        gap = _GAP.match(raw, at + len(KEY_CLOSE))
        if gap is not None:
            closes.append(at)
            starts.append(gap.end())
        at = raw.find(KEY_CLOSE, at + 1)
    last_value_close = raw.rfind(VALUE_CLOSE)
    params: dict[str, object] = {}
    at = raw.find(KEY_OPEN)
    while at != -1:
        i = bisect_left(closes, at + len(KEY_OPEN))
        if i == len(closes) or starts[i] > last_value_close:
            break
        end = raw.find(VALUE_CLOSE, starts[i])
        params[raw[at + len(KEY_OPEN) : closes[i]].strip()] = raw[starts[i] : end]
        at = raw.find(KEY_OPEN, end + len(VALUE_CLOSE))
    return json.dumps(params, ensure_ascii=False)


def grammar(thinking: bool, name: str) -> Grammar:
    """GLM's table; the think markers exist only while thinking is on."""
    markers = {
        "TOOL_START": ("<tool_call>",),
        "TOOL_END": ("</tool_call>",),
        "KEY_OPEN": (KEY_OPEN,),
        "KEY_CLOSE": (KEY_CLOSE,),
        "VALUE_OPEN": (VALUE_OPEN,),
        "VALUE_CLOSE": (VALUE_CLOSE,),
    }
    moves = {
        (S.REASONING, "TOOL_START"): Move(S.TOOL_NAME, (R_END, CALL_START)),
        (S.CONTENT, "TOOL_START"): Move(S.TOOL_NAME, (CALL_START,)),
        (S.TOOL_NAME, "KEY_OPEN"): Move(S.TOOL_ARGS, (CALL_ARGS,)),
        (S.TOOL_NAME, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        (S.TOOL_ARGS, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        **{
            (S.TOOL_ARGS, tag): Move(S.TOOL_ARGS, (CALL_ARGS,))
            for tag in ("KEY_OPEN", "KEY_CLOSE", "VALUE_OPEN", "VALUE_CLOSE")
        },
    }
    # vLLM lists this one outside its thinking switch, but with thinking off no
    # `<think>` marker exists for it to fire on.
    moves[(S.REASONING, "THINK_START")] = Move(S.REASONING)
    if thinking:
        markers |= {"THINK_START": ("<think>",), "THINK_END": ("</think>",)}
        moves |= {
            (S.CONTENT, "THINK_START"): Move(S.REASONING, (R_START,)),
            (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
            (S.CONTENT, "THINK_END"): Move(S.CONTENT),
        }
    return Grammar(
        name=name,
        markers=markers,
        moves=moves,
        start=S.REASONING if thinking else S.CONTENT,
        convert_args=read_args,
        check_tool_names=True,
        clean_name=str.strip,
        boundaries=frozenset(("<|system|>", "<|user|>", "<|assistant|>", "<|observation|>")),
    )


GRAMMARS = {True: grammar(True, "glm45"), False: grammar(False, "glm45")}


def thinking_on(kwargs: dict | None) -> bool:
    """GLM's switch: on unless `thinking` or `enable_thinking` says otherwise."""
    kwargs = kwargs or {}
    thinking, enable = kwargs.get("thinking"), kwargs.get("enable_thinking")
    return (thinking is None and enable is None) or bool(thinking) or bool(enable)
