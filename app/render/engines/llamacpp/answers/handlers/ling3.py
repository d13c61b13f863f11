"""Ling 3.0 (Bailing V3): `<role>X</role>` turns, `<arg_key>`/`<arg_value>` tool calls.

common_chat_params_init_ling3 (common/parsers/ling3.cpp, build b11434), picked after
Kimi K3. Its parser is not reproduced (`REPRODUCED`): the shared data has no template of
this family to check one against, so the Response view says so instead of reading the
answer with the autoparser.
"""

from __future__ import annotations

NAME = "ling3"
#: Only the detection is here: `select` answers None for this family.
REPRODUCED = False


def matches(source: str) -> bool:
    """The assistant's role tag and the tagged argument keys."""
    return "<role>ASSISTANT</role>" in source and "<arg_key>" in source
