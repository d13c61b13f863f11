"""Ollama's `lfm2` and `lfm2-thinking` renderers (model/renderers/lfm2.go at
ollama/ollama fb30760).

`<|startoftext|>`, ChatML turns (`<|im_start|>ROLE\\n ... <|im_end|>\\n`, any role kept
as written); the first system message takes `List of tools: <|tool_list_start|>[...]
<|tool_list_end|>` (each tool's function as JSON in HF `tojson`'s spacing, `<`, `>`,
`&` not escaped); an assistant's calls are written `<|tool_call_start|>[name(k=v, ...)]
<|tool_call_end|>` (keys sorted, values as JSON) before its content; a tool result is
wrapped in `<|tool_response_start|>...<|tool_response_end|>`. The thinking variant
writes an assistant's thinking as `<think>...</think>` first; thinking of earlier
assistant turns is cut unless `think` is on (thinking variant only). A trailing
assistant message is left open; otherwise the answer's `<|im_start|>assistant\\n`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers.message import is_space, trim_left, trim_right

BOS = "<|startoftext|>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<|tool_response_start|>", "<|tool_response_end|>"


def lfm2_json(value: Any, marshalled: str | None = None) -> str:
    """lfm2JSON: Go JSON without HTML escaping, spaced as HF's `tojson` (`, ` and `: `)."""
    return gojson.spaced(gojson.unescape_html(marshalled or gojson.marshal(value)))


def _tool(tool: dict[str, Any]) -> str:
    """lfm2ToolSchema as JSON: the function's schema, or the whole tool without a name."""
    function = tool.get("function") or {}
    if not function.get("name"):
        return lfm2_json(None, gojson.tool(tool))
    return lfm2_json(None, gojson.function(function))


def _calls(calls: list[dict[str, Any]]) -> str:
    """lfm2RenderToolCalls: `[name(k=v,k2=v2),other()]` in the call tags."""
    out = []
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments") or {}
        pairs = ",".join(f"{key}={lfm2_json(arguments[key])}" for key in sorted(arguments))
        out.append(f"{function.get('name', '')}({pairs})")
    return CALL_OPEN + "[" + ",".join(out) + "]" + CALL_CLOSE


def image_tags(content: str, count: int, offset: int) -> str:
    """renderContentWithImageTags: `[img-N]` for each image (an `[img]` in the text is
    replaced in place, the rest go before it, a space after them before a word)."""
    if count == 0 or "[img-" in content:
        return content
    prefix = ""
    for i in range(count):
        tag = f"[img-{offset + i}]"
        if "[img]" in content:
            content = content.replace("[img]", tag, 1)
        else:
            prefix += tag
    # Go's check: the first rune decodes (U+FFFD counts as not) and is not a space.
    if prefix and content and content[0] != "\ufffd" and not is_space(content[0]):
        prefix += " "
    return prefix + content


def _content(message: dict[str, Any], offset: int, img_tags: bool) -> str:
    """renderMessageContent: the text with its images' placeholders."""
    content, images = message.get("content") or "", len(message.get("images") or [])
    if images == 0:
        return content
    if img_tags:
        return image_tags(content, images, offset)
    return content if "<image>" in content else "<image>" * images + content


def _has_system(messages: list[dict[str, Any]]) -> bool:
    """Whether the first message is a system message (it joins the tool list)."""
    return bool(messages) and messages[0].get("role") == "system"


def _system(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The first system block: the first system message's text and the tool list."""
    system = (messages[0].get("content") or "") if _has_system(messages) else ""
    if tools:
        system += ("\n" if system else "") + "List of tools: <|tool_list_start|>["
        system += ", ".join(_tool(tool) for tool in tools) + "]<|tool_list_end|>"
    return f"<|im_start|>system\n{system}<|im_end|>\n" if system else ""


def _turn(message: dict[str, Any], content: str, thinking: bool, keep_thinking: bool) -> str:
    """One message's body: its calls, its thinking, past thinking cut, a tool's wrapper."""
    role = message.get("role")
    if role == "assistant" and message.get("tool_calls") and CALL_OPEN not in content:
        joiner = "\n" if trim_left(content) else ""
        content = _calls(message["tool_calls"]) + joiner + content
    if thinking and role == "assistant" and message.get("thinking") and THINK_CLOSE not in content:
        content = THINK_OPEN + message["thinking"] + THINK_CLOSE + content
    if role == "assistant" and not keep_thinking and THINK_CLOSE in content:
        content = trim_left(trim_right(content[content.rindex(THINK_CLOSE) + len(THINK_CLOSE) :]))
    if role == "tool" and RESPONSE_OPEN not in content:
        content = RESPONSE_OPEN + content + RESPONSE_CLOSE
    return content


def make(thinking: bool, img_tags: bool = False) -> Callable[..., str]:
    """The renderer: `thinking` is lfm2-thinking's, `img_tags` Ollama's RenderImgTags."""

    def render(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, think: Any = None
    ) -> str:
        """The prompt Ollama's lfm2 renderer makes."""
        messages = messages or []
        out = [BOS, _system(messages, tools)]
        start = 1 if _has_system(messages) else 0
        keep = thinking and gojson.think_bool(think)
        last_assistant = max(
            (i for i in range(start, len(messages)) if messages[i].get("role") == "assistant"),
            default=-1,
        )
        offset = sum(len(m.get("images") or []) for m in messages[:start])
        for i in range(start, len(messages)):
            message = messages[i]
            content = _content(message, offset, img_tags)
            offset += len(message.get("images") or [])
            keep_here = keep or i == last_assistant
            out.append(f"<|im_start|>{message.get('role', '')}\n")
            out.append(_turn(message, content, thinking, keep_here))
            if not (i == len(messages) - 1 and message.get("role") == "assistant"):
                out.append("<|im_end|>\n")
        if not messages or messages[-1].get("role") != "assistant":
            out.append("<|im_start|>assistant\n")
        return "".join(out)

    return render
