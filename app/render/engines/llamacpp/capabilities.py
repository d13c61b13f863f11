"""What a chat template can do, detected the way llama.cpp detects it.

llama-server reports `chat_template_caps` in `/props` and uses them to rewrite
messages before rendering (see `render`). It finds them in
`common/jinja/caps.cpp` (`caps_get`): it renders a handful of probe conversations
with its own Jinja engine in "stats" mode, which records every value the template
touches (an identifier lookup, a member access, a filter, a test, a loop over it),
and then asks which probe values were touched or which marker strings reached the
output. This module runs the same probes, in the same order and with the same
inputs, in our sandbox: the probe values are wrapped in `tracked` containers that
note every use the template makes of them (see `tracking`).

`detect_capabilities` is pure and takes only the template source and the limits, so it
can run in a sandbox worker; each probe render writes at most the output limit.
"""

from __future__ import annotations

import copy
from typing import Any

from app.render.engines.llamacpp.tracking import TrackedStr, has_op, render_tracked, track, used
from app.render.limits import DEFAULT_LIMITS, RenderLimits

#: The capability names, in the order llama-server lists them in `/props`.
CAPABILITIES = (
    "supports_object_arguments",
    "supports_parallel_tool_calls",
    "supports_preserve_reasoning",
    "supports_reasoning_effort",
    "supports_string_content",
    "supports_system_role",
    "supports_tool_calls",
    "supports_tools",
    "supports_typed_content",
)

#: What caps.cpp starts from before any probe runs (struct `jinja::caps` defaults).
_DEFAULTS = {
    "supports_object_arguments": False,
    "supports_parallel_tool_calls": True,
    "supports_preserve_reasoning": False,
    "supports_reasoning_effort": False,
    "supports_string_content": True,
    "supports_system_role": True,
    "supports_tool_calls": True,
    "supports_tools": True,
    "supports_typed_content": False,
}

#: caps.cpp's markers: the string content, and reasoning deep in the history.
STRING_MARKER = "STRING_MARKER"
REASONING_MARKER = "<REASONING_CONTENT_PLACEHOLDER>"

#: The tool every tool probe declares (caps.cpp passes the same JSON each time).
_PROBE_TOOL = {
    "name": "tool",
    "type": "function",
    "function": {
        "name": "tool1",
        "description": "Tool description",
        "parameters": {
            "type": "object",
            "properties": {"arg": {"type": "string", "description": "Arg description"}},
            "required": ["arg"],
        },
    },
}


def _tool_call(call_id: str, arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "tool1", "arguments": arguments},
    }


def _tool_conversation(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """caps.cpp's tool probe: a call (content "" as some templates expect), its answer."""
    return [
        {"role": "user", "content": "User message"},
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "content": "Tool response", "tool_call_id": "call00001"},
        {"role": "assistant", "content": "The tool response was 'tool response'"},
        {"role": "user", "content": "User message"},
    ]


class _Probe:
    """One run of caps.cpp's `caps_try_execute`: the tracked inputs and what came out."""

    def __init__(
        self,
        template: str,
        max_chars: int,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        # Like caps_try_execute: when the render fails and some assistant turn has no
        # reasoning_content, retry once with an empty one (some templates require it).
        for attempt in range(2):
            self.messages = track(copy.deepcopy(messages))
            self.tools = track(copy.deepcopy(tools if tools is not None else []))
            variables: dict[str, Any] = {
                "messages": self.messages,
                "tools": self.tools,
                "bos_token": TrackedStr(""),
                "eos_token": TrackedStr(""),
                "add_generation_prompt": True,
            }
            variables.update(extra or {})
            self.variables = variables
            self.output = render_tracked(template, variables, max_chars)
            self.success = self.output is not None
            if self.success or attempt:
                break
            lacking = [
                m for m in messages if m["role"] == "assistant" and "reasoning_content" not in m
            ]
            if not lacking:
                break
            messages = [
                {**m, "reasoning_content": ""}
                if m["role"] == "assistant" and "reasoning_content" not in m
                else m
                for m in messages
            ]

    def contains(self, text: str) -> bool:
        return self.success and text in (self.output or "")


def detect_capabilities(template: str, limits: RenderLimits = DEFAULT_LIMITS) -> dict[str, bool]:
    """The `chat_template_caps` llama-server would report for `template`."""
    caps = dict(_DEFAULTS)
    max_chars = limits.output_chars
    _probe_content(template, max_chars, caps)
    _probe_system_role(template, max_chars, caps)
    _probe_tools(template, max_chars, caps)
    _probe_parallel_calls(template, max_chars, caps)
    _probe_reasoning(template, max_chars, caps)
    return {name: caps[name] for name in CAPABILITIES}


def _probe_content(template: str, max_chars: int, caps: dict[str, bool]) -> None:
    """String content must render (and show up); content read as a list means typed."""
    probe = _Probe(template, max_chars, [{"role": "user", "content": STRING_MARKER}])
    content = probe.messages[0]["content"]
    as_array = has_op(content, "selectattr") or has_op(content, "array_access")
    if as_array:
        caps["supports_typed_content"] = True
    if not probe.success or (as_array and not probe.contains(STRING_MARKER)):
        caps["supports_string_content"] = False
    if has_op(content, "test_is_string"):
        _probe_empty_parts(template, max_chars, caps)


def _probe_empty_parts(template: str, max_chars: int, caps: dict[str, bool]) -> None:
    """A template that tests whether the content is a string may take a list in its other
    branch: content given as an empty list, and read as a list, means typed content too
    (caps.cpp since b11434; until then, only the string probe counted)."""
    probe = _Probe(template, max_chars, [{"role": "user", "content": []}])
    content = probe.messages[0]["content"]
    if probe.success and (has_op(content, "selectattr") or has_op(content, "array_access")):
        caps["supports_typed_content"] = True


def _probe_system_role(template: str, max_chars: int, caps: dict[str, bool]) -> None:
    """A template that never reads the system message's content has no system role."""
    probe = _Probe(
        template,
        max_chars,
        [
            {"role": "system", "content": "System message"},
            {"role": "user", "content": "User message"},
        ],
    )
    if not used(probe.messages[0]["content"]):
        caps["supports_system_role"] = False


def _probe_tools(template: str, max_chars: int, caps: dict[str, bool]) -> None:
    """Tools, tool calls and object arguments, as caps.cpp's two single-call probes."""
    probe = _Probe(
        template,
        max_chars,
        _tool_conversation([_tool_call("call00001", {"arg": "value"})]),
        [_PROBE_TOOL],
    )
    if probe.success:
        if not used(probe.tools[0]["function"]["name"]):
            caps["supports_tools"] = False
        calls = probe.messages[1]["tool_calls"]
        if not used(calls):
            caps["supports_tool_calls"] = False
        elif used(calls[0]["function"]["arguments"]["arg"]):
            caps["supports_object_arguments"] = True
    if caps["supports_object_arguments"]:
        return
    probe = _Probe(
        template,
        max_chars,
        _tool_conversation([_tool_call("call00001", '{"arg": "value"}')]),
        [_PROBE_TOOL],
    )
    if not probe.success:
        caps["supports_tool_calls"] = caps["supports_tools"] = False
        return
    if not used(probe.tools[0]["function"]["name"]):
        caps["supports_tools"] = False
    if not used(probe.messages[1]["tool_calls"]):
        caps["supports_tool_calls"] = False


def _probe_parallel_calls(template: str, max_chars: int, caps: dict[str, bool]) -> None:
    """Two calls in one turn: the template must read the second one."""
    arguments: Any = {"arg": "value"} if caps["supports_object_arguments"] else '{"arg": "value"}'
    calls = [_tool_call("call00001", arguments), _tool_call("call00002", arguments)]
    probe = _Probe(template, max_chars, _tool_conversation(calls), [_PROBE_TOOL])
    if not probe.success or not used(probe.messages[1]["tool_calls"][1]["function"]):
        caps["supports_parallel_tool_calls"] = False


def _probe_reasoning(template: str, max_chars: int, caps: dict[str, bool]) -> None:
    """Reasoning kept deep in the history reaches the output; an effort level is read."""
    user = {"role": "user", "content": "User message"}
    answer = {"role": "assistant", "content": "Assistant message"}
    history = [
        user,
        {**answer, "reasoning_content": REASONING_MARKER},
        user,
        {**answer, "reasoning_content": "Reasoning content"},
        user,
    ]
    # caps.cpp's caps_apply_preserve_reasoning(ctx, true): every known switch set to keep it.
    keep = {
        "enable_thinking": True,
        "preserve_thinking": True,
        "clear_thinking": False,
        "truncate_history_thinking": False,
        "drop_thinking": False,
    }
    # Only the output counts here: a template may test reasoning without printing it.
    caps["supports_preserve_reasoning"] = _Probe(template, max_chars, history, extra=keep).contains(
        REASONING_MARKER
    )
    # caps_apply_reasoning_effort binds both names to one value, so reading either counts.
    effort = TrackedStr("low")
    _Probe(
        template,
        max_chars,
        [{"role": "user", "content": "User message"}],
        extra={"enable_thinking": True, "reasoning_effort": effort, "reasoning_strength": effort},
    )
    caps["supports_reasoning_effort"] = used(effort)
