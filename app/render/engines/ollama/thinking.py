"""Ollama's thinking parser for Go templates (`thinking/parser.go` at fb30760), written anew.

With thinking on and a thinking-capable template (`gotemplate.runner.thinking_tags`),
/api/chat splits the model's text at the inferred tags: leading white space is skipped,
an answer that does not open with the opening tag has no thinking, the thinking runs to
the closing tag, and the white space after it is dropped. A prompt that already ends
with the opening tag counts as having opened it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The Latin-1 characters Go's unicode.IsSpace takes as space (Python's str.isspace
#: also takes the separators \x1c-\x1f, which Go does not).
_LATIN1_SPACE = frozenset("\t\n\v\f\r \x85\xa0")


def _is_space(char: str) -> bool:
    """Go's unicode.IsSpace."""
    if ord(char) < 0x100:
        return char in _LATIN1_SPACE
    return char.isspace()


def lstrip_space(text: str) -> str:
    """`text` without its leading white space, as Go's strings.TrimLeftFunc(IsSpace)."""
    start = 0
    while start < len(text) and _is_space(text[start]):
        start += 1
    return text[start:]


def _overlap(text: str, tag: str) -> int:
    """The longest end of `text` that starts `tag`."""
    for size in range(min(len(tag), len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


@dataclass
class ThinkingParser:
    """One answer's thinking state, fed chunk by chunk (`add`)."""

    opening: str
    closing: str
    state: str = "looking"  # looking, opened, thinking, closed, done
    held: str = ""

    def add(self, text: str) -> tuple[str, str]:
        """The thinking and the content to send for one more chunk."""
        self.held += text
        thinking, content = "", ""
        going = True
        while going:
            more_thinking, more_content, going = self._step()
            thinking += more_thinking
            content += more_content
        return thinking, content

    def _step(self) -> tuple[str, str, bool]:
        """One state's work: thinking, content, and whether to go on at once."""
        step = getattr(self, f"_{self.state}")
        return step()  # type: ignore[no-any-return]

    def _looking(self) -> tuple[str, str, bool]:
        """Before the opening tag: skip space, hold a part of the tag, or give up."""
        trimmed = lstrip_space(self.held)
        if trimmed.startswith(self.opening):
            after = lstrip_space(trimmed[len(self.opening) :])
            self.held = after
            self.state = "thinking" if after else "opened"
            return "", "", True
        if self.opening.startswith(trimmed):  # a part of the tag, or only space so far
            return "", "", False
        self.state, content, self.held = "done", self.held, ""
        return "", content, False

    def _opened(self) -> tuple[str, str, bool]:
        """Just after the opening tag: its space is dropped."""
        trimmed, self.held = lstrip_space(self.held), ""
        if not trimmed:
            return "", "", False
        self.state, self.held = "thinking", trimmed
        return "", "", True

    def _thinking(self) -> tuple[str, str, bool]:
        """Inside the thinking: up to the closing tag."""
        held = self.held
        if self.closing in held:
            thinking, _, rest = held.partition(self.closing)
            rest = lstrip_space(rest)
            self.held = ""
            self.state = "done" if rest else "closed"
            return thinking, rest, False
        size = _overlap(held, self.closing)
        # A possible start of the closing tag waits for the next chunk.
        self.held = held[len(held) - size :] if size else ""
        return held[: len(held) - size], "", False

    def _closed(self) -> tuple[str, str, bool]:
        """Just after the closing tag: its space is dropped."""
        trimmed, self.held = lstrip_space(self.held), ""
        if trimmed:
            self.state = "done"
        return "", trimmed, False

    def _done(self) -> tuple[str, str, bool]:
        """After the thinking: everything is content."""
        content, self.held = self.held, ""
        return "", content, False
