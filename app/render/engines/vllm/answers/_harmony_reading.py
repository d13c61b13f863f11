"""vLLM's `HarmonyParser` (0.33.0, `vllm/parser/harmony.py`) reproduced on text.

For a gpt-oss model (`model_type` "gpt_oss") vLLM does not run its tool and reasoning
parsers one after the other: `--tool-call-parser openai` and `--reasoning-parser
openai_gptoss` are stubs that only switch parts of one Harmony parser on, which reads
the completion's tokens with openai-harmony's `StreamableParser` (`app.render.harmony`).
Its `parse` sorts the messages: `analysis` is reasoning (kept only with the reasoning
parser), `final` and a `commentary` with no recipient are content, a message to a
function (`to=functions.NAME`, or any bare name but `assistant` and the built-in tools)
is a tool call (kept only with the tool parser). A token the Harmony parser refuses is
skipped; a completion that ends inside a header comes back whole as content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from app.render.answer import ToolCall
from app.render.engines.vllm.answers.base import tool_call_id
from app.render.harmony import CONSTRAIN, HarmonyError, HarmonyMessage, HarmonyParser, pieces

#: Recipients vLLM keeps for its built-in tools (`BUILTIN_TOOL_TO_MCP_SERVER_LABEL`).
BUILTIN_TOOLS = ("python", "browser", "container")
MCP_LABELS = ("code_interpreter", "web_search_preview", "container")


@dataclass(frozen=True)
class HarmonyReading:
    """What `HarmonyParser.parse` returns: `(reasoning, content, tool_calls)`."""

    reasoning: str | None
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    notes: tuple[str, ...] = ()


def is_function_recipient(recipient: str) -> bool:
    """vLLM's test for a recipient that names a function (the Chat Completions way)."""
    if not recipient or recipient.startswith("<|") or recipient == "assistant":
        return False
    if recipient.startswith("functions."):
        return len(recipient) > len("functions.")
    names = BUILTIN_TOOLS + MCP_LABELS
    return recipient not in names and recipient.split(".", 1)[0] not in names


def _normalize_recipient(recipient: str | None) -> str | None:
    # Older Harmony left a glued `<|constrain|>json` in the recipient; vLLM cuts it off.
    if recipient is None or (cut := recipient.find(CONSTRAIN)) == -1:
        return recipient
    return recipient[:cut].rstrip() or None


def _messages(text: str) -> tuple[list[HarmonyMessage], list[str]]:
    """The messages vLLM's token loop and `flush` get from the parser, and notes."""
    parser, notes = HarmonyParser(role="assistant"), []
    since_last: list[str] = []  # what flush recovers when the parser ends in a header
    skipped = 0
    for piece in pieces(text):
        count = len(parser.messages)
        try:
            parser.process(piece)
        except HarmonyError:
            skipped += 1
            continue
        if len(parser.messages) > count:
            since_last.clear()
        else:
            since_last.append(piece)
    messages = list(parser.messages)
    try:
        parser.process_eos()
        messages = list(parser.messages)
    except HarmonyError:
        recovered = "".join(since_last)
        messages.append(HarmonyMessage("assistant", recovered, channel="final"))
        notes.append(
            "The completion ends inside a Harmony message header (no `<|message|>`), so "
            "vLLM returns the text since the last complete message as final content."
        )
    if skipped:
        notes.append(
            f"openai-harmony refused {skipped} piece(s) of the completion (text outside a "
            "message, or a header it cannot read); vLLM skips them and reads on."
        )
    return messages, notes


def _arguments(message: HarmonyMessage, notes: list[str]) -> str:
    text = message.text
    if message.content_type is not None and "json" not in message.content_type:
        return text
    try:
        return json.dumps(json.loads(text))
    except json.JSONDecodeError:
        notes.append(
            f"The arguments to `{message.recipient}` are not valid JSON, so vLLM passes "
            "them on as the model wrote them."
        )
        return text
    except RecursionError:
        # vLLM does not catch this: its request fails with a server error.
        notes.append(
            f"The arguments to `{message.recipient}` nest too deeply for Python's json "
            "module: vLLM's json.loads raises RecursionError and the request fails."
        )
        return text


def read(text: str, *, reasoning_parser: bool, tool_parser: bool) -> HarmonyReading:
    """`HarmonyParser.parse` on the completion `text`, with the reasoning parser
    (`openai_gptoss`) and the tool parser (`openai`) on or off."""
    messages, notes = _messages(text)
    reasoning, content, calls = [], [], []
    for message in messages:
        if message.role != "assistant":
            continue
        recipient = _normalize_recipient(message.recipient)
        if recipient and is_function_recipient(recipient):
            if tool_parser:
                name = recipient.removeprefix("functions.")
                if name == recipient:
                    notes.append(
                        f"A message is addressed to `{recipient}`, with no `functions.` prefix: "
                        "vLLM takes any such bare recipient for the name of a function to call."
                    )
                arguments = _arguments(message, notes)
                calls.append(ToolCall(name, arguments, tool_call_id(len(calls), name)))
            else:
                notes.append(
                    f"The call to `{recipient}` is dropped: without --tool-call-parser "
                    "openai vLLM's Harmony parser keeps no tool calls."
                )
        elif message.channel == "analysis":
            if reasoning_parser and message.text:
                reasoning.append(message.text)
            elif message.text:
                notes.append(
                    "The analysis channel is dropped: without --reasoning-parser "
                    "openai_gptoss vLLM's Harmony parser returns no reasoning."
                )
        elif message.text and (
            message.channel == "final" or (message.channel == "commentary" and recipient is None)
        ):
            content.append(message.text)
    return HarmonyReading(
        "\n".join(reasoning) or None, "\n".join(content) or None, tuple(calls), tuple(notes)
    )
