"""DeepSeek's DSML tool calls as vLLM 0.33.0 reads them (`vllm/parser/deepseek_v4.py`,
`deepseek_v32.py`): one table for V3.2 and V4, which differ in the wrapper::

    <｜DSML｜function_calls>                      (V4: <｜DSML｜tool_calls>)
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

A `string="true"` value is taken as written, any other (or none) is read as JSON when it
parses; the arguments are then retyped from the tool schema, and a lone `arguments` or
`input` parameter that wraps the real ones is unwrapped. Text after the calls is dropped.
"""

from __future__ import annotations

import json
import re

from app.render.engines.vllm.answers._schema_types import tool_properties
from app.render.engines.vllm.answers._state_machine import CALL_END, CALL_START, Grammar, Move
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import REASONING_START as R_START
from app.render.engines.vllm.answers._state_machine import State as S
from app.render.engines.vllm.answers.base import FailsInVllm

D = "｜DSML｜"
V32_START, V32_END = f"<{D}function_calls>", f"</{D}function_calls>"
V4_START, V4_END = f"<{D}tool_calls>", f"</{D}tool_calls>"
#: Other spellings of V4's wrapper that vLLM accepts (seen from the model, it says).
V4_START_VARIANTS = (f"<{D}toolcalls>", f"<{D}tool>")
INVOKE, INVOKE_NAME_END, INVOKE_END = f'<{D}invoke name="', '">', f"</{D}invoke>"
PARAM, PARAM_END = f"<{D}parameter", f"</{D}parameter>"

#: A parameter's head after `<｜DSML｜parameter`: the name up to its quote, and then an
#: optional `string="..."` before the `>`.
_NAME = re.compile(r'\s+name="([^"]+)"')
_STRING_ATTR = re.compile(r'\s+string="([^"]*)"')
_HEAD_END = re.compile(r"\s*>")
_NEXT_NAME = re.compile(r"\s+name=")


def _head(raw: str, at: int) -> tuple[str, str | None, int] | None:
    """(name, string attribute, where the value starts) of the parameter whose
    `<｜DSML｜parameter` is at `at`; None when its head is not well formed."""
    name = _NAME.match(raw, at + len(PARAM))
    if name is None:
        return None
    attr = _STRING_ATTR.match(raw, name.end())
    if attr is not None and (end := _HEAD_END.match(raw, attr.end())) is not None:
        return name.group(1), attr.group(1), end.end()
    end = _HEAD_END.match(raw, name.end())
    return None if end is None else (name.group(1), None, end.end())


class _Starts:
    """The next `<｜DSML｜parameter name=` at or after a position that only grows, so
    that a whole scan stays linear."""

    def __init__(self, raw: str) -> None:
        self.raw, self.found = raw, -2

    def at_or_after(self, position: int) -> int:
        if self.found == -1 or self.found >= position:
            return self.found
        at = self.raw.find(PARAM, position)
        while at != -1 and not _NEXT_NAME.match(self.raw, at + len(PARAM)):
            at = self.raw.find(PARAM, at + 1)
        self.found = at
        return at


def _parameters(raw: str) -> list[tuple[str, str | None, str]]:
    """(name, string attribute, value) of each parameter, as vLLM's expression finds
    them: a value runs to its close tag or to the next parameter's head."""
    found = []
    starts, closes = _Starts(raw), _Later(raw, PARAM_END)
    at = raw.find(PARAM)
    while at != -1:
        head = _head(raw, at)
        if head is None:
            at = raw.find(PARAM, at + 1)
            continue
        name, string, value_at = head
        close, following = closes.at_or_after(value_at), starts.at_or_after(value_at)
        if close == -1 and following == -1:
            break  # no later parameter can end either
        if close != -1 and (following == -1 or close < following):
            found.append((name, string, raw[value_at:close]))
            at = raw.find(PARAM, close + len(PARAM_END))
        else:
            found.append((name, string, raw[value_at:following]))
            at = following
    return found


class _Later:
    """The first place of a needle at or after a growing position."""

    def __init__(self, raw: str, needle: str) -> None:
        self.raw, self.needle, self.found = raw, needle, -2

    def at_or_after(self, position: int) -> int:
        if self.found == -1 or self.found >= position:
            return self.found
        self.found = self.raw.find(self.needle, position)
        return self.found


def convert_args(raw: str) -> str:
    """The parameters as one JSON object (vLLM's `_dsml_arg_converter`): a later value
    of a name replaces an earlier one in its place."""
    params: dict[str, object] = {}
    deep = False
    for name, string, value in _parameters(raw):
        if string == "true":
            params[name] = value
            continue
        try:
            params[name] = json.loads(value)
        except ValueError:
            params[name] = value
        except RecursionError:
            params[name], deep = value, True
    arguments = json.dumps(params, ensure_ascii=False)
    if deep:
        raise FailsInVllm(
            "A parameter's JSON nests too deeply for Python's json module: vLLM's "
            "json.loads raises RecursionError and the request fails.",
            arguments,
        )
    return arguments


def unwrap(arguments: str, tools: list[dict] | None, name: str | None) -> str:
    """vLLM's `_unwrap_wrapper_args`: a lone `arguments` or `input` parameter that the
    tool does not declare, holding an object of declared keys, is replaced by that
    object. `name` is that of the first call with the same raw arguments."""
    if not tools or not name:
        return arguments
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    properties = tool_properties(tools, name)
    if not isinstance(parsed, dict) or not properties:
        return arguments
    for wrapper in ("arguments", "input"):
        if set(parsed) != {wrapper} or wrapper in properties:
            continue
        inner = parsed[wrapper]
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except (ValueError, RecursionError):
                return arguments
        if isinstance(inner, dict) and set(inner) <= set(properties):
            return json.dumps(inner, ensure_ascii=False)
    return arguments


def grammar(name: str, starts: tuple[str, ...], end: str, *, thinking: bool | None) -> Grammar:
    """The DSML table with these wrappers; `thinking` None for V3.2 (no think markers),
    else whether V4 starts in reasoning."""
    markers = {
        "TOOL_START": starts,
        "TOOL_END": (end,),
        "INVOKE_PREFIX": (INVOKE,),
        "INVOKE_NAME_END": (INVOKE_NAME_END,),
        "INVOKE_END": (INVOKE_END,),
        "PARAM_START": (PARAM,),
        "PARAM_CLOSE": (PARAM_END,),
    }
    moves = {
        (S.CONTENT, "TOOL_START"): Move(S.TOOL_PREAMBLE),
        (S.TOOL_PREAMBLE, "INVOKE_PREFIX"): Move(S.TOOL_NAME, (CALL_START,)),
        (S.CONTENT, "INVOKE_PREFIX"): Move(S.TOOL_NAME, (CALL_START,)),
        (S.TOOL_NAME, "INVOKE_NAME_END"): Move(S.TOOL_ARGS),
        (S.TOOL_ARGS, "INVOKE_END"): Move(S.TOOL_BETWEEN, (CALL_END,)),
        (S.TOOL_ARGS, "TOOL_END"): Move(S.TOOL_BETWEEN, (CALL_END,)),
        (S.TOOL_BETWEEN, "INVOKE_PREFIX"): Move(S.TOOL_NAME, (CALL_START,)),
        # A call ends the turn: what follows the block is dropped.
        (S.TOOL_BETWEEN, "TOOL_END"): Move(S.TOOL_BETWEEN),
        (S.TOOL_BETWEEN, "TOOL_START"): Move(S.TOOL_PREAMBLE),
    }
    if thinking is not None:
        markers |= {"THINK_START": ("<think>",), "THINK_END": ("</think>",)}
        moves |= {
            (S.CONTENT, "THINK_START"): Move(S.REASONING, (R_START,)),
            (S.CONTENT, "THINK_END"): Move(S.CONTENT),
            (S.REASONING, "THINK_START"): Move(S.REASONING),
            (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
            (S.REASONING, "TOOL_START"): Move(S.TOOL_PREAMBLE, (R_END,)),
        }
    return Grammar(
        name=name,
        markers=markers,
        moves=moves,
        start=S.REASONING if thinking else S.CONTENT,
        convert_args=convert_args,
        strip_content_with_tools=False,
        after_convert=unwrap,
    )


V32 = grammar("deepseek_v32", (V32_START,), V32_END, thinking=None)
V4 = {
    on: grammar("deepseek_v4", (V4_START, *V4_START_VARIANTS), V4_END, thinking=on)
    for on in (True, False)
}


def v4_thinking(kwargs: dict | None) -> bool:
    """DeepSeek V4's switch: on unless `thinking`/`enable_thinking` say otherwise, and
    off with `reasoning_effort: none`."""
    kwargs = kwargs or {}
    if "thinking" in kwargs or "enable_thinking" in kwargs:
        on = bool(kwargs.get("thinking") or kwargs.get("enable_thinking"))
    else:
        on = True
    return on and kwargs.get("reasoning_effort") != "none"
