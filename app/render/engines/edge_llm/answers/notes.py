"""What the Response view says of Edge-LLM's reading, in words: markup it left as content
and why, calls it dropped, arguments it wrapped, reasoning it did not read."""

from __future__ import annotations

from dataclasses import dataclass

from app.render.engines.edge_llm.answers.calls import RAW, BlockReading
from app.render.engines.edge_llm.answers.markup import FAMILIES
from app.render.engines.edge_llm.answers.parse import Parsed
from app.render.engines.edge_llm.answers.reasoning import ReasoningParser

#: What Edge-LLM's server removes from the content (serving_chat.py, `IM_END_TOKEN`).
IM_END = "<|im_end|>"


@dataclass(frozen=True)
class Setting:
    """How the server was set up and what the request asked, for the notes."""

    reasoning_choice: str
    #: The reasoning parser `--reasoning-parser` resolves to for this model.
    configured: str
    parser: ReasoningParser | None
    #: Whether the request sets enable_thinking.
    thinking: bool
    #: Why the server reads no tool calls (None: it reads them).
    no_tools: str | None
    forced: str | None
    model_names: tuple[str, ...]


def notes(text: str, parsed: Parsed, setting: Setting) -> list[str]:
    """Sentences on what did not read as the markup means it."""
    said = _reasoning_notes(text, parsed, setting)
    if setting.no_tools is not None:
        if any(token in text for family in FAMILIES for token in family.opens):
            said.append(
                f"{setting.no_tools}, so Edge-LLM's server reads no tool calls: the markup "
                "stays in the content."
            )
    else:
        said += _tool_notes(parsed, setting.forced)
    for call in parsed.calls:
        if call.arguments.startswith('{"' + RAW + '": '):
            said.append(
                f"The arguments of `{call.name}` are not JSON (nor Python keyword arguments), "
                f'so Edge-LLM sends them wrapped as {{"{RAW}": ...}}.'
            )
    if IM_END in parsed.content:
        said.append(f"Edge-LLM's server removes `{IM_END}` from the content.")
    return said


def _reasoning_notes(text: str, parsed: Parsed, setting: Setting) -> list[str]:
    parser, configured = setting.parser, setting.configured
    markers = parser is not None and (parser.start in text or parser.end in text)
    thinks = "<think>" in text or "</think>" in text
    said: list[str] = []
    if not setting.thinking and not (parser is not None and parser.always):
        if markers or thinks:
            said.append(
                "The request does not set enable_thinking, so Edge-LLM's server runs no "
                "reasoning parser (it runs one only for requests that do): the thinking "
                "stays in the content."
            )
        return said
    if setting.reasoning_choice == "auto" and (markers or thinks):
        known = ", ".join(setting.model_names)
        said.append(
            f"`--reasoning-parser auto` takes {configured} here: Edge-LLM goes by the "
            "checkpoint's folder name and config.json (model_type, architectures); the "
            + (
                f"playground by the names it knows of the model ({known})."
                if known
                else "playground knows no name for this model, so none (choose the "
                "parser the model needs)."
            )
        )
    if parser is None:
        if thinks:
            said.append("No reasoning parser: the thinking stays in the content.")
        return said
    if parsed.reasoning and parser.end not in text:
        said.append(
            f"There is no `{parser.end}`, so Edge-LLM takes the text (after "
            f"`{parser.start.strip()}`, where there is one) for reasoning."
        )
    start = text.find(parser.start)
    whole_read = parsed.whole is not None and bool(parsed.whole.calls)
    first_block = parsed.blocks[0][0].start if parsed.blocks else len(text)
    if start > 0 and text[:start].strip() and not whole_read and start < first_block:
        said.append(f"Edge-LLM drops the text before `{parser.start.strip()}`.")
    return said


def _tool_notes(parsed: Parsed, forced: str | None) -> list[str]:
    said = []
    for block, reading in parsed.blocks:
        if reading.calls:
            said += _dropped(reading, forced)
            continue
        said.append(
            f"The `{block.opener}` block at character {block.start:,} {_why(reading, forced)}, "
            "so Edge-LLM's server returns it as content."
        )
    if parsed.whole is not None and parsed.whole.calls:
        said.append(
            "Edge-LLM found no tool-call block, read the whole completion as one bare call "
            "(JSON, a Python literal or call lines, maybe in a code fence) and returns only "
            "the call(s): no content."
        )
        said += _dropped(parsed.whole, forced)
        return said
    for unclosed in parsed.unclosed:
        said.append(
            f"`{unclosed.opener}` at character {unclosed.at:,} has no `{unclosed.closer}` "
            "after it, so Edge-LLM does not read it as a tool call: it stays in the content."
        )
    return said


def _refused(names: list[str], forced: str | None) -> tuple[str, str]:
    """The functions named, and why Edge-LLM does not return calls to them."""
    listed = ", ".join(f"`{name}`" for name in dict.fromkeys(names))
    if forced:
        return listed, f"not `{forced}`, the function tool_choice forces"
    return listed, "not one of the request's tools"


def _dropped(reading: BlockReading, forced: str | None) -> list[str]:
    if not reading.refused:
        return []
    listed, reason = _refused(reading.refused, forced)
    return [f"Edge-LLM drops the call to {listed} ({reason})."]


def _why(reading: BlockReading, forced: str | None) -> str:
    if reading.refused:
        listed, reason = _refused(reading.refused, forced)
        return f"calls {listed}, {reason}"
    if reading.loaded:
        return 'holds no call (an object with a string "name", or a list of them)'
    if reading.json_error:
        return (
            f"is not valid JSON ({reading.json_error}) nor a Python literal, and none of "
            "its lines is a call name(...)"
        )
    return "holds no call"
