"""The markers DeepSeek's tool-call format uses, and helpers both DeepSeek parsers share."""

from __future__ import annotations

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"


class Later:
    """The first place of `needle` at or after a position, for positions that only grow:
    each answer reuses the last search, so a whole scan stays linear."""

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle = text, needle
        self.found = -2  # not searched yet

    def at_or_after(self, position: int) -> int:
        if self.found == -1 or (self.found >= position):
            return self.found
        self.found = self.text.find(self.needle, position)
        return self.found


def calls_note(parser: str, text: str, count: int) -> tuple[str, ...]:
    """A note when vLLM read fewer calls than the answer opens."""
    opened = text.count(CALL_BEGIN)
    if count >= opened:
        return ()
    missing = opened - count
    return (
        f"{missing} of the {opened} `<｜tool▁call▁begin｜>` blocks do not match the layout "
        f"vLLM's {parser} parser expects, so it drops them; it still reports tool calls.",
    )
