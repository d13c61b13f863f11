"""llama.cpp's template-specific handlers: which one a template gets and what it changes.

`common_chat_try_specialized_template` (common/chat.cpp) recognises some template
families by strings in their source and hands them to a handler in
`common/parsers/*.cpp`; every other template goes to the differential autoparser.
For the prompt, a handler matters in three ways, reproduced here: it may adjust the
messages before rendering, it may patch the rendered prompt, and when the final
assistant message is continued (prefill) it writes the continuation itself.

Not reproduced: the handlers of families absent from the recordings this module is
tested against (LLM-jp Harmony, K2 Horizon, Ling 3, TranslateGemma); such templates
are treated like any other here.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.render.engines.llamacpp.messages import ChatMessage

#: (reasoning, continue into the content?, the message, the template's generation prompt)
#: -> the text appended to the prompt.
Continuation = Callable[[str, bool, ChatMessage, str], str]


@dataclass(frozen=True)
class Handler:
    """What one `common_chat_params_init_*` does to the prompt."""

    name: str
    #: The prompt text that opens the continued turn, then reasoning, then content.
    continuation: Continuation | None = None
    #: Rewrites of the messages, each reported with its sentence.
    adjust: Callable[[list[dict[str, Any]], list[str]], list[dict[str, Any]]] | None = None
    #: `supports_thinking`: llama-server's default for enable_thinking follows it.
    thinking: bool = True


def _tags(opener: str, think_start: str, think_end: str) -> Continuation:
    """The usual shape: opener + think_start + reasoning [+ think_end + content]."""

    def build(reasoning: str, content: bool, message: ChatMessage, _gen: str) -> str:
        text = opener + think_start + reasoning
        if content:
            text += think_end + message.render_content()
        return text

    return build


def _copy_thinking(
    drop_content_beside_calls: bool,
) -> Callable[[list[dict[str, Any]], list[str]], list[dict[str, Any]]]:
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


def _ministral_blocks(messages: list[dict[str, Any]], rewrites: list[str]) -> list[dict[str, Any]]:
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


def _deepseek_v4_order(messages: list[dict[str, Any]], rewrites: list[str]) -> list[dict[str, Any]]:
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


def _deepseek_continuation(is_v4: bool) -> Continuation:
    def build(reasoning: str, content: bool, message: ChatMessage, _gen: str) -> str:
        if is_v4 and not reasoning:
            return "<｜Assistant｜></think>" + (message.render_content() if content else "")
        return _tags("<｜Assistant｜>", "<think>", "</think>")(reasoning, content, message, _gen)

    return build


def _gen_prompt_then(think_start: str, think_end: str) -> Continuation:
    """minimax-m3.cpp: the template's own generation prompt opens the turn."""

    def build(reasoning: str, content: bool, message: ChatMessage, gen: str) -> str:
        return _tags(gen, think_start, think_end)(reasoning, content, message, gen)

    return build


def _content_only(opener: str, always: bool = True) -> Continuation:
    """Templates without reasoning: the opener, then the content (always, for some)."""

    def build(reasoning: str, content: bool, message: ChatMessage, _gen: str) -> str:
        return opener + (message.render_content() if always or content else "")

    return build


def select_handler(source: str) -> Handler | None:
    """The handler common_chat_try_specialized_template picks, or None (the autoparser)."""

    def has(*needles: str) -> bool:
        return all(needle in source for needle in needles)

    if has("[SYSTEM_PROMPT]", "[TOOL_CALLS]", "[ARGS]") and "[CALL_ID]" not in source:
        return Handler("Ministral 3", _tags("", "[THINK]", "[/THINK]"), _ministral_blocks)
    if has("<|channel|>"):
        return Handler(
            "GPT-OSS",
            _tags(
                "<|start|>assistant",
                "<|channel|>analysis<|message|>",
                "<|end|><|start|>assistant<|channel|>final<|message|>",
            ),
            _copy_thinking(drop_content_beside_calls=True),
        )
    if has("<atem:function_calls>", "<|eom|>"):
        return Handler(
            "Muse Glimmer",
            _tags(
                "<|start|>assistant",
                " to=self<|message|>",
                "<|eom|><|start|>assistant to=user<|message|>",
            ),
        )
    if has(">>>all", ">>>${recipient}"):
        return Handler(
            "Functionary v3.2",
            _content_only("<|start_header_id|>assistant<|end_header_id|>\n\n>>>all\n"),
            thinking=False,
        )
    if has("<|tool_calls_section_begin|>", "<|tool_call_begin|>"):
        return Handler(
            "Kimi K2", _tags("<|im_assistant|>assistant<|im_middle|>", "<think>", "</think>")
        )
    if has("<|open|>", "<|close|>", "<|end_of_msg|>"):
        return Handler(
            "Kimi K3",
            _tags(
                '<|open|>message role="assistant"<|sep|>',
                "<|open|>think<|sep|>",
                "<|close|>think<|sep|><|open|>response<|sep|>",
            ),
        )
    if has("<|START_TEXT|>", "<|START_ACTION|>"):
        return Handler(
            "Cohere2 MoE",
            _tags(
                "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
                "<|START_THINKING|>",
                "<|END_THINKING|><|START_TEXT|>",
            ),
        )
    if has("<|tool_list_start|>", "<|tool_list_end|>") or (
        has("List of tools: [") and "<|tool_list_start|>" not in source
    ):
        return Handler(
            "LFM2",
            _tags("<|im_start|>assistant\n", "<think>", "</think>"),
            _copy_thinking(drop_content_beside_calls=False),
        )
    if has("<|role_sep|>", "<|message_sep|>") and "<|function_call|>" not in source:
        return Handler("GigaChat v3", _content_only("assistant<|role_sep|>\n"), thinking=False)
    if has("]<]minimax[>[", "<tool_call>", "<invoke name="):
        return Handler("MiniMax-M3", _gen_prompt_then("<mm:think>", "</mm:think>"))
    if has("dsml_token", "DSML") and ("function_calls" in source or "tool_calls" in source):
        is_v4 = "function_calls" not in source
        return Handler(
            "DeepSeek V3.2/V4", _deepseek_continuation(is_v4), _deepseek_v4_order if is_v4 else None
        )
    if has("'<|tool_call>call:'"):
        return Handler("Gemma 4", None)  # continuation and prompt patch in llamacpp.py
    if has("Tool usage guidelines:", '<function name="', '<param name="'):
        return Handler("MiniCPM5", _tags("<|im_start|>assistant\n", "<think>\n", "\n</think>\n\n"))
    if (
        has("<tool_call>", "<function=", "<parameter=")
        and "'<tool_call><function=' ~ tool_call.name ~ '>'" not in source
    ):
        if "<think>" in source:
            return Handler(
                "Qwen3-Coder", _tags("<|im_start|>assistant\n", "<think>\n", "\n</think>\n\n")
            )
        return Handler(
            "Qwen3-Coder", _content_only("<|im_start|>assistant\n", always=False), thinking=False
        )
    return None


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
