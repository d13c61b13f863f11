"""Developer and system messages for templates that do not know the developer role.

When the template's source never mentions 'developer', vLLM's renderer writes developer
messages as system messages (without the developer-only `tools`) and merges every system
message into one first message, since most templates accept a single leading system
message (vLLM PR 43590; the merged contents are joined by a blank line, and a list
content is first made one text). Templates that mention 'developer' get the messages
as they are.
"""

from __future__ import annotations

from typing import Any


def supports_developer(template: str) -> bool:
    """Whether the template names the developer role (vLLM's test reads the source)."""
    return "developer" in template


def consolidate_system(
    messages: list[dict[str, Any]], template: str, rewrites: list[str]
) -> list[dict[str, Any]]:
    """Developer → system and one leading system message, unless the template knows
    the developer role."""
    if supports_developer(template):
        return messages
    converted = [_as_system(m) if m["role"] == "developer" else m for m in messages]
    if converted != messages:
        rewrites.append(
            "developer messages become system messages (the template never names "
            "the developer role)"
        )
    systems = [m for m in converted if m["role"] == "system"]
    if not systems or (len(systems) == 1 and converted[0] is systems[0]):
        return converted
    merged = {"role": "system", "content": "\n\n".join(_text(m["content"]) for m in systems)}
    rewrites.append(
        f"the {len(systems)} system messages are merged into one first message"
        if len(systems) > 1
        else "the system message is moved to the front"
    )
    return [merged, *(m for m in converted if m["role"] != "system")]


def _as_system(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "tools"} | {"role": "system"}


def _text(content: Any) -> str:
    """A system message's content as text: the text of its parts, one per line."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
