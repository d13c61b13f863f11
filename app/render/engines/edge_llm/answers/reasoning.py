"""Edge-LLM's reasoning parsers (`experimental/server/parsing/reasoning.py` at 83f5f76), and
how its `auto` picks them and its tool parser by the model.

`qwen3`, `deepseek_r1` and `nemotron` are one parser: the text after the first `<think>`
(all of it when there is none) is reasoning up to the first `</think>`, the rest content;
without `</think>` all of it is reasoning (text before `<think>` is dropped).
`muse_glimmer` reads Muse-Glimmer's channels: reasoning after ` to=self<|message|>` up to
`<|eom|><|start|>assistant to=`; the content after the next `<|message|>`, without a final
`<|eot|>`. Muse-Glimmer's is always on; the others apply only to requests that set
`enable_thinking` (`OpenAIServingChat.prepare_request`).

`auto` (the default of both flags) looks at the checkpoint: its folder name and its
config.json's `model_type` and `architectures`. The playground has no checkpoint, only the
names it knows of the model (the library entry, a loaded model's name, architecture,
file and repository), and takes them for those.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The choices of `--reasoning-parser` and `--tool-call-parser`, in Edge-LLM's order.
REASONING_CHOICES = ("auto", "none", "qwen3", "deepseek_r1", "muse_glimmer", "nemotron")
TOOL_CHOICES = ("auto", "generic", "hermes", "qwen3_xml", "nemotron", "openai")

_MESSAGE = "<|message|>"
_END_OF_TURN = "<|eot|>"


@dataclass(frozen=True)
class ReasoningParser:
    """A reasoning parser: its markers, and whether it runs without `enable_thinking`."""

    start: str
    end: str
    always: bool = False
    #: Muse-Glimmer's: content has a recipient header (and no reasoning without `start`).
    channels: bool = False

    def split(self, text: str) -> tuple[str | None, str | None]:
        """(reasoning, content) of `text`, None for an empty part."""
        muse = self.channels
        at = text.find(self.start)
        if at == -1 and muse:
            return None, _drop_recipient(text) or None
        candidate = text if at == -1 else text[at + len(self.start) :]
        end = candidate.find(self.end)
        if end == -1:
            return candidate or None, None
        content = candidate[end + len(self.end) :]
        return candidate[:end] or None, (_drop_recipient(content) if muse else content) or None


def _drop_recipient(text: str) -> str:
    """Muse-Glimmer's content: after the recipient header's `<|message|>`, without `<|eot|>`."""
    at = text.find(_MESSAGE)
    if at != -1:
        text = text[at + len(_MESSAGE) :]
    return text.removesuffix(_END_OF_TURN)


THINK = ReasoningParser("<think>", "</think>")
MUSE = ReasoningParser(
    " to=self<|message|>", "<|eom|><|start|>assistant to=", always=True, channels=True
)
PARSERS: dict[str, ReasoningParser | None] = {
    "none": None,
    "qwen3": THINK,
    "deepseek_r1": THINK,
    "muse_glimmer": MUSE,
    "nemotron": THINK,
}


def auto_reasoning(names: Sequence[str]) -> str:
    """What `--reasoning-parser auto` takes for a model with these names."""
    lowered = [name.lower() for name in names]
    for marker, parser in (
        ("muse_glimmer", "muse_glimmer"),
        ("nemotron", "nemotron"),
        ("deepseek", "deepseek_r1"),
        ("qwen3", "qwen3"),
    ):
        if any(marker in name for name in lowered):
            return parser
    return "none"


def auto_tool(names: Sequence[str]) -> str:
    """What `--tool-call-parser auto` takes for a model with these names (every name
    is the same generic parser at this commit: only the label changes)."""
    joined = " ".join(names).lower()
    if "qwen3" in joined and "coder" in joined:
        return "qwen3_xml"
    if "qwen" in joined:
        return "hermes"
    if "nemotron" in joined:
        return "nemotron"
    if "openai" in joined or "gpt-oss" in joined:
        return "openai"
    return "generic"


def split_events(
    text: str, parser: ReasoningParser | None, *, implicit: bool
) -> list[tuple[str, str]]:
    """`(kind, text)` events of one stretch of content (`_split_reasoning_events`): with
    `implicit` off (content around tool calls) a stretch without either marker stays
    content."""
    if parser is None:
        return [("content", text)]
    if not implicit and parser.start not in text and parser.end not in text:
        return [("content", text)]
    reasoning, content = parser.split(text)
    events = [
        (kind, part) for kind, part in (("reasoning", reasoning), ("content", content)) if part
    ]
    return events or [("content", "")]
