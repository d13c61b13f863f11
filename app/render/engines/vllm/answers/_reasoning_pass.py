"""vLLM's reasoning pass for an engine parser (`extract_reasoning`): the reasoning and the
content of a whole answer, read with a model's table (`_state_machine.Grammar`).

It is `_state_machine.run` with `skip_tools`, keeping only the text reported as reasoning
and as content: a reasoning pass never enters tool markup, so the state is content or
reasoning throughout and each piece goes straight to its list, without events (100 kB of
`<tool_call>` openers are 10 000 appends; with an event each, they took 40 ms).
"""

from __future__ import annotations

from app.render.engines.vllm.answers._state_machine import (
    DROP,
    REASONING,
    REASONING_END,
    TEXT,
    Grammar,
    State,
    splitter_for,
)


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
    state = State.CONTENT if prompt_closes_reasoning(grammar, prompt) else grammar.start
    reasoning: list[str] = []
    content: list[str] = []
    into = reasoning if state is State.REASONING else content
    steps, in_skipped_call, at = grammar.steps[state], False, 0
    in_content = grammar.steps[State.CONTENT]  # looked up once: an Enum hashes slowly
    splitter, names = splitter_for(grammar, text, dropped)
    for match in splitter.finditer(text):
        start, value = match.start(), match.group()
        if start > at:
            into.append(text[at:start])
        at = match.end()
        marker = names[value]
        if marker == DROP:
            continue
        step = steps[marker]
        if step.move is None:
            if step.exits:
                in_skipped_call = False
        elif step.tool and not (step.exits and not step.opens and not in_skipped_call):
            # Tool markup stays text, but a call that starts in the reasoning ends it.
            in_skipped_call = step.opens or (in_skipped_call and not step.exits)
            if step.ends_reasoning:
                steps, into = in_content, content
        else:
            state = step.move.to
            steps, into = grammar.steps[state], reasoning if state is State.REASONING else content
            for event in step.move.events:
                if event in (TEXT, REASONING):
                    (content if event == TEXT else reasoning).append(value)
            continue
        into.append(value)
    into.append(text[at:])
    thought = "".join(reasoning)
    if grammar.strip_trailing_reasoning:
        thought = thought.rstrip()
    return thought or None, "".join(content) or None
