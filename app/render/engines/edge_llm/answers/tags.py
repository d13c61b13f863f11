"""The XML-like calls Edge-LLM reads inside a block: Qwen's `<function=NAME>` with its
`<parameter=NAME>` values, and Muse-Glimmer's `<atem:invoke name="NAME">` with its
`<atem:parameter name="NAME">` values.

Edge-LLM finds each with a regular expression (`finditer`, left to right): an opener, a
name, then the shortest body up to the closer. These find the same matches by searching
forward only: a closer (or a closing quote, or ">") missing after one opener is missing
after every later one, so the search stops there instead of trying each later opener
against the rest of the text.
"""

from __future__ import annotations

from app.render.engines.edge_llm.answers.markup import Forward


def named_tags(text: str, opener: str, closer: str) -> list[tuple[str, str]]:
    """`(name, body)` of each match of `OPENER([^>]+)>(.*?)CLOSER`: the name runs from
    the opener to the next ">" (one character at least), the body to the next closer."""
    found: list[tuple[str, str]] = []
    opens, angles, closes = Forward(text, opener), Forward(text, ">"), Forward(text, closer)
    pos = 0
    while (at := opens.at_or_after(pos)) != -1:
        name_at = at + len(opener)
        if name_at < len(text) and text[name_at] == ">":
            pos = at + 1  # an empty name: no match at this opener
            continue
        angle = angles.at_or_after(name_at + 1) if name_at < len(text) else -1
        end = closes.at_or_after(angle + 1) if angle != -1 else -1
        if end == -1:
            break
        found.append((text[name_at:angle], text[angle + 1 : end]))
        pos = end + len(closer)
    return found


def quoted_tags(text: str, opener: str, closer: str) -> list[tuple[str, str]]:
    """`(name, body)` of each match of `OPENER\\s+name="([^"]+)">(.*?)CLOSER`: whitespace
    after the opener, a quoted name (one character at least) followed by ">", the body to
    the next closer."""
    found: list[tuple[str, str]] = []
    opens, quotes, closes = Forward(text, opener), Forward(text, '"'), Forward(text, closer)
    pos = 0
    while (at := opens.at_or_after(pos)) != -1:
        spaces = at + len(opener)
        name_at = spaces
        while name_at < len(text) and text[name_at].isspace():
            name_at += 1
        if name_at == spaces or not text.startswith('name="', name_at):
            pos = at + 1
            continue
        name_at += len('name="')
        quote = quotes.at_or_after(name_at)
        if quote == -1:
            break  # no closing quote after this name, nor after any later one
        if quote == name_at or not text.startswith(">", quote + 1):
            pos = at + 1
            continue
        end = closes.at_or_after(quote + 2)
        if end == -1:
            break
        found.append((text[name_at:quote], text[quote + 2 : end]))
        pos = end + len(closer)
    return found
