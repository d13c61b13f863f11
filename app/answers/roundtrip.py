"""The round trip: the parsed answer sent back, and whether the next prompt still starts
with the last one.

A server keeps the tokens of the last request in its KV cache; the next request of the
same conversation reuses them only as far as its prompt starts with *old prompt +
completion*. A template that drops reasoning from the history, writes the arguments it
gets back with other spacing or key order, or closes the turn differently breaks that
prefix, and the server computes the whole conversation again at every turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from app.errors import bounded_text
from app.render.answer import ParsedAnswer
from app.render.core import RenderRequest
from app.text import common_prefix_length

#: The turn that follows the answer in the next request: a result for each tool call,
#: else the user's next question. What it says does not matter; that it comes after
#: the answer does (templates write the last assistant turn differently from earlier ones).
NEXT_QUESTION = "Thank you. And the capital of Spain?"
TOOL_RESULT = '{"ok": true}'
#: What closes a thinking block in the completions of the template families that have
#: one: a difference before it is in the thinking.
REASONING_ENDS = ("</think>", "◁/think▷", "<|end|><|start|>assistant<|channel|>final")
#: Characters shown on each side of the first difference.
CONTEXT_CHARS = 60


@dataclass(frozen=True)
class RoundTrip:
    """Whether the next request's prompt starts with the last prompt and its completion."""

    #: True: the cache is reused; False: it breaks at `at`; None: not checked (`reason`).
    reused: bool | None
    reason: str
    #: The first character of the next prompt that differs from old prompt + completion.
    at: int | None = None
    #: Up to `CONTEXT_CHARS` around `at`: what the cache holds, what the next prompt has.
    expected: str = ""
    actual: str = ""
    #: Whether `at` falls in the history before the completion (else in the completion).
    in_history: bool = False

    def __post_init__(self) -> None:
        # A reason may quote a template's error, which may quote anything: cut here, as
        # every sentence that leaves a task is.
        object.__setattr__(self, "reason", bounded_text(self.reason, "No reason given."))

    @property
    def shared_context(self) -> int:
        """How many characters of `expected` and `actual` come before `at` (the same on
        both sides)."""
        return min(self.at or 0, CONTEXT_CHARS)

    def to_json(self) -> dict[str, Any]:
        return {
            "reused": self.reused,
            "reason": self.reason,
            "at": self.at,
            "expected": self.expected,
            "actual": self.actual,
            "in_history": self.in_history,
        }


def sent_back(answer: ParsedAnswer, openai_client: bool) -> dict[str, Any] | None:
    """The message a client sends back next turn: the one the API returned, with the
    arguments as objects for a library (transformers) and as JSON text for a server's
    OpenAI client."""
    message = answer.message()
    if message is None or openai_client:
        return message
    calls = []
    for call in message.get("tool_calls", []):
        try:
            arguments = json.loads(call["function"]["arguments"])
        except ValueError:
            arguments = call["function"]["arguments"]
        calls.append({**call, "function": {**call["function"], "arguments": arguments}})
    return {**message, "tool_calls": calls} if calls else message


def next_request(request: RenderRequest, message: dict[str, Any]) -> RenderRequest:
    """The conversation's next request: the answer, then the turn that follows it."""
    follow: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": call.get("id", ""), "content": TOOL_RESULT}
        for call in message.get("tool_calls", [])
    ] or [{"role": "user", "content": NEXT_QUESTION}]
    return replace(request, messages=[*request.messages, message, *follow])


def unchecked(request: RenderRequest, answer: ParsedAnswer | None) -> str | None:
    """Why the round trip cannot be checked for this request and answer, if so."""
    if answer is None:
        return "No message to send back."
    if answer.error is not None:
        return "The server answers an error, so there is no message to send back."
    if not request.add_generation_prompt or request.continue_final_message:
        return (
            "The prompt does not ask for a new assistant turn (add_generation_prompt is off "
            "or the final message is continued), so there is no next turn to compare."
        )
    return None


def compare(prompt: str, completion: str, next_prompt: str, answer: ParsedAnswer) -> RoundTrip:
    """Whether `next_prompt` starts with `prompt + completion`, and if not, where and why."""
    expected = prompt + completion
    if next_prompt.startswith(expected):
        return RoundTrip(True, "The next prompt starts with this prompt and its completion.")
    at = common_prefix_length(expected, next_prompt)
    return RoundTrip(
        False,
        _why(prompt, completion, next_prompt, at, answer),
        at=at,
        expected=_around(expected, at),
        actual=_around(next_prompt, at),
        in_history=at < len(prompt),
    )


def _around(text: str, at: int) -> str:
    return text[max(0, at - CONTEXT_CHARS) : at + CONTEXT_CHARS]


def _why(prompt: str, completion: str, next_prompt: str, at: int, answer: ParsedAnswer) -> str:
    """The likeliest reason, in words, for a prefix that breaks at `at`."""
    where = f"at character {at:,}"
    if at < len(prompt):
        return (
            f"The next prompt writes the history differently from this prompt ({where}, "
            "before the completion): the generation prompt or an earlier turn is not "
            "written back the same way."
        )
    written_back = next_prompt[len(prompt) :]
    thinking_ends = [completion.find(end, at - len(prompt)) for end in REASONING_ENDS]
    # Reasoning that is only whitespace (vLLM's reading of an empty block) is no reasoning
    # a template writes back: the block is dropped as an empty one is.
    reasoning = (answer.reasoning_content or "").strip()
    if any(index >= 0 for index in thinking_ends) and not reasoning:
        return (
            f"The template drops the thinking block from the history ({where}): the model "
            "wrote one (empty), the next prompt has the answer without it."
        )
    if reasoning and reasoning not in written_back:
        return (
            f"The template drops the reasoning from the history ({where}): the next "
            "prompt has the answer without the thinking the model wrote."
        )
    if answer.tool_calls:
        return (
            f"The template writes the tool call back differently from how the model wrote "
            f"it ({where}): the arguments re-serialised with other spacing or key order, or "
            "another layout."
        )
    return (
        f"The template writes the answer back differently from how the model wrote it "
        f"({where}): a turn marker or whitespace differs."
    )
