"""The message llama.cpp's parsers fill (common_chat_msg, common_chat_tool_call), and
the JSON string writing its mappers share.

Below the generic mapper (`chat_peg_mapper`) and the tree mappers (`chat_peg_mappers`),
which both fill one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class ChatToolCall:
    """common_chat_tool_call."""

    name: str = ""
    arguments: str = ""
    id: str = ""


@dataclass
class ChatMsg:
    """common_chat_msg as the parser fills it."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: list[ChatToolCall] = field(default_factory=list)
    role: str = "assistant"
    #: Ours, not common_chat_msg's: where in the parsed text (generation prompt plus
    #: completion) the parse stopped; llama.cpp drops whatever follows without a word.
    parsed_to: int = 0


def dump_string(text: str) -> str:
    """nlohmann::json(text).dump(): quotes, and \\u00XX for control characters, UTF-8 kept."""
    return json.dumps(text, ensure_ascii=False)


def escape_json_string_inner(text: str) -> str:
    """`dump_string` without its quotes."""
    return dump_string(text)[1:-1]
