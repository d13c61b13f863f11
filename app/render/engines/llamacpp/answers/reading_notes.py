"""Sentences on what llama-server's parser made of a completion that it does not say itself.

llama.cpp answers a message or an error and nothing else. These notes (ours, never part
of its answer) say what a user cannot see from that answer alone: text after the part
the grammar read, which llama.cpp drops without checking that the whole completion was
read; markup left in the content; tool-call arguments that are not JSON, which it passes
on as they are; and, when the parse fails, where in the completion it got stuck.
"""

from __future__ import annotations

import json

from app.render.engines.llamacpp.apply.chat_msg import ChatToolCall
from app.render.engines.llamacpp.apply.types import ChatParams

#: How many characters of the completion a note quotes.
QUOTED = 40


def quote(text: str) -> str:
    """The first `QUOTED` characters of `text` for a note, in backticks, with line breaks
    and tabs written as escapes so the quote stays on one line."""
    head = text[:QUOTED].replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    head = head.replace("`", "'")  # a backtick would end the quote early
    return f"`{head}…`" if len(text) > QUOTED else f"`{head}`"


def _in_completion(position: int, prompt_length: int, total: int) -> int:
    """A position in the parsed text (generation prompt + completion) as an offset into
    the completion, clamped to it."""
    return min(max(position - prompt_length, 0), total)


def _is_marker(text: str, source: str) -> bool:
    """Whether `text` is one piece of the template's markup: a tag-like word, without
    spaces, that the template source writes (`<|eot|>`, `</assistant>`)."""
    return (
        2 < len(text) <= QUOTED
        and text[0] in "<[" and text[-1] in ">]"
        and not any(char.isspace() for char in text)
        and text in source
    )  # fmt: skip


def dropped_tail(
    completion: str, prompt_length: int, parsed_to: int, grammar: str, source: str
) -> list[str]:
    """A sentence when the parse stopped before the end of the completion: llama.cpp
    never checks that it read everything, so the rest is silently lost. A tail that is
    one of the template's markers (`source`: the template) is named as such."""
    stop = _in_completion(parsed_to, prompt_length, len(completion))
    if stop >= len(completion):
        return []
    rest = completion[stop:]
    if not rest.strip():
        what = "; it is whitespace only"
    elif _is_marker(rest.strip(), source):
        what = f"; it is only the `{rest.strip()}` marker"
    else:
        what = ", so that text is in neither the content nor the tool calls"
    return [
        f"llama-server's parser stops at character {stop:,} of {len(completion):,} and "
        f"drops the rest ({quote(rest)}, {len(rest):,} characters): the {grammar} grammar "
        f"ends there, and llama.cpp does not check that the whole completion was read{what}."
    ]


def read_nothing(completion: str, prompt_length: int, parsed_to: int) -> list[str]:
    """Why the raw text is the content: the parse put nothing into the message."""
    stop = _in_completion(parsed_to, prompt_length, len(completion))
    if stop >= len(completion):
        where = "it stops inside unfinished markup"
    else:
        at = "right at the start" if stop == 0 else f"at character {stop:,}"
        where = f"its grammar stops {at}, before {quote(completion[stop:])}"
    return [
        f"The parser read nothing from the completion ({where}), so llama-server answers "
        "the raw text as the content."
    ]


def parse_failure(completion: str, prompt_length: int, furthest: int, grammar: str) -> list[str]:
    """Where a failed parse got stuck: the furthest the grammar read, and what is there."""
    stuck = _in_completion(furthest, prompt_length, len(completion))
    if stuck >= len(completion):
        return [
            f"The {grammar} grammar reads to the end of the completion and still fails: "
            "something it requires (a closing marker, or a tool call the request requires) "
            "is missing."
        ]
    allowed = f"is not what the {grammar} grammar allows there"
    if stuck == 0:
        return [
            "llama-server's parser cannot read even the start of the completion: "
            f"{quote(completion)} {allowed}."
        ]
    return [
        f"llama-server's parser reads the completion only up to character {stuck:,} of "
        f"{len(completion):,}: {quote(completion[stuck:])} {allowed}."
    ]


def markup_left(content: str, params: ChatParams, has_tools: bool) -> list[str]:
    """A sentence when the content still holds the template's markup (its preserved
    tokens: reasoning, content and tool-call markers)."""
    left = [token for token in params.preserved_tokens if len(token) > 1 and token in content]
    if not left:
        return []
    token = left[0]
    thinking = {params.thinking_start_tag, *params.thinking_end_tags}
    sentence = (
        f"The content holds `{token}`, markup of this template that llama-server's parser "
        "did not read as such, so it is returned as text"
    )
    if not has_tools and token not in thinking:
        sentence += " (the request declares no tools, so no tool calls are read at all)"
    return [sentence + "."]


def _json_problem(text: str) -> str | None:
    """Why `text` is not JSON, in words with the character offset; None when it is."""
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        reason = error.msg[0].lower() + error.msg[1:]
        joint = " char" if reason.endswith(" at") else " at char"
        return f"{reason}{joint} {error.pos:,}"
    except RecursionError:
        return "it nests too deeply to check"
    except ValueError as error:  # e.g. a number too long to convert
        return str(error)
    return None


def arguments_not_json(calls: list[ChatToolCall], params: ChatParams) -> list[str]:
    """A sentence for each tool call whose arguments text is not valid JSON: llama.cpp's
    lenient JSON reader let broken JSON run on, often over the closing markup."""
    notes = []
    for call in calls:
        problem = _json_problem(call.arguments)
        if problem is None:
            continue
        markers = [t for t in params.preserved_tokens if len(t) > 1 and t in call.arguments]
        included = f", `{markers[0]}` included" if markers else ""
        notes.append(
            f"The arguments of {call.name} are not valid JSON ({problem}); llama-server "
            f"passes them on as they are{included}."
        )
    return notes
