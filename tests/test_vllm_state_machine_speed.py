"""The vLLM engine parser's fast paths read exactly as the plain event loop they replaced.

`run` looks each marker up in a per-state table (`Grammar.steps`), and `read_reasoning`
keeps only the reasoning and the content instead of building events (issue 41: 100 kB of
`<tool_call>` openers took 40 ms). The references below are the loop as it was (one
event per piece, joined at the end); generated texts of every grammar's markers, stray
special tokens and plain text must give the same events and the same reading.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.render.engines.vllm.answers import (
    _dsml,
    _gemma4,
    _glm_grammar,
    reasoning_qwen3,
    tool_kimi_k2,
    tool_minimax_m2,
    tool_mistral,
)
from app.render.engines.vllm.answers._reasoning_pass import prompt_closes_reasoning, read_reasoning
from app.render.engines.vllm.answers._state_machine import (
    CALL_END,
    CALL_START,
    DROP,
    REASONING,
    REASONING_END,
    TEXT,
    TEXT_EVENTS,
    TOOL_STATES,
    Event,
    Grammar,
    State,
    pieces,
    run,
)

GRAMMARS: list[Grammar] = [
    reasoning_qwen3.GRAMMAR,
    _gemma4.GRAMMAR,
    tool_minimax_m2.GRAMMAR,
    tool_mistral.GRAMMAR,
    _dsml.V32,
    *_dsml.V4.values(),
    *_glm_grammar.GRAMMARS.values(),
    *tool_kimi_k2.GRAMMARS.values(),
]
#: Special tokens a tokenizer may have besides the grammar's (some of them grammars' own).
SPECIAL = ("<|im_end|>", "<|endoftext|>", "<think>", "<|im_start|>")
PLAIN = ("a", " ", "\n", "{", '"x": 1}', "<", ">", "think", "</", "|", "=")


def reference_run(
    grammar: Grammar, text: str, start: State, skip_tools: bool, skip_reasoning: bool,
    dropped: frozenset[str],
) -> list[Event]:  # fmt: skip
    """The event loop as it was before the per-state table (one `plain` call a piece)."""
    state, call, in_skipped_call = start, -1, False
    events: list[Event] = []
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

    for marker, value in pieces(grammar, text, dropped):
        if marker is None or marker == DROP:
            if marker is None:
                plain(value)
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
            opens, exits = move.to in TOOL_STATES, marker in grammar.tool_exits
            if not (exits and not opens and not in_skipped_call):
                in_skipped_call = opens or (in_skipped_call and not exits)
                if REASONING_END in move.events:
                    state = State.CONTENT
                    close_run()
                    events.append(Event(REASONING_END, value, call))
                plain(value)
                continue
        state = move.to
        close_run()
        for kind in move.events:
            call += kind == CALL_START
            if kind != TEXT or value:
                events.append(Event(kind, value, call))
    close_run()
    if state in TOOL_STATES and call >= 0:
        events.append(Event(CALL_END, "", call))
    elif state is State.REASONING:
        events.append(Event(REASONING_END, "", call))
    return events


def reference_reasoning(
    grammar: Grammar, text: str, dropped: frozenset[str], prompt: str | None
) -> tuple[str | None, str | None]:
    """`read_reasoning` as it was: the reasoning pass's events, joined by kind."""
    start = State.CONTENT if prompt_closes_reasoning(grammar, prompt) else grammar.start
    events = reference_run(grammar, text, start, True, False, dropped)
    reasoning = "".join(e.value for e in events if e.kind == REASONING)
    if grammar.strip_trailing_reasoning:
        reasoning = reasoning.rstrip()
    content = "".join(e.value for e in events if e.kind == TEXT)
    return reasoning or None, content or None


@st.composite
def texts(draw: st.DrawFn, grammar: Grammar) -> str:
    """Text made of the grammar's marker spellings, special tokens and plain bits."""
    spellings = sorted(grammar.spellings)
    words = st.sampled_from([*spellings, *SPECIAL, *PLAIN]) | st.text(max_size=4)
    return "".join(draw(st.lists(words, max_size=40)))


cases = st.sampled_from(range(len(GRAMMARS))).flatmap(
    lambda at: st.tuples(
        st.just(GRAMMARS[at]),
        texts(GRAMMARS[at]),
        st.frozensets(st.sampled_from(SPECIAL)),
    )
)


def _events(events: list[Event]) -> list[tuple[str, str, int]]:
    return [(e.kind, e.value, e.call) for e in events]


@settings(max_examples=600, deadline=None)
@given(cases, st.sampled_from(list(State)), st.booleans(), st.booleans())
def test_run_reports_the_events_of_the_plain_loop(
    case: tuple[Grammar, str, frozenset[str]], start: State, skip_tools: bool,
    skip_reasoning: bool,
) -> None:  # fmt: skip
    grammar, text, dropped = case
    expected = reference_run(grammar, text, start, skip_tools, skip_reasoning, dropped)
    found = run(
        grammar, text, start, skip_tools=skip_tools, skip_reasoning=skip_reasoning,
        dropped=dropped,
    )  # fmt: skip
    assert _events(found) == _events(expected)


@settings(max_examples=600, deadline=None)
@given(cases, st.sampled_from([None, "<|im_start|>assistant\n<think>\n\n</think>\n\n", "x"]))
def test_read_reasoning_reads_as_the_events_did(
    case: tuple[Grammar, str, frozenset[str]], prompt: str | None
) -> None:
    grammar, text, dropped = case
    assert read_reasoning(grammar, text, dropped, prompt) == reference_reasoning(
        grammar, text, dropped, prompt
    )
