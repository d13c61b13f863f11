"""What llama.cpp's template-specific handlers do to the prompt, as hooks.

A family's `PromptHooks` (see `families`) are made of these: `Adjust` rewrites
the messages before rendering, `Patch` fixes the rendered prompt, and `Continuation`
writes the continuation of a final assistant message (prefill) where the family's
params, which write it as their generation prompt, are not reproduced. Every rewrite
is reported with its sentence, as the rest of the engine does.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.render.engines.llamacpp.messages import ChatMessage


@dataclass(frozen=True)
class Continued:
    """A final assistant message being continued, and the prompt it continues."""

    message: ChatMessage
    #: Whether the content is continued too (else the reasoning is left open).
    content: bool


#: Continued -> the text appended to the prompt.
Continuation = Callable[[Continued], str]
#: (messages, rewrites) -> the messages the template sees.
Adjust = Callable[[list[dict[str, Any]], list[str]], list[dict[str, Any]]]
#: (prompt, add_generation_prompt, rewrites) -> the prompt.
Patch = Callable[[str, bool, list[str]], str]


@dataclass(frozen=True)
class PromptHooks:
    """What one `common_chat_params_init_*` does to the prompt."""

    #: The prefill of a continued final message, for a family whose params (which write
    #: it otherwise, as the generation prompt) are not reproduced.
    continuation: Continuation | None = None
    #: Rewrites of the messages, each reported with its sentence.
    adjust: Adjust | None = None
    #: `supports_thinking`: llama-server's default for enable_thinking follows it.
    thinking: bool = True
    #: A fix of the rendered prompt, reported with its sentence.
    patch: Patch | None = None


def tags(opener: str, think_start: str, think_end: str) -> Continuation:
    """The usual shape: opener + think_start + reasoning [+ think_end + content]."""

    def build(continued: Continued) -> str:
        text = opener + think_start + continued.message.reasoning_content
        if continued.content:
            text += think_end + continued.message.render_content()
        return text

    return build


def copy_thinking(drop_content_beside_calls: bool) -> Adjust:
    """gpt-oss and LFM2 read reasoning from `thinking`; gpt-oss drops content beside calls."""

    def adjust(messages: list[dict[str, Any]], rewrites: list[str]) -> list[dict[str, Any]]:
        for message in messages:
            if isinstance(message.get("reasoning_content"), str):
                message["thinking"] = message["reasoning_content"]
                rewrites.append("reasoning copied to 'thinking' (the template reads that name)")
                if drop_content_beside_calls and message.get("tool_calls"):
                    message.pop("content", None)
                    rewrites.append("content dropped beside reasoning and tool calls (gpt-oss)")
        return messages

    return adjust


def ministral_blocks(messages: list[dict[str, Any]], rewrites: list[str]) -> list[dict[str, Any]]:
    """ministral3.cpp: system/assistant content as blocks, reasoning as a `thinking` block."""
    adjusted = []
    for message in messages:
        if message.get("role") not in ("system", "assistant"):
            adjusted.append(message)
            continue
        blocks: list[Any] = []
        if isinstance(message.get("reasoning_content"), str):
            blocks.append({"type": "thinking", "thinking": message["reasoning_content"]})
        content = message.get("content")
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            blocks.extend(content)
        message = {**message, "content": blocks}
        message.pop("reasoning_content", None)
        adjusted.append(message)
        rewrites.append("system and assistant content turned into blocks (Ministral 3 format)")
    return adjusted


def deepseek_v4_order(messages: list[dict[str, Any]], rewrites: list[str]) -> list[dict[str, Any]]:
    """deepseek.cpp: a run of tool results follows the order of the calls they answer."""
    adjusted = copy.copy(messages)
    order: dict[str, int] = {}
    i = 0
    while i < len(adjusted):
        role = adjusted[i].get("role")
        if role == "assistant" and adjusted[i].get("tool_calls"):
            order = {
                c.get("id", ""): n for n, c in enumerate(adjusted[i]["tool_calls"]) if c.get("id")
            }
            i += 1
            continue
        if role not in ("user", "tool"):
            i += 1
            continue
        end = i
        while end < len(adjusted) and adjusted[end].get("role") in ("user", "tool"):
            end += 1
        positions = [k for k in range(i, end) if adjusted[k].get("role") == "tool"]
        if len(positions) > 1 and order:
            results = sorted(
                (adjusted[k] for k in positions),
                key=lambda m: order.get(m.get("tool_call_id", ""), 0),
            )
            if [adjusted[k] for k in positions] != results:
                rewrites.append("tool results reordered to follow their calls (DeepSeek V4)")
            for k, result in zip(positions, results, strict=True):
                adjusted[k] = result
        i = end
    return adjusted


def gemma4_prepare(
    source: str, messages: list[dict[str, Any]], rewrites: list[str]
) -> list[dict[str, Any]]:
    """gemma4.cpp: older Gemma 4 templates want tool results inside the assistant turn."""
    if "{#- OpenAI Chat Completions:" in source:
        return messages
    result: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            result.append(message)
            i += 1
            continue
        calls = list(message["tool_calls"])
        responses: list[dict[str, Any]] = []
        i += 1
        while i < len(messages) and messages[i].get("role") == "tool":
            responses.append(_gemma4_response(messages[i], calls, len(responses)))
            i += 1
        turn: dict[str, Any] = {"role": "assistant", "tool_calls": calls}
        if responses:
            turn["tool_responses"] = responses
        if i < len(messages) and messages[i].get("role") == "assistant":
            following = messages[i]
            if not following.get("tool_calls") and following.get("content"):
                turn["content"] = following["content"]
                i += 1
        if isinstance(message.get("reasoning_content"), str):
            turn["reasoning_content"] = message["reasoning_content"]
        result.append(turn)
        rewrites.append("tool results moved into the assistant turn (older Gemma 4 template)")
    return result


def _gemma4_response(
    tool: dict[str, Any], calls: list[dict[str, Any]], index: int
) -> dict[str, Any]:
    response: Any = None
    if "content" in tool:
        response = tool["content"]
        if isinstance(response, str):
            # A JSON answer is passed as its value, anything else as the text.
            with contextlib.suppress(ValueError):
                response = json.loads(response)
    name = ""
    if index < len(calls):
        name = calls[index].get("function", {}).get("name", "")
    return {"name": name or tool.get("tool_call_id", ""), "response": response}


def gemma4_patch(prompt: str, add_generation_prompt: bool, rewrites: list[str]) -> str:
    """gemma4.cpp: a generation prompt the template closed is opened again."""
    if add_generation_prompt and prompt.endswith("<turn|>\n"):
        rewrites.append(
            "model turn opened after the template's output (as llama.cpp does for Gemma 4)"
        )
        return prompt + "<|turn>model\n"
    return prompt


def gpt_oss_patch(prompt: str, add_generation_prompt: bool, rewrites: list[str]) -> str:
    """gpt-oss.cpp (is_inference): the last <|return|> becomes <|end|>."""
    if add_generation_prompt or "<|return|>" not in prompt:
        return prompt
    at = prompt.rfind("<|return|>")
    rewrites.append("final <|return|> replaced by <|end|> (as llama.cpp does for gpt-oss)")
    return prompt[:at] + "<|end|>" + prompt[at + len("<|return|>") :]
