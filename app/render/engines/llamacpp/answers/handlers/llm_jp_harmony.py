"""LLM-jp Harmony (LLM-jp 4.1): GPT-OSS's Harmony with a space after each special token.

common_chat_params_init_llm_jp_harmony (common/parsers/llm-jp-harmony.cpp, build b11434),
picked before GPT-OSS. Its parser is not reproduced (its record has no `params`): the
shared data has no template of this family to check one against, so the Response view
says so instead of reading the answer as GPT-OSS would.
"""

from __future__ import annotations

from app.render.engines.llamacpp.answers.handlers.family import Family
from app.render.engines.llamacpp.answers.handlers.gpt_oss import HARMONY


def matches(source: str) -> bool:
    """The template declares its chat format in a comment."""
    return "chat_format=llm-jp-harmony-v1" in source


FAMILY = Family(
    key="llm_jp_harmony",
    name="LLM-jp Harmony",
    matches=matches,
    prompt=HARMONY,
    params=None,
)
