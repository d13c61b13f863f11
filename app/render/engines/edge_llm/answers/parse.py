"""Edge-LLM's whole-answer parse (`parse_assistant_output` at 83f5f76): tool calls first,
then reasoning in what is left.

Without tools to read (a request without tools, or tool_choice "none") the reasoning
parser reads the whole completion. Otherwise the generic tool parser splits it into
content and blocks (`markup.find_blocks`); a block yields its calls, or stays content
when it yields none. When it finds no block at all it reads the whole completion as one
block, and returns only the calls it finds there (or all of it as content). Each stretch
of content then goes through the reasoning parser, but only when it holds one of the
parser's markers.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from app.render.engines.edge_llm.answers.calls import BlockReading, Call, Tools, read_block
from app.render.engines.edge_llm.answers.markup import Block, Unclosed, find_blocks
from app.render.engines.edge_llm.answers.reasoning import ReasoningParser, split_events


@dataclass
class Parsed:
    """The parse: ordered events, and what the notes need to explain it."""

    #: ("content", text), ("reasoning", text) or ("call", Call), in order.
    events: list[tuple[str, str | Call]] = field(default_factory=list)
    #: Every block found, with its reading.
    blocks: list[tuple[Block, BlockReading]] = field(default_factory=list)
    unclosed: list[Unclosed] = field(default_factory=list)
    #: The whole completion read as one block, when no block was found.
    whole: BlockReading | None = None

    def joined(self, kind: str) -> str:
        return "".join(text for k, text in self.events if k == kind and isinstance(text, str))

    @property
    def content(self) -> str:
        return self.joined("content")

    @property
    def reasoning(self) -> str:
        return self.joined("reasoning")

    @property
    def calls(self) -> list[Call]:
        return [call for kind, call in self.events if kind == "call" and isinstance(call, Call)]


def parse(text: str, tools: Tools | None, reasoning: ReasoningParser | None) -> Parsed:
    """Edge-LLM's reading of `text`; `tools` None when it reads no tool calls, `reasoning`
    the reasoning parser in force (None: none). Raises `calls.ServerFailure` where
    Edge-LLM's parser raises."""
    if tools is None:
        return Parsed(events=list(split_events(text, reasoning, implicit=True)))
    # Python's parser warns of odd literals ("1abc"): a completion is no code to warn about.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        parsed = _tool_events(text, tools)
    events: list[tuple[str, str | Call]] = []
    for kind, value in parsed.events:
        if kind == "content" and isinstance(value, str):
            events += split_events(value, reasoning, implicit=False)
        else:
            events.append((kind, value))
    parsed.events = events
    return parsed


def _tool_events(text: str, tools: Tools) -> Parsed:
    blocks, unclosed = find_blocks(text)
    parsed = Parsed(unclosed=unclosed)
    pos = 0
    for block in blocks:
        if block.start > pos:
            parsed.events.append(("content", text[pos : block.start]))
        reading = read_block(text[block.start : block.end], tools)
        parsed.blocks.append((block, reading))
        if reading.calls:
            parsed.events += [("call", call) for call in reading.calls]
        else:
            parsed.events.append(("content", text[block.start : block.end]))
        pos = block.end
    if pos < len(text):
        parsed.events.append(("content", text[pos:]))
    if blocks:
        return parsed
    parsed.whole = read_block(text, tools)
    if parsed.whole.calls:
        parsed.events = [("call", call) for call in parsed.whole.calls]
    else:
        parsed.events = [("content", text)]
    return parsed
