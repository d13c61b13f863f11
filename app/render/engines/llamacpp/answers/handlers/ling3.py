"""Ling 3.0 (Bailing V3): `<role>X</role>` turns, `<arg_key>`/`<arg_value>` tool calls.

common_chat_params_init_ling3 (common/parsers/ling3.cpp, build b11434), picked after
Kimi K3. Its parser is not reproduced (its record has no `params`): the shared data has
no template of this family to check one against, so the Response view says so instead
of reading the answer with the autoparser.
"""

from __future__ import annotations

from app.render.engines.llamacpp import hooks
from app.render.engines.llamacpp.answers.handlers.family import Family
from app.render.engines.llamacpp.hooks import PromptHooks


def matches(source: str) -> bool:
    """The assistant's role tag and the tagged argument keys."""
    return "<role>ASSISTANT</role>" in source and "<arg_key>" in source


FAMILY = Family(
    key="ling3",
    name="Ling 3.0",
    matches=matches,
    prompt=PromptHooks(hooks.tags("<role>ASSISTANT</role>\n", "<think>", "</think>")),
    params=None,
)
