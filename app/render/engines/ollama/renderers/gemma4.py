"""Ollama's `gemma4` renderers (model/renderers/gemma4.go at ollama/ollama fb30760):
`gemma4` and `gemma4-small`, and `gemma4-large`, which opens an empty thought block
when thinking is off.

`<bos>`, a system turn (when there is a system or developer message first, tools, or
thinking: `<|think|>`), `<|turn>user` / `<|turn>model` turns closed by `<turn|>`;
an assistant's thinking after the last user message in `<|channel>thought`; tool calls
as `<|tool_call>call:NAME{...}<tool_call|>` followed by the tool results
`<|tool_response>response:NAME{value:...}<tool_response|>`; consecutive assistant
messages continue one model turn. Images are not modelled (Ollama's image tags are off
unless its server turns them on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.renderers import gemma4_schema as schema


def strip_thinking(text: str) -> str:
    """Content without `<|channel>...<channel|>` blocks (an open one cuts the rest)."""
    out = []
    while True:
        start = text.find("<|channel>")
        if start == -1:
            out.append(text)
            break
        out.append(text[:start])
        end = text.find("<channel|>", start)
        if end == -1:
            break
        text = text[end + len("<channel|>") :]
    return "".join(out).strip()


def _system(first: dict[str, Any] | None, tools: list[dict[str, Any]], think: bool) -> str:
    """The system turn, when there is a system message, tools or thinking."""
    if first is None and not tools and not think:
        return ""
    out = "<|turn>system\n" + ("<|think|>\n" if think else "")
    out += (first or {}).get("content", "").strip()
    return out + "".join(schema.declaration(t) for t in tools) + "<turn|>\n"


def _response_name(message: dict[str, Any], calls: list[dict[str, Any]]) -> str:
    """A tool result's name: its tool_name, or the call its id names, else unknown."""
    name = message.get("tool_name") or "unknown"
    wanted = message.get("tool_call_id")
    for call in calls if wanted else []:
        if call.get("id") == wanted:
            return call.get("function", {}).get("name", "")
    return name


def _call(call: dict[str, Any]) -> str:
    """`<|tool_call>call:NAME{key:value,...}<tool_call|>` (keys sorted)."""
    fn = call.get("function", {})
    arguments = fn.get("arguments") or {}
    body = ",".join(k + ":" + schema.argument(arguments[k]) for k in sorted(arguments))
    return "<|tool_call>call:" + fn.get("name", "") + "{" + body + "}<tool_call|>"


def _next_role(messages: list[dict[str, Any]], i: int) -> str:
    """The role of the next message that is not a tool result ("" at the end)."""
    return next((m.get("role", "") for m in messages[i + 1 :] if m.get("role") != "tool"), "")


def _responses(messages: list[dict[str, Any]], i: int) -> list[str]:
    """The tool results right after message i, as response blocks."""
    calls = messages[i].get("tool_calls") or []
    out = []
    for message in messages[i + 1 :]:
        if message.get("role") != "tool":
            break
        value = schema.argument(message.get("content", ""))
        name = _response_name(message, calls)
        out.append(f"<|tool_response>response:{name}{{value:{value}}}<tool_response|>")
    return out


def _turn(messages: list[dict[str, Any]], i: int, state: dict[str, Any], last_user: int) -> str:
    """One message that is not a tool result; `state` carries the previous roles."""
    message = messages[i]
    role = "model" if message.get("role") == "assistant" else message.get("role", "")
    out = [] if role == "model" and state["prev_role"] == "assistant" else [f"<|turn>{role}\n"]
    if message.get("role") == "assistant" and message.get("thinking") and i > last_user:
        out.append("<|channel>thought\n" + message["thinking"] + "\n<channel|>")
    state["prev_type"] = ""
    calls = message.get("tool_calls") or []
    if calls:
        out += [_call(call) for call in calls]
        state["prev_type"] = "tool_call"
    responses = _responses(messages, i) if calls else []
    if responses:
        out += responses
        state["prev_type"] = "tool_response"
    content = message.get("content", "")
    content = strip_thinking(content) if role == "model" else content.strip()
    out.append(content)
    had_content = bool(content.strip())
    following = _next_role(messages, i)
    continues = role == "model" and following == "assistant" and (not calls or bool(responses))
    if state["prev_type"] == "tool_call" and not responses:
        out.append("<|tool_response>")
    elif not continues and not (responses and not had_content and following == ""):
        out.append("<turn|>\n")
    state["prev_role"] = message.get("role", "")
    return "".join(out)


def make(empty_block_on_nothink: bool) -> Callable[..., str]:
    """A gemma4 renderer; the large models' opens an empty thought block without think."""

    def render(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, think: Any = None
    ) -> str:
        """The prompt Ollama's gemma4 renderer makes."""
        thinking = gojson.think_bool(think)
        first = (
            messages[0] if messages and messages[0].get("role") in ("system", "developer") else None
        )
        rest = messages[1:] if first is not None else list(messages)
        out = ["<bos>", _system(first, tools or [], thinking)]
        users = [i for i, m in enumerate(rest) if m.get("role") == "user"]
        state: dict[str, Any] = {"prev_type": "", "prev_role": ""}
        for i, message in enumerate(rest):
            if message.get("role") != "tool":
                out.append(_turn(rest, i, state, users[-1] if users else -1))
        if state["prev_type"] not in ("tool_response", "tool_call"):
            out.append("<|turn>model\n")
            if empty_block_on_nothink and not thinking:
                out.append("<|channel>thought\n<channel|>")
        elif state["prev_type"] == "tool_response" and thinking:
            out.append("<|channel>thought\n")
        return "".join(out)

    return render
