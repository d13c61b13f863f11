"""Developer and system messages for templates that do not know the developer role.

When a request has a developer message and the template's source never names the
developer role as a quoted string ("developer" or 'developer'), vLLM's renderer writes
developer messages as system messages (without the developer-only `tools`) and merges
every system message into one first message (vllm/renderers/hf.py,
`safe_apply_chat_template`): the contents that are not empty, a list content first made
one text (its text parts, one per line), joined by a blank line. A request without a
developer message, or a template that names the role, keeps its messages as they are.
"""

from __future__ import annotations

from typing import Any


def supports_developer(template: str) -> bool:
    """Whether the template names the developer role as a string, as vLLM reads it."""
    return '"developer"' in template or "'developer'" in template


def consolidate_system(
    messages: list[dict[str, Any]], template: str, rewrites: list[str]
) -> list[dict[str, Any]]:
    """Developer → system and one leading system message, for a request with a developer
    message and a template that does not know the role."""
    if supports_developer(template) or not any(m["role"] == "developer" for m in messages):
        return messages
    converted = [_as_system(m) if m["role"] == "developer" else m for m in messages]
    rewrites.append(
        "developer messages become system messages (the template never names the developer role)"
    )
    positions = [index for index, m in enumerate(converted) if m["role"] == "system"]
    if positions in ([], [0]):
        return converted
    texts = [text for m in converted if m["role"] == "system" and (text := _text(m["content"]))]
    rewrites.append(
        f"the {len(positions)} system messages are merged into one first message"
        if len(positions) > 1
        else "the system message is moved to the front"
    )
    merged = {"role": "system", "content": "\n\n".join(texts)}
    return [merged, *(m for m in converted if m["role"] != "system")]


def _as_system(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "tools"} | {"role": "system"}


def _text(content: Any) -> Any:
    """A system message's content as vLLM merges it: a list's text parts (and strings),
    one per line; anything else as it is."""
    if not isinstance(content, list):
        return content
    parts = [
        part if isinstance(part, str) else part["text"]
        for part in content
        if isinstance(part, str) or (isinstance(part, dict) and "text" in part)
    ]
    return "\n".join(parts)
