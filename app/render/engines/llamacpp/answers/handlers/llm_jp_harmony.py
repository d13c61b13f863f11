"""LLM-jp Harmony (LLM-jp 4.1): GPT-OSS's Harmony with a space after each special token.

common_chat_params_init_llm_jp_harmony (common/parsers/llm-jp-harmony.cpp, build b11434),
picked before GPT-OSS. Its parser is not reproduced (`REPRODUCED`): the shared data has
no template of this family to check one against, so the Response view says so instead
of reading the answer as GPT-OSS would.
"""

from __future__ import annotations

NAME = "llm_jp_harmony"
#: Only the detection is here: `select` answers None for this family.
REPRODUCED = False


def matches(source: str) -> bool:
    """The template declares its chat format in a comment."""
    return "chat_format=llm-jp-harmony-v1" in source
