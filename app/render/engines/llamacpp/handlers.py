"""llama.cpp's template-specific handlers: which one a template gets and what it changes.

`common_chat_try_specialized_template` (common/chat.cpp) recognises some template
families by strings in their source and hands them to a handler in
`common/parsers/*.cpp`; every other template goes to the differential autoparser.
For the prompt, a handler matters in three ways, reproduced here as its hooks
(`hooks.py`): it may adjust the messages before rendering, it may patch the rendered
prompt, and when the final assistant message is continued (prefill) it writes the
continuation itself. A family is one entry of `select_handler`; the engine never asks
for a handler by name.

Every handler of build b11434 is here. The answer side reproduces all but two parsers
(LLM-jp Harmony and Ling 3.0, whose templates the shared data lacks): for those, the
Response view says that llama.cpp reads the answer with a parser not reproduced.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from app.render.engines.llamacpp import hooks


@dataclass(frozen=True)
class Handler:
    """What one `common_chat_params_init_*` does to the prompt."""

    name: str
    #: The prompt text that opens the continued turn, then reasoning, then content.
    continuation: hooks.Continuation | None = None
    #: Rewrites of the messages, each reported with its sentence.
    adjust: hooks.Adjust | None = None
    #: `supports_thinking`: llama-server's default for enable_thinking follows it.
    thinking: bool = True
    #: A fix of the rendered prompt, reported with its sentence.
    patch: hooks.Patch | None = None


def select_handler(source: str) -> Handler | None:
    """The handler common_chat_try_specialized_template picks, or None (the autoparser)."""

    def has(*needles: str) -> bool:
        return all(needle in source for needle in needles)

    if has("[SYSTEM_PROMPT]", "[TOOL_CALLS]", "[ARGS]") and "[CALL_ID]" not in source:
        return Handler("Ministral 3", hooks.tags("", "[THINK]", "[/THINK]"), hooks.ministral_blocks)
    # LLM-jp 4.1 speaks GPT-OSS's Harmony, and its handler shapes the prompt the same way.
    for name, marker in (
        ("LLM-jp Harmony", "chat_format=llm-jp-harmony-v1"),
        ("GPT-OSS", "<|channel|>"),
    ):
        if has(marker):
            return Handler(
                name,
                hooks.tags(
                    "<|start|>assistant",
                    "<|channel|>analysis<|message|>",
                    "<|end|><|start|>assistant<|channel|>final<|message|>",
                ),
                hooks.copy_thinking(drop_content_beside_calls=True),
                patch=hooks.gpt_oss_patch,
            )
    if has("<atem:function_calls>", "<|eom|>"):
        return Handler(
            "Muse Glimmer",
            hooks.tags(
                "<|start|>assistant",
                " to=self<|message|>",
                "<|eom|><|start|>assistant to=user<|message|>",
            ),
        )
    if has(">>>all", ">>>${recipient}"):
        return Handler(
            "Functionary v3.2",
            hooks.content_only("<|start_header_id|>assistant<|end_header_id|>\n\n>>>all\n"),
            thinking=False,
        )
    if has("<|tool_calls_section_begin|>", "<|tool_call_begin|>"):
        return Handler(
            "Kimi K2", hooks.tags("<|im_assistant|>assistant<|im_middle|>", "<think>", "</think>")
        )
    if has("<|open|>", "<|close|>", "<|end_of_msg|>"):
        return Handler(
            "Kimi K3",
            hooks.tags(
                '<|open|>message role="assistant"<|sep|>',
                "<|open|>think<|sep|>",
                "<|close|>think<|sep|><|open|>response<|sep|>",
            ),
        )
    if has("<role>ASSISTANT</role>", "<arg_key>"):
        return Handler("Ling 3.0", hooks.tags("<role>ASSISTANT</role>\n", "<think>", "</think>"))
    if has("<|START_TEXT|>", "<|START_ACTION|>"):
        return Handler(
            "Cohere2 MoE",
            hooks.tags(
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
            hooks.tags("<|im_start|>assistant\n", "<think>", "</think>"),
            hooks.copy_thinking(drop_content_beside_calls=False),
        )
    if has("<|role_sep|>", "<|message_sep|>") and "<|function_call|>" not in source:
        return Handler("GigaChat v3", hooks.content_only("assistant<|role_sep|>\n"), thinking=False)
    if has("]<]minimax[>[", "<tool_call>", "<invoke name="):
        return Handler("MiniMax-M3", hooks.generation_prompt_then("<mm:think>", "</mm:think>"))
    if has("dsml_token", "DSML") and ("function_calls" in source or "tool_calls" in source):
        is_v4 = "function_calls" not in source
        return Handler(
            "DeepSeek V3.2/V4",
            hooks.deepseek_continuation(is_v4),
            hooks.deepseek_v4_order if is_v4 else None,
        )
    if has("'<|tool_call>call:'"):
        return Handler(
            "Gemma 4",
            hooks.gemma4_continuation,
            functools.partial(hooks.gemma4_prepare, source),
            patch=hooks.gemma4_patch,
        )
    if has("Tool usage guidelines:", '<function name="', '<param name="'):
        return Handler(
            "MiniCPM5", hooks.tags("<|im_start|>assistant\n", "<think>\n", "\n</think>\n\n")
        )
    if (
        has("<tool_call>", "<function=", "<parameter=")
        and "'<tool_call><function=' ~ tool_call.name ~ '>'" not in source
    ):
        if "<think>" in source:
            return Handler(
                "Qwen3-Coder", hooks.tags("<|im_start|>assistant\n", "<think>\n", "\n</think>\n\n")
            )
        return Handler(
            "Qwen3-Coder",
            hooks.content_only("<|im_start|>assistant\n", always=False),
            thinking=False,
        )
    return None
