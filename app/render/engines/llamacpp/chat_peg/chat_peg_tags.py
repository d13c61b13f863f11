"""The tags of llama.cpp's chat PEG builder (common/chat-peg-parser.cpp), and the
builder's tag and helper methods.

The chat mapper (`chat_peg_mapper`) reads these tags: reasoning, content, tool,
tool-open, tool-name, tool-args, tool-arg-name, ... Below the tool-call layouts
(`chat_peg_tools`), which build with them, and the whole builder (`chat_peg`).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.render.engines.llamacpp.peg.peg_builder import Builder, P
from app.render.engines.llamacpp.peg.peg_parsers import SPACE

REASONING = "reasoning"
CONTENT = "content"
TOOL = "tool"
TOOL_OPEN = "tool-open"
TOOL_CLOSE = "tool-close"
TOOL_ID = "tool-id"
TOOL_NAME = "tool-name"
TOOL_ARGS = "tool-args"
TOOL_ARG = "tool-arg"
TOOL_ARG_OPEN = "tool-arg-open"
TOOL_ARG_CLOSE = "tool-arg-close"
TOOL_ARG_NAME = "tool-arg-name"
TOOL_ARG_VALUE = "tool-arg-value"
#: For arguments the schema declares as strings: never read as a JSON container.
TOOL_ARG_STRING_VALUE = "tool-arg-string-value"

#: permute() spells out every order up to this many parsers, past it only the given one.
MAX_PERMUTE = 6


class ChatTagBuilder(Builder):
    """common_chat_peg_builder's tags and helpers: the PEG builder the tool-call layouts
    (`chat_peg_tools`) compose with; `chat_peg.ChatBuilder` adds the layouts."""

    def reasoning(self, p: P) -> P:
        return self.tag(REASONING, p)

    def content(self, p: P) -> P:
        return self.tag(CONTENT, p)

    def tool(self, p: P) -> P:
        return self.tag(TOOL, p)

    # The markers and names are atomic: a half-written one makes no node.
    def tool_open(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_OPEN, p))

    def tool_close(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_CLOSE, p))

    def tool_id(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_ID, p))

    def tool_name(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_NAME, p))

    def tool_args(self, p: P) -> P:
        return self.tag(TOOL_ARGS, p)

    def tool_arg(self, p: P) -> P:
        return self.tag(TOOL_ARG, p)

    def tool_arg_open(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_ARG_OPEN, p))

    def tool_arg_close(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_ARG_CLOSE, p))

    def tool_arg_name(self, p: P) -> P:
        return self.atomic(self.tag(TOOL_ARG_NAME, p))

    def tool_arg_value(self, p: P) -> P:
        return self.tag(TOOL_ARG_VALUE, p)

    def tool_arg_string_value(self, p: P) -> P:
        return self.tag(TOOL_ARG_STRING_VALUE, p)

    def tool_arg_json_value(self, p: P) -> P:
        return self.tag(TOOL_ARG_VALUE, p)

    def permute(self, rule_prefix: str, parsers: Sequence[P]) -> P:
        """Every parser once, in any order (one rule per set of parsers still to come)."""
        if not parsers:
            return self.eps()
        if len(parsers) == 1 or len(parsers) > MAX_PERMUTE:
            return self.sequence(*parsers)
        rules: dict[int, P] = {}

        def remaining_of(remaining: int) -> P:
            if remaining == 0:
                return self.eps()
            if remaining in rules:
                return rules[remaining]
            alternatives = self.choice()
            for i, parser in enumerate(parsers):
                if remaining & (1 << i):
                    alternatives = alternatives | (parser + remaining_of(remaining & ~(1 << i)))
            rules[remaining] = self.rule(f"{rule_prefix}-{remaining}", alternatives)
            return rules[remaining]

        return remaining_of((1 << len(parsers)) - 1)

    def prefix(self, s: str, delimiter: str = "") -> P:
        """A literal of `s` up to `delimiter` (all of `s` without one)."""
        if not s:
            return self.eps()
        if not delimiter:
            return self.literal(s)
        cut = s.find(delimiter)
        return self.literal(s if cut == -1 else s[:cut])

    def optspace(self, tag: str) -> P:
        """The literal `tag` with each of its leading and trailing spaces optional."""
        body = tag.strip(SPACE)
        lead = len(tag) - len(tag.lstrip(SPACE)) if body else len(tag)
        trail = lead + len(body) if body else len(tag)
        parser = self.eps()
        for char in tag[:lead]:
            parser = parser + self.optional(self.literal(char))
        parser = parser + self.literal(tag[lead:trail])
        for char in tag[trail:]:
            parser = parser + self.optional(self.literal(char))
        return parser
