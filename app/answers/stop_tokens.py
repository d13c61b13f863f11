"""A completion as the runtime's parser gets it: without the stop token that ended it.

A runtime stops generating at a stop token (the model's EOS, or the end-of-turn marker
its template writes after an assistant message: `<|im_end|>`, `<|eot_id|>`,
`<end_of_turn>`, ...) and never hands that token to its parser. A completion copied
from a raw log shows it all the same, at its end. So a completion that ends with one of
this template's stop tokens is read without it, and the Response view says so; one in
the middle stays, since what a runtime does with it there is what it does.
"""

from __future__ import annotations

from app.answers.menu import END_MARKERS


def stop_tokens(template: str, special_tokens: dict[str, str]) -> list[str]:
    """The template's stop tokens: the EOS its special tokens name, and every known
    end-of-turn marker the template writes; longest first, so that of two that both end a
    completion the longer one is taken."""
    tokens = {marker for marker in END_MARKERS if marker in template}
    if eos := special_tokens.get("eos_token"):
        tokens.add(eos)
    return sorted(tokens, key=len, reverse=True)


def cut_stop_token(
    completion: str, template: str, special_tokens: dict[str, str]
) -> tuple[str, str | None]:
    """The completion up to a stop token it ends with (blanks after it included), and
    that token; the completion unchanged and None when it ends with none."""
    ended = completion.rstrip()
    for token in stop_tokens(template, special_tokens):
        if ended.endswith(token):
            return ended[: len(ended) - len(token)], token
    return completion, None
