"""vLLM 0.33.0's declarative parser engine (`vllm/parser/engine/`), read on whole text.

Since 0.33 several of vLLM's parsers (kimi_k2, glm45, minimax_m2, qwen3, qwen3_coder, ...)
are one engine driven by a table per model: *markers* (literal strings such as
`<tool_call>`), and *moves* `(state, marker) -> (next state, events)`. Text is cut into
markers and plain text, leftmost and longest marker first; plain text means what its
state says (content, reasoning, a tool's name, a tool's arguments, or nothing between
calls), and a marker with no move from the current state is plain text too. This module
runs such a table over a completed answer and returns the events; `_engine_reading`
turns the events into what vLLM's non-streaming API returns.

Only what decides the final answer is kept: the streaming engine's chunking, held-back
braces and token counts make no difference once the whole text has been read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property, lru_cache

from app.render.engines.vllm.answers._schema_types import has_tool


class State(Enum):
    """Where the engine is in the answer."""

    CONTENT = "content"
    REASONING = "reasoning"
    TOOL_PREAMBLE = "tool_preamble"
    TOOL_NAME = "tool_name"
    TOOL_ARGS = "tool_args"
    TOOL_BETWEEN = "tool_between"


TOOL_STATES = frozenset({State.TOOL_PREAMBLE, State.TOOL_NAME, State.TOOL_ARGS, State.TOOL_BETWEEN})
PLAIN_STATES = frozenset({State.CONTENT, State.REASONING})

# Event kinds, as vLLM's EventType names them.
TEXT = "text"
REASONING = "reasoning"
REASONING_START = "reasoning_start"
REASONING_END = "reasoning_end"
CALL_START = "call_start"
CALL_NAME = "call_name"
CALL_ARGS = "call_args"
CALL_END = "call_end"

#: What plain text is in each state (states not listed drop it).
TEXT_EVENTS = {
    State.CONTENT: TEXT,
    State.REASONING: REASONING,
    State.TOOL_NAME: CALL_NAME,
    State.TOOL_ARGS: CALL_ARGS,
}


@dataclass(frozen=True)
class Move:
    """Where a marker takes the engine, and what it reports on the way."""

    to: State
    events: tuple[str, ...] = ()


@dataclass(slots=True)
class Event:
    """One thing the engine reports: `kind`, the text it carries, the call it is about."""

    kind: str
    value: str
    call: int


@dataclass(frozen=True)
class Step:
    """What a marker does in one state (`Grammar.steps`), worked out once per grammar so
    that `run` pays one dictionary look-up a marker."""

    #: Its move from that state (None: it is plain text there).
    move: Move | None
    #: Whether the move enters tool markup, the marker leaves it (`Grammar.tool_exits`),
    #: the marker is tool markup or reasoning markup only, and the move ends the reasoning.
    opens: bool
    exits: bool
    tool: bool
    reasoning: bool
    ends_reasoning: bool


@dataclass(frozen=True, eq=False)
class Grammar:
    """One model's table: vLLM's `ParserEngineConfig`, the fields that matter here."""

    name: str
    #: Marker name -> its spellings.
    markers: Mapping[str, tuple[str, ...]]
    moves: Mapping[tuple[State, str], Move]
    start: State = State.CONTENT
    #: Raw argument text -> JSON arguments (None: the text is JSON already).
    convert_args: Callable[[str], str] | None = None
    strip_trailing_reasoning: bool = True
    drop_blank_content_with_tools: bool = True
    strip_content_with_tools: bool = True
    check_tool_names: bool = False
    #: The name as it stands when the engine decides on it (GLM strips it).
    clean_name: Callable[[str], str] = field(default=lambda name: name)
    #: Kimi K2's call header (`functions.get_weather:0`) -> (id, name), None when it is
    #: not one; None for formats whose header is just the name.
    read_header: Callable[[str], tuple[str, str] | None] | None = None
    #: The chat format's turn markers: a prompt read back to one of them says nothing
    #: more about whether the reasoning is open.
    boundaries: frozenset[str] = frozenset()
    #: Special tokens the format reads inside its markup, which vLLM does not drop.
    preserve: frozenset[str] = frozenset()
    #: The converted arguments, given the request's tools and the name of the first call
    #: with the same raw arguments (DeepSeek's DSML: vLLM's `_unwrap_wrapper_args`).
    after_convert: Callable[[str, list[dict] | None, str | None], str] | None = None

    @cached_property
    def spellings(self) -> dict[str, str]:
        """Every spelling -> its marker name."""
        return {text: name for name, texts in self.markers.items() for text in texts}

    @cached_property
    def splitter(self) -> re.Pattern[str]:
        """Finds the markers, the longest spelling first where several start together."""
        texts = sorted(self.spellings, key=len, reverse=True)
        return re.compile("|".join(re.escape(text) for text in texts))

    @cached_property
    def tool_markers(self) -> frozenset[str]:
        """Markers that enter, leave or act inside tool markup."""
        return frozenset(
            marker
            for (state, marker), move in self.moves.items()
            if move.to in TOOL_STATES or state in TOOL_STATES
        )

    @cached_property
    def tool_exits(self) -> frozenset[str]:
        return frozenset(
            marker
            for (state, marker), move in self.moves.items()
            if state in TOOL_STATES and move.to not in TOOL_STATES
        )

    @cached_property
    def reasoning_markers(self) -> frozenset[str]:
        """Markers used for reasoning only, which a tool parser without a reasoning
        parser leaves in the text (none, when one of them also does other work)."""
        markers = {
            marker
            for (state, marker), move in self.moves.items()
            if State.REASONING in (state, move.to) and move.to not in TOOL_STATES
        }
        for (state, marker), move in self.moves.items():
            if marker in markers and (
                state not in PLAIN_STATES
                or move.to not in PLAIN_STATES
                or not {REASONING_START, REASONING_END}.issuperset(move.events)
            ):
                return frozenset()
        return frozenset(markers)

    @cached_property
    def steps(self) -> dict[State, dict[str, Step]]:
        """Every state's `Step` for every marker."""
        return {
            state: {marker: self._step(state, marker) for marker in self.markers} for state in State
        }

    def _step(self, state: State, marker: str) -> Step:
        move = self.moves.get((state, marker))
        return Step(
            move,
            opens=move is not None and move.to in TOOL_STATES,
            exits=marker in self.tool_exits,
            tool=marker in self.tool_markers,
            reasoning=marker in self.reasoning_markers,
            ends_reasoning=move is not None and REASONING_END in move.events,
        )

    def accepts(self, name: object, tools: list[dict] | None) -> bool:
        """Whether vLLM keeps a call with this name."""
        if not isinstance(name, str) or not name:
            return False
        return not (self.check_tool_names and tools) or has_tool(tools, name)


#: The marker name of a special token the format does not use (vLLM drops it).
DROP = "__drop__"


@lru_cache(maxsize=64)
def _splitter(grammar: Grammar, dropped: frozenset[str]) -> tuple[re.Pattern[str], dict[str, str]]:
    names = dict.fromkeys(dropped - grammar.spellings.keys(), DROP) | grammar.spellings
    texts = sorted((text for text in names if text), key=len, reverse=True)
    return re.compile("|".join(re.escape(text) for text in texts)), names


def splitter_for(
    grammar: Grammar, text: str, dropped: frozenset[str]
) -> tuple[re.Pattern[str], dict[str, str]]:
    """The expression that finds the markers and the dropped tokens in `text`, and each
    spelling's marker name (`DROP` for the dropped tokens)."""
    # Only the tokens the text holds go into the expression: a tokenizer can have
    # thousands of special tokens, and an alternation is tried token by token.
    dropped = frozenset(t for t in dropped if t and t in text and t not in grammar.preserve)
    if not dropped:
        return grammar.splitter, grammar.spellings
    return _splitter(grammar, dropped)


def pieces(
    grammar: Grammar, text: str, dropped: frozenset[str] = frozenset()
) -> Iterator[tuple[str | None, str]]:
    """The text as (marker name, its text) and (None, plain text) pieces; `dropped` are
    the tokenizer's other special tokens, which vLLM's engine removes from the text."""
    splitter, names = splitter_for(grammar, text, dropped)
    at = 0
    for match in splitter.finditer(text):
        start, found = match.start(), match.group()
        if start > at:
            yield None, text[at:start]
        yield names[found], found
        at = match.end()
    if at < len(text):
        yield None, text[at:]


def run(
    grammar: Grammar,
    text: str,
    start: State,
    *,
    skip_tools: bool = False,
    skip_reasoning: bool = False,
    dropped: frozenset[str] = frozenset(),
) -> list[Event]:
    """The events vLLM's engine reports for the whole `text`, from state `start`.

    `skip_tools` is the reasoning pass (tool markup stays text for the tool parser);
    `skip_reasoning` is a tool parser with no reasoning parser (reasoning markup stays
    text); `dropped` are the tokenizer's special tokens the format does not use."""
    state, call, in_skipped_call = start, -1, False
    steps, kind = grammar.steps[state], TEXT_EVENTS.get(state)
    events: list[Event] = []

    # Plain text of one kind in a row is joined at the end, into one event: a run of
    # 100 000 markers that mean nothing here costs one event, not 100 000. While a run
    # is open (`parts` not empty), events[-1] is its event: state and call change only
    # where the run is closed, so whatever plain text comes next belongs to it.
    parts: list[str] = []
    for marker, value in pieces(grammar, text, dropped):
        if marker == DROP:
            continue
        if marker is not None:
            step = steps[marker]
            if step.move is None:
                if skip_tools and step.exits:
                    in_skipped_call = False
            elif skip_reasoning and step.reasoning:
                pass
            elif (
                skip_tools
                and step.tool
                and not (step.exits and not step.opens and not in_skipped_call)
            ):
                # The reasoning pass keeps tool markup as text, but a call that starts
                # inside the reasoning still ends it.
                in_skipped_call = step.opens or (in_skipped_call and not step.exits)
                if step.ends_reasoning:
                    state = State.CONTENT
                    steps, kind = grammar.steps[state], TEXT_EVENTS.get(state)
                    if parts:
                        events[-1].value = "".join(parts)
                        parts = []
                    events.append(Event(REASONING_END, value, call))
            else:
                state = step.move.to
                steps, kind = grammar.steps[state], TEXT_EVENTS.get(state)
                if parts:
                    events[-1].value = "".join(parts)
                    parts = []
                for event in step.move.events:
                    if event == CALL_START:
                        call += 1
                    if event != TEXT or value:
                        events.append(Event(event, value, call))
                continue
        # Plain text, or a marker read as plain text.
        if kind is not None and value:
            if not parts:
                events.append(Event(kind, value, call))
            parts.append(value)

    if parts:
        events[-1].value = "".join(parts)
    if state in TOOL_STATES and call >= 0:
        events.append(Event(CALL_END, "", call))
    elif state is State.REASONING:
        events.append(Event(REASONING_END, "", call))
    return events
