"""Ollama's repair of a GLM tool call's broken argument tags (repairGLM46XML in
model/parsers/glm46.go at ollama/ollama fb30760).

The four tags cycle `<arg_key>` `</arg_key>` `<arg_value>` `</arg_value>`; a missing
one is written where the cycle expects it, and a key written after the function name
with only a space between (no `<arg_key>`) gets its opening tag.
"""

from __future__ import annotations

from app.render.engines.ollama.parsers.message import is_space, trim_left

CYCLE = ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
#: What closes the call after the phase the text ends in.
_CLOSING = {1: "</arg_key><arg_value></arg_value>", 2: "<arg_value></arg_value>", 3: "</arg_value>"}


def _next_tag(text: str) -> tuple[int, str]:
    """The first of the four tags in `text`: (index, tag), or (-1, "")."""
    best, found = -1, ""
    for tag in CYCLE:
        at = text.find(tag)
        if at != -1 and (best == -1 or at < best):
            best, found = at, tag
    return best, found


def _prefix(prefix: str, first: str) -> tuple[str, int]:
    """The text before the first tag: (written out, the phase it leaves)."""
    if first != CYCLE[0]:
        space = next((i for i, ch in enumerate(prefix) if is_space(ch)), -1)
        if space != -1:
            return prefix[:space] + CYCLE[0] + trim_left(prefix[space:]), 1
    return prefix, 0


def repair(text: str) -> str:
    """The call's text with its argument tags made a whole cycle."""
    at, first = _next_tag(text)
    if at == -1:
        return text
    written, phase = _prefix(text[:at], first)
    out, rest = [written], text[at:]
    while rest:
        at, found = _next_tag(rest)
        expected, opening = CYCLE[phase], phase % 2 == 0
        if at == -1:
            if not opening:
                out += [rest, expected]
                phase = (phase + 1) % 4
            break
        if found == expected:
            out += [rest[:at], expected]
            rest, phase = rest[at + len(expected) :], (phase + 1) % 4
            continue
        if opening and at > 0:
            out += [expected, rest[:at]]
            rest, phase = rest[at:], (phase + 1) % 4
            continue
        target = CYCLE.index(found)
        while phase != target:
            if phase % 2 == 1 and (phase + 1) % 4 == target and at > 0:
                out.append(rest[:at])
                rest, at = rest[at:], 0
            out.append(CYCLE[phase])
            phase = (phase + 1) % 4
    return "".join(out) + _CLOSING.get(phase, "")
