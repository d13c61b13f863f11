"""The <think> blocks /api/chat strips from earlier assistant turns of some models.

Facts read in ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7,
`server/routes.go` (`filterThinkTags`, called by ChatHandler on the messages it renders,
after the model's SYSTEM and stored messages are put in, whichever way the prompt is
then written): for a model whose config's family is exactly `qwen3`, or whose name's
model part (`model.ParseName(m.Name).Model`: the name without its tag, after its last
"/") is `deepseek-r1`, every assistant message before the last user message has its
content passed through Ollama's thinking parser with the tags `<think>` and `</think>`
once (`thinking.py`): leading white space is skipped, a content that does not open with
`<think>` is kept, else what follows `</think>` (its leading white space dropped) is kept
and an unclosed block leaves nothing. Assistant messages after the last user message
keep their blocks.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama.thinking import ThinkingParser

FAMILY, MODEL = "qwen3", "deepseek-r1"
OPEN, CLOSE = "<think>", "</think>"


def model_name(name: str) -> str:
    """`model.ParseName(name).Model`: the part after the last "/", its ":tag" cut off
    when the last ":" comes after the last "/"."""
    if name.rfind(":") > name.rfind("/"):
        name = name[: name.rfind(":")]
    return name[name.rfind("/") + 1 :]


def filters(family: str | None, name: str | None) -> bool:
    """Whether /api/chat filters a model of `family` named `name` (None: not known)."""
    return family == FAMILY or (name is not None and model_name(name) == MODEL)


def filter_think_tags(
    messages: list[dict[str, Any]], family: str | None, name: str | None
) -> tuple[list[dict[str, Any]], int]:
    """The messages as /api/chat renders them, and how many had text stripped. A
    content that is not text (a list of parts) is left as it is."""
    if not filters(family, name):
        return messages, 0
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    filtered, changed = [], 0
    for index, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") == "assistant" and index < last_user and isinstance(content, str):
            _, kept = ThinkingParser(OPEN, CLOSE).add(content)
            if kept != content:
                message, changed = {**message, "content": kept}, changed + 1
        filtered.append(message)
    return filtered, changed


def said(changed: int, family: str | None, name: str | None) -> list[str]:
    """The sentence saying what was stripped (none when nothing was)."""
    if not changed:
        return []
    why = f"a {FAMILY} model" if family == FAMILY else f"a {MODEL} model (by its name)"
    turns = f"{changed} earlier assistant message" + ("s" if changed != 1 else "")
    return [
        f"Ollama strips the <think> block from {turns} (those before the last user "
        f"message), as /api/chat does for {why} (filterThinkTags, server/routes.go)."
    ]
