"""Where each message's part of a prompt ends, found by rendering (sandbox worker side).

A template gives no map from its output back to the messages, and searching the prompt
for a message's text fails on templates that rewrite it (strip reasoning, prepend the
system text to the first user turn, trim). What a chat client would send is sound
instead: the conversation up to message k, rendered with the same options but without
the generation prompt, is where message k's part ends, as far as it agrees with the whole
prompt. So message k ends at the length of the common prefix of that render and the
whole prompt. A template that changes earlier turns once later ones exist (reasoning
dropped from past answers) moves the end to where the two first differ, inside the
turn it rewrites; that is where the rewritten text begins, and the counts still add up.

It costs one render per message, so it runs only for the Tokens view, for at most
`MAX_MESSAGES` messages, in one worker task within the usual limits.
"""

from __future__ import annotations

from dataclasses import replace

from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from app.render.limits import RenderLimits
from app.text import common_prefix_length

#: Conversations with more messages get no per-message counts (one render per message).
MAX_MESSAGES = 400


def message_ends(request: RenderRequest, prompt: str, limits: RenderLimits) -> list[int | None]:
    """For each message, where its part of `prompt` (the render of `request`) ends; None
    where the conversation up to it does not render on its own."""
    ends: list[int | None] = []
    options = {"add_generation_prompt": False, "continue_final_message": False}
    for count in range(1, len(request.messages) + 1):
        partial = replace(request, messages=request.messages[:count], **options)
        try:
            text = engines.render(partial, limits).prompt
        except TemplateProblem:
            ends.append(None)
            continue
        ends.append(common_prefix_length(text, prompt))
    # Ends never go backwards: a later message cannot end before an earlier one.
    highest = 0
    for index, end in enumerate(ends):
        if end is not None:
            highest = max(highest, end)
            ends[index] = highest
    return ends
