"""Message content as vLLM shapes it: a string for "string" templates, typed blocks for
"openai" ones (vllm/renderers/chat_utils/parse_chat_message_content.py).

A string is first made a text part; each part is then read by its type: the text types
give their text (a `refusal` part its refusal, a `thinking` part its thinking), media
parts give `{"type": "image"}` (audio, video) in blocks, and unknown types are refused.
"string" templates get the texts joined with a newline; "openai" templates get every
text as `{"type": "text", "text": ...}` with the part's extra keys kept after it.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.vllm.contract import Contract, Refused

#: The text a text-like part carries, by part type.
TEXT_KEYS = {
    "text": "text",
    "input_text": "text",
    "output_text": "text",
    "refusal": "refusal",
    "thinking": "thinking",
}

#: The modality of each media part type.
MEDIA_TYPES = {
    "image_url": "image",
    "input_image": "image",
    "image_pil": "image",
    "image_embeds": "image",
    "audio_url": "audio",
    "input_audio": "audio",
    "audio_embeds": "audio",
    "video_url": "video",
    "video_embeds": "video",
}

#: Part types vLLM parses besides text and media.
OTHER_TYPES = ("tool_reference", "prompt_embeds")

#: Keys vLLM's content part types declare; any other key of a part is kept in blocks.
KNOWN_PART_KEYS = frozenset(
    {
        "type", "text", "image_url", "input_audio", "file", "audio_url", "video_url",
        "refusal", "image_pil", "uuid", "image_embeds", "audio_embeds", "video_embeds",
        "data", "name", "thinking", "closed", "detail", "file_id",
    }
)  # fmt: skip

#: What a part without a `type` is taken for, by the first of these keys it has.
UNTYPED_KEYS = (
    "image_url", "image_pil", "image_embeds", "audio_embeds", "video_embeds",
    "prompt_embeds", "audio_url", "input_audio", "video_url", "tool_reference",
)  # fmt: skip

#: The header line Claude Code writes first in system prompts; vLLM drops it.
BILLING_HEADER = "x-anthropic-billing-header"


def supported_types() -> str:
    """The part types vLLM names when it refuses one."""
    return ", ".join(sorted({*TEXT_KEYS, *MEDIA_TYPES, *OTHER_TYPES}))


def content_parts(role: str, content: Any, where: str) -> list[Any]:
    """The content as a list of parts: None is none, a string one text part."""
    if content is None:
        return []
    if isinstance(content, str):
        parts: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        parts = content
    else:
        raise Refused(f"{where}.content must be a string or a list of content parts.")
    return _without_billing_header(parts) if role == "system" else parts


def _without_billing_header(parts: list[Any]) -> list[Any]:
    """System parts without Claude Code's per-request header line (vLLM strips it so
    the prefix cache survives)."""
    kept: list[Any] = []
    for part in parts:
        text = part if isinstance(part, str) else None
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
        if not (isinstance(text, str) and text.startswith(BILLING_HEADER)):
            kept.append(part)
            continue
        rest = text.partition("\n")[2]
        if rest:
            kept.append(rest if isinstance(part, str) else {**part, "text": rest})
    return kept


def part_type(part: dict[str, Any], where: str) -> str:
    """The part's type; an untyped part is typed by the media key it has."""
    kind = part.get("type")
    if kind is None or part.get("uuid") is not None:
        found = next((key for key in UNTYPED_KEYS if key in part), None)
        if found is not None:
            return found
        if kind is None:
            raise Refused(f"{where}: Missing 'type' field in multimodal part.")
    if not isinstance(kind, str):
        raise Refused(f"{where}: Invalid 'type' field in multimodal part.")
    return kind


def shape_content(
    parts: list[Any], blocks: bool, contract: Contract, where: str
) -> str | list[dict[str, Any]]:
    """The content a template sees: typed blocks, or the texts joined with a newline."""
    shaped = [
        item
        for index, part in enumerate(parts)
        if (item := _shape_part(part, blocks, contract, f"{where}.content[{index}]"))
    ]
    return shaped if blocks else "\n".join(shaped)


def _shape_part(part: Any, blocks: bool, contract: Contract, where: str) -> Any:
    if isinstance(part, str):
        return {"type": "text", "text": part} if blocks else part
    if not isinstance(part, dict):
        raise Refused(f"{where} must be a string or an object.")
    kind = part_type(part, where)
    extra = {key: value for key, value in part.items() if key not in KNOWN_PART_KEYS}
    if kind in TEXT_KEYS:
        text = part.get(TEXT_KEYS[kind])
        if text is None:
            return None  # vLLM skips a text part without its text
        if not isinstance(text, str):
            raise Refused(f"{where}.{TEXT_KEYS[kind]}: Input should be a valid string")
        return {"type": "text", "text": text, **extra} if blocks else text
    if kind == "tool_reference":
        name = part.get("name")
        return {"type": "tool_reference", "name": name} if blocks else name
    if kind in MEDIA_TYPES:
        return _media(MEDIA_TYPES[kind], extra, blocks, contract, where)
    if kind == "prompt_embeds":
        raise Refused(f"{where}: prompt_embeds parts need the server's --enable-prompt-embeds.")
    raise Refused(
        f"{where}: Unsupported chat content part type: {kind!r}. "
        f"Supported types: {supported_types()}."
    )


def _media(
    modality: str, extra: dict[str, Any], blocks: bool, contract: Contract, where: str
) -> dict[str, Any]:
    if blocks:
        return {"type": modality, **extra}
    raise Refused(
        f"{where}: with a string-format template {contract.server} writes the model's own "
        f"{modality} placeholder (from its multimodal processor), which the playground cannot "
        "know; use content_format 'openai' or a template that reads content blocks."
    )
