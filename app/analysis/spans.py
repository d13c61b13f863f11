"""Where each message's part of a prompt ends, found by rendering (sandbox worker side).

A template gives no map from its output back to the messages, and searching the prompt
for a message's text fails on templates that rewrite it (strip reasoning, prepend the
system text to the first user turn, trim). What a chat client would send is sound
instead: the conversation up to message k, rendered with the same options but without
the generation prompt, ends where message k's part of the whole prompt ends.

Templates write a last message differently, though: Qwen3 gives it an empty
`<think></think>` block, Mistral's put the tool list before the last user turn, QwQ
keeps its reasoning. So where that render stops agreeing with the whole prompt is not
yet its end: when the prompt goes on there (after blanks at most) with the end of the
render's rest, the message ends after that (the tool call after Qwen3's empty block).
Only there: text found further on belongs to a later message (the next tool result in
a turn both share). Otherwise (the render closes with an EOS the whole prompt does not
have) the message ends where the two stop agreeing, never inside a marker such as
`<|im_end|>` or `<tool_call>`.

It costs one render per message, so it runs only for the Tokens view, for at most
`MAX_MESSAGES` messages, in one worker task within the usual limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from app.render.limits import RenderLimits
from app.text import common_prefix_length, marker_around, template_markers

#: Conversations with more messages get no per-message counts (one render per message).
MAX_MESSAGES = 400
#: Blanks the whole prompt may have where the render of a last message goes on (Hermes 3
#: writes a newline before the `<|im_end|>` of a tool turn that is not the last) are
#: looked for this far.
RESUME_SLACK = 64
#: Shorter and shorter ends of a render's rest are tried this many times at most.
RESUME_TRIES = 64


def message_ends(request: RenderRequest, prompt: str, limits: RenderLimits) -> list[int | None]:
    """For each message, where its part of `prompt` (the render of `request`) ends; None
    where the conversation up to it does not render on its own."""
    markers = _markers(request)
    ends: list[int | None] = []
    options = {"add_generation_prompt": False, "continue_final_message": False}
    for count in range(1, len(request.messages) + 1):
        partial = replace(request, messages=request.messages[:count], **options)
        try:
            text = engines.render(partial, limits).prompt
        except TemplateProblem:
            ends.append(None)
            continue
        ends.append(end_in(prompt, text, markers))
    # Ends never go backwards: a later message cannot end before an earlier one.
    highest = 0
    for index, end in enumerate(ends):
        if end is not None:
            highest = max(highest, end)
            ends[index] = highest
    return ends


def _markers(request: RenderRequest) -> tuple[str, ...]:
    """The markers a message's end must not cut: the template's own and the special
    tokens (a BOS or EOS is text in the prompt, like any marker)."""
    tokens = (token for token in request.special_tokens.values() if token)
    return tuple({*template_markers(request.template), *tokens})


def end_in(prompt: str, text: str, markers: Sequence[str] = ()) -> int:
    """Where `text` (the conversation up to a message, rendered alone) ends in `prompt`:
    at its own end when it is a prefix of `prompt`; otherwise where the prompt goes on
    with the end of its rest (see the module's docstring), or where the two stop
    agreeing, outside any marker."""
    agreed = common_prefix_length(text, prompt)
    if agreed == len(text):
        return agreed
    agreed = _before_markers(agreed, (text, prompt), markers)
    resumed = _resumed(text[agreed:], prompt, agreed, markers)
    return agreed if resumed is None else resumed


def _before_markers(position: int, texts: Sequence[str], markers: Sequence[str]) -> int:
    """`position` moved back to the start of any marker of `texts` it falls inside: a
    render and the prompt that agree up to `<|` of `<|return|>` and `<|end|>` agree up
    to before the marker."""
    moved = True
    while moved:
        moved = False
        for text in texts:
            start = marker_around(text, position, markers)
            if start is not None:
                position, moved = start, True
    return position


def _resumed(rest: str, prompt: str, start: int, markers: Sequence[str]) -> int | None:
    """Where `prompt` goes on at `start`, or after the blanks there, with the longest end
    of `rest` that holds more than blanks and ends outside a marker; None if it does not.

    Only there: a later message's text found further on (the next tool result in a turn
    that both share) is that message's, not this one's."""
    after = prompt[start : start + RESUME_SLACK]
    blanks = len(after) - len(after.lstrip())
    for at in dict.fromkeys((start, start + blanks)):
        length = _longest_end_at(rest, prompt, at)
        end = at + length
        if rest[len(rest) - length :].strip() and marker_around(prompt, end, markers) is None:
            return end
    return None


def _longest_end_at(rest: str, prompt: str, at: int) -> int:
    """The length of the longest end of `rest` that `prompt` holds at `at` (0 if none):
    each length at which the prompt there has the last character of `rest` is tried,
    longest first, `RESUME_TRIES` of them at most."""
    window = prompt[at : at + len(rest)]
    last = window.rfind(rest[-1:]) if rest else -1
    for _ in range(RESUME_TRIES):
        if last == -1:
            break
        if rest.endswith(window[: last + 1]):
            return last + 1
        last = window.rfind(rest[-1], 0, last)
    return 0
