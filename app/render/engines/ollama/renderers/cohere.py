"""Ollama's `cohere` renderer (model/renderers/cohere.go at ollama/ollama fb30760), for
Cohere North / Command A 2026 models.

A platform system turn: the first system message (then four newlines) and a
`# Available Tools` JSON list (written even with no tools), each tool as
`{"name", "description", "parameters", "responses": null}` with `, ` and `: `. Each
message in `<|START_OF_TURN_TOKEN|>` turns (roles compared without case): texts in
`<|START_TEXT|>`; an assistant's thinking in `<|START_THINKING|>`; its calls as an
`<|START_ACTION|>` JSON list whose ids are renumbered 0, 1, ... over the conversation
(a tool result names the number of the call whose id it gives); consecutive tool
results in one `<|START_TOOL_RESULT|>` list. A trailing assistant text is left open;
otherwise the answer opens `<|START_THINKING|>` (closed at once when `think` is false).
Ollama adds `<BOS_TOKEN>` (the renderer's LeadingBOS) when it tokenizes, not here.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson

TURN, END_TURN = "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>"
SYSTEM, USER, CHATBOT = "<|SYSTEM_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>"
TEXT, END_TEXT = "<|START_TEXT|>", "<|END_TEXT|>"
THINK, END_THINK = "<|START_THINKING|>", "<|END_THINKING|>"


def _tools(tools: list[dict[str, Any]] | None) -> str:
    """The `# Available Tools` block with the template's whitespace."""
    out = "# Available Tools\n```json\n[\n"
    if not tools:
        out += "\n\n"
    for i, tool in enumerate(tools or []):
        function = tool.get("function") or {}
        entry = (
            '{"name": ' + gojson.string(function.get("name", ""))
            + ', "description": ' + gojson.string(function.get("description", ""))
            + ', "parameters": ' + gojson.spaced(gojson.parameters(function.get("parameters")))
            + ', "responses": null}'
        )  # fmt: skip
        out += "\n    " + entry + ("," if i < len(tools) - 1 else "") + "\n\n"
    return out + "\n]\n```"


def _result(call_id: str, content: str) -> str:
    """One entry of a tool result list."""
    wrapped = gojson.spaced(gojson.marshal({"content": content}))
    return (
        '\n    {\n        "tool_call_id": "' + call_id + '",\n        "results": {\n\n'
        '            \n            "0": '
        + wrapped
        + '\n\n        },\n        "is_error": null\n    }'
    )


class _Ids:
    """Tool call ids renumbered in order; the first number given each client id."""

    def __init__(self) -> None:
        self.count, self.seen = 0, {}

    def next(self, given: str) -> str:
        """The next number, remembered for the client's id."""
        number, self.count = str(self.count), self.count + 1
        if given:
            self.seen.setdefault(given, number)
        return number

    def result(self, message: dict[str, Any]) -> str:
        """The number a tool result names (its id as given when no call had it)."""
        given = message.get("tool_call_id") or ""
        return self.seen.get(given, given)


def _action(message: dict[str, Any], ids: _Ids) -> str:
    """An assistant turn with tool calls: its thinking and the action list."""
    out = "\n            \n                "
    if message.get("thinking"):
        out += THINK + message["thinking"] + END_THINK
    calls = []
    for call in message["tool_calls"]:
        function = call.get("function") or {}
        arguments = gojson.marshal(function.get("arguments") or {}, keep_order=True)
        calls.append(
            '\n\n    {"tool_call_id": "' + ids.next(call.get("id") or "")
            + '", "tool_name": "' + function.get("name", "")
            + '", "parameters": ' + gojson.spaced(arguments) + "}"
        )  # fmt: skip
    return out + "<|START_ACTION|>[" + ",".join(calls) + "\n\n]<|END_ACTION|>" + END_TURN


def render(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, think: Any = None
) -> str:
    """The prompt Ollama's cohere renderer makes."""
    messages = messages or []
    system, rest = "", messages
    if messages and (messages[0].get("role") or "").lower() == "system":
        system, rest = messages[0].get("content") or "", messages[1:]
    out = [TURN + SYSTEM + TEXT + (system + "\n\n\n\n" if system else ""), _tools(tools)]
    out.append(END_TEXT + END_TURN)
    ids, prefill, i = _Ids(), False, 0
    while i < len(rest):
        message = rest[i]
        role, content = (message.get("role") or "").lower(), message.get("content") or ""
        if role in ("system", "user"):
            out.append(TURN + (SYSTEM if role == "system" else USER) + TEXT + content)
            out.append(END_TEXT + END_TURN)
        elif role in ("assistant", "chatbot"):
            out.append(TURN + CHATBOT)
            if message.get("tool_calls"):
                out.append(_action(message, ids))
            else:
                thinking = message.get("thinking")
                out.append((THINK + thinking + END_THINK if thinking else "") + TEXT + content)
                prefill = i == len(rest) - 1
                out.append("" if prefill else END_TEXT + END_TURN)
        elif role == "tool":
            results = [_result(ids.result(message), content)]
            while i + 1 < len(rest) and (rest[i + 1].get("role") or "").lower() == "tool":
                i += 1
                results.append(_result(ids.result(rest[i]), rest[i].get("content") or ""))
            out.append(TURN + SYSTEM + "<|START_TOOL_RESULT|>[" + ",".join(results))
            out.append("\n\n]<|END_TOOL_RESULT|>" + END_TURN)
        i += 1
    if not prefill:
        reasoning = think is None or gojson.think_bool(think)
        out.append(TURN + CHATBOT + THINK + ("" if reasoning else END_THINK))
    return "".join(out)
