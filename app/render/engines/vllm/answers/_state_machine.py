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
from collections.abc import Callable, Mapping
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


@dataclass
class Event:
    """One thing the engine reports: `kind`, the text it carries, the call it is about."""

    kind: str
    value: str
    call: int


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


def split(
    grammar: Grammar, text: str, dropped: frozenset[str] = frozenset()
) -> list[tuple[str | None, str]]:
    """The text as (marker name, its text) and (None, plain text) pieces; `dropped` are
    the tokenizer's other special tokens, which vLLM's engine removes from the text."""
    # Only the tokens the text holds go into the expression: a tokenizer can have
    # thousands of special tokens, and an alternation is tried token by token.
    dropped = frozenset(t for t in dropped if t and t in text and t not in grammar.preserve)
    splitter, names = (
        (grammar.splitter, grammar.spellings) if not dropped else _splitter(grammar, dropped)
    )
    pieces: list[tuple[str | None, str]] = []
    at = 0
    for match in splitter.finditer(text):
        if match.start() > at:
            pieces.append((None, text[at : match.start()]))
        pieces.append((names[match.group()], match.group()))
        at = match.end()
    if at < len(text):
        pieces.append((None, text[at:]))
    return pieces


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
    state = start
    call = -1
    in_skipped_call = False
    events: list[Event] = []

    # Plain text of one kind in a row is joined at the end, into one event: a run of
    # 100 000 markers that mean nothing here costs one event, not 100 000.
    run_parts: list[str] = []

    def close_run() -> None:
        if run_parts:
            events[-1].value = "".join(run_parts)
            run_parts.clear()

    def plain(value: str) -> None:
        kind = TEXT_EVENTS.get(state)
        if kind is None or not value:
            return
        if run_parts and events[-1].kind == kind and events[-1].call == call:
            run_parts.append(value)
            return
        close_run()
        events.append(Event(kind, value, call))
        run_parts.append(value)

    for marker, value in split(grammar, text, dropped):
        if marker is None:
            plain(value)
            continue
        if marker == DROP:
            continue
        move = grammar.moves.get((state, marker))
        if move is None:
            if skip_tools and marker in grammar.tool_exits:
                in_skipped_call = False
            plain(value)
            continue
        if skip_reasoning and marker in grammar.reasoning_markers:
            plain(value)
            continue
        if skip_tools and marker in grammar.tool_markers:
            opens = move.to in TOOL_STATES
            exits = marker in grammar.tool_exits
            if not (exits and not opens and not in_skipped_call):
                # The reasoning pass keeps tool markup as text, but a call that
                # starts inside the reasoning still ends it.
                in_skipped_call = opens or (in_skipped_call and not exits)
                if REASONING_END in move.events:
                    state = State.CONTENT
                    close_run()
                    events.append(Event(REASONING_END, value, call))
                    plain(value)
                else:
                    plain(value)
                continue
        state = move.to
        close_run()
        for kind in move.events:
            if kind == CALL_START:
                call += 1
            if kind == TEXT and not value:
                continue
            events.append(Event(kind, value, call))

    close_run()
    if state in TOOL_STATES and call >= 0:
        events.append(Event(CALL_END, "", call))
    elif state is State.REASONING:
        events.append(Event(REASONING_END, "", call))
    return events


def prompt_closes_reasoning(grammar: Grammar, prompt: str | None) -> bool:
    """vLLM's `set_prompt_token_ids`: whether the prompt already ended the reasoning (an
    empty think block that a template writes when thinking is off, or a continued final
    message), so the answer starts in content. Read back from the prompt's end, the last
    of a reasoning end, a reasoning start or a turn marker decides."""
    if not prompt or grammar.start is not State.REASONING or not grammar.boundaries:
        return False
    ends = [
        marker
        for (state, marker), move in grammar.moves.items()
        if state is State.REASONING and REASONING_END in move.events
    ]
    last_at, closes = -1, False
    for marker, is_end in [(m, True) for m in ends] + [("THINK_START", False)]:
        for spelling in grammar.markers.get(marker, ()):
            at = prompt.rfind(spelling)
            if at > last_at:
                last_at, closes = at, is_end
    for boundary in grammar.boundaries:
        if prompt.rfind(boundary) > last_at:
            return False
    return closes


def read_reasoning(
    grammar: Grammar,
    text: str,
    dropped: frozenset[str] = frozenset(),
    prompt: str | None = None,
) -> tuple[str | None, str | None]:
    """vLLM's `extract_reasoning` for an engine parser: (reasoning, content)."""
    start = State.CONTENT if prompt_closes_reasoning(grammar, prompt) else grammar.start
    events = run(grammar, text, start, skip_tools=True, dropped=dropped)
    reasoning = "".join(e.value for e in events if e.kind == REASONING)
    if grammar.strip_trailing_reasoning:
        reasoning = reasoning.rstrip()
    content = "".join(e.value for e in events if e.kind == TEXT)
    return reasoning or None, content or None
