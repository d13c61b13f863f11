"""llama.cpp's specialized chat handlers: one record per family, in the order it tries them.

`common_chat_try_specialized_template` (common/chat.cpp, build b11434) checks the
template source for each family's markers in a fixed order and hands the first match to
that family's `common_chat_params_init_*` (common/parsers/); no match means the
differential autoparser. `FAMILIES` is that list, one record (`family.Family`) per
family: llama.cpp's detection (`matches`), what the handler does to the prompt and
whether it thinks by default (`prompt`, `hooks.PromptHooks`), and the format,
generation prompt and PEG parser it derives (`params`, from the family's module here,
as in common/parsers/; None for LLM-jp Harmony and Ling 3.0, whose parsers are not
reproduced: the shared data has no template of theirs to check one against).

The prompt (`apply`, `prompt`), the thinking default (`autoparser_cache`) and the answer
parser (`derive`) all read this one table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from app.render.engines.llamacpp import hooks
from app.render.engines.llamacpp.families import (
    cohere2moe,
    deepseek_v3_2,
    functionary_v3_2,
    gemma4,
    gigachat_v3,
    gpt_oss,
    kimi_k2,
    kimi_k3,
    lfm2,
    minicpm5,
    minimax_m3,
    ministral_3,
    muse_glimmer,
    qwen3_coder,
)
from app.render.engines.llamacpp.families.family import Family
from app.render.engines.llamacpp.hooks import PromptHooks


def _has(*needles: str, without: str = "") -> Callable[[str], bool]:
    """A check that every needle is in the source (and `without`, if given, is not)."""

    def check(source: str) -> bool:
        present = all(needle in source for needle in needles)
        return present and not (without and without in source)

    return check


def _lfm2(source: str) -> bool:
    """LFM2's tool-list markers, or LFM2.5's plain tool list (two checks in llama.cpp,
    one after the other, for the same handler)."""
    if lfm2.TOOL_LIST_START in source and lfm2.TOOL_LIST_END in source:
        return True
    return "List of tools: [" in source and lfm2.TOOL_LIST_START not in source


def _deepseek(source: str) -> bool:
    """The template defines `dsml_token` and names a block of calls."""
    blocks = "function_calls" in source or "tool_calls" in source
    return "dsml_token" in source and "DSML" in source and blocks


def _deepseek_prompt(source: str) -> PromptHooks:
    """V4 templates (no `function_calls` block) get their messages reordered."""
    is_v4 = "function_calls" not in source
    return PromptHooks(adjust=hooks.deepseek_v4_order if is_v4 else None)


def _gemma4_prompt(source: str) -> PromptHooks:
    """Older Gemma 4 templates want tool results inside the assistant turn."""
    prepare = functools.partial(hooks.gemma4_prepare, source)
    return PromptHooks(adjust=prepare, patch=hooks.gemma4_patch)


def _qwen3_coder_prompt(source: str) -> PromptHooks:
    """A template that knows <think> thinks."""
    return PromptHooks(thinking="<think>" in source)


#: Harmony's prompt (LLM-jp 4.1 speaks it too, and its handler shapes the prompt alike).
_HARMONY = PromptHooks(
    hooks.tags(
        "<|start|>assistant",
        "<|channel|>analysis<|message|>",
        "<|end|><|start|>assistant<|channel|>final<|message|>",
    ),
    gpt_oss.ADJUST,
    patch=hooks.gpt_oss_patch,
)

#: The families, in common_chat_try_specialized_template's order.
FAMILIES: tuple[Family, ...] = (
    Family(
        "ministral_3",
        "Ministral 3",
        # Mistral-style markers without Mistral Small 3.2's `[CALL_ID]`.
        _has("[SYSTEM_PROMPT]", "[TOOL_CALLS]", "[ARGS]", without="[CALL_ID]"),
        PromptHooks(adjust=hooks.ministral_blocks),
        ministral_3.params,
    ),
    # The template declares its chat format in a comment.
    Family("llm_jp_harmony", "LLM-jp Harmony", _has("chat_format=llm-jp-harmony-v1"), _HARMONY),
    Family("gpt_oss", "GPT-OSS", _has("<|channel|>"), _HARMONY, gpt_oss.params),
    Family(
        "muse_glimmer",
        "Muse Glimmer",
        _has("<atem:function_calls>", "<|eom|>"),
        PromptHooks(),
        muse_glimmer.params,
    ),
    Family(
        "functionary_v3_2",
        "Functionary v3.2",
        _has(">>>all", ">>>${recipient}"),
        PromptHooks(thinking=False),
        functionary_v3_2.params,
    ),
    Family(
        "kimi_k2",
        "Kimi K2",
        _has(kimi_k2.SECTION_BEGIN, kimi_k2.CALL_BEGIN),
        PromptHooks(),
        kimi_k2.params,
    ),
    Family(
        "kimi_k3",
        "Kimi K3",
        _has("<|open|>", "<|close|>", kimi_k3.EOM),
        PromptHooks(),
        kimi_k3.params,
    ),
    Family(
        "ling3",
        "Ling 3.0",
        _has("<role>ASSISTANT</role>", "<arg_key>"),
        PromptHooks(hooks.tags("<role>ASSISTANT</role>\n", "<think>", "</think>")),
    ),
    Family(
        "cohere2moe",
        "Cohere2 MoE",
        # <|START_TEXT|> (unique to this template) with <|START_ACTION|>.
        _has(cohere2moe.TEXT_START, cohere2moe.ACTION_START),
        PromptHooks(),
        cohere2moe.params,
    ),
    Family(
        "lfm2",
        "LFM2",
        _lfm2,
        PromptHooks(adjust=lfm2.ADJUST),
        lfm2.params,
    ),
    Family(
        "gigachat_v3",
        "GigaChat v3",
        # The role and message separators, without the older `<|function_call|>` token.
        _has(gigachat_v3.ROLE_SEP, gigachat_v3.MESSAGE_SEP, without="<|function_call|>"),
        PromptHooks(thinking=False),
        gigachat_v3.params,
    ),
    Family(
        "minimax_m3",
        "MiniMax-M3",
        _has(minimax_m3.NS, "<tool_call>", "<invoke name="),
        PromptHooks(),
        minimax_m3.params,
    ),
    Family("deepseek_v3_2", "DeepSeek V3.2/V4", _deepseek, _deepseek_prompt, deepseek_v3_2.params),
    # The template writes calls with `'<|tool_call>call:'`.
    Family("gemma4", "Gemma 4", _has("'<|tool_call>call:'"), _gemma4_prompt, gemma4.params),
    Family(
        "minicpm5",
        "MiniCPM5",
        # The template's tool guidelines and its <function name=" / <param name=" markup.
        _has("Tool usage guidelines:", '<function name="', '<param name="'),
        PromptHooks(),
        minicpm5.params,
    ),
    Family(
        "qwen3_coder",
        "Qwen3-Coder",
        # <tool_call> wrapping <function=...> with <parameter=...> arguments, newlines
        # between the tags (a template that writes `<tool_call><function=` joined is not it).
        _has("<tool_call>", "<function=", "<parameter=", without=qwen3_coder.JOINED_TAGS),
        _qwen3_coder_prompt,
        qwen3_coder.params,
    ),
)

#: The families' keys, in llama.cpp's detection order.
ORDER = tuple(family.key for family in FAMILIES)


def family_of(source: str) -> Family | None:
    """The family common_chat_try_specialized_template picks, or None (the autoparser)."""
    return next((family for family in FAMILIES if family.matches(source)), None)


def select(source: str) -> Family | None:
    """The family whose parser reads answers to this template: None for the autoparser,
    and for a family whose parser is not reproduced."""
    family = family_of(source)
    return family if family is not None and family.params is not None else None
