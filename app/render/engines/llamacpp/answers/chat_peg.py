"""llama.cpp's chat PEG builder (common/chat-peg-parser.cpp, `common_chat_peg_builder`).

A `Builder` with the tags the chat mapper (`chat_peg_mapper`) reads: reasoning, content,
tool, tool-open, tool-name, tool-args, tool-arg-name, ... and the helpers chat.cpp's
handlers and the autoparser compose grammars with (`permute`, `optspace`, `prefix`, and
the tool-call layouts in `chat_peg_tools`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.render.engines.llamacpp.answers import chat_peg_tools
from app.render.engines.llamacpp.answers.peg import Arena
from app.render.engines.llamacpp.answers.peg_builder import Builder, P
from app.render.engines.llamacpp.answers.peg_parsers import SPACE

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


class ChatBuilder(Builder):
    """common_chat_peg_builder: the PEG builder with the chat tags and helpers."""

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

    def standard_json_tools(
        self,
        section_start: str,
        section_end: str,
        tools: Any,
        parallel_tool_calls: bool,
        force_tool_calls: bool,
        name_key: str = "",
        args_key: str = "",
        array_wrapped: bool = False,
        function_is_key: bool = False,
        call_id_key: str = "",
        gen_call_id_key: str = "",
        parameters_order: Sequence[str] = (),
        accept_openai_wrapper: bool = False,
    ) -> P:
        """JSON tool calls between `section_start` and `section_end` (chat_peg_tools)."""
        return chat_peg_tools.standard_json_tools(
            self, section_start, section_end, tools, parallel_tool_calls, force_tool_calls,
            name_key, args_key, array_wrapped, function_is_key, call_id_key, gen_call_id_key,
            list(parameters_order), accept_openai_wrapper,
        )  # fmt: skip

    def standard_constructed_tools(
        self, markers: dict[str, str], tools: Any, parallel_tool_calls: bool, force_tool_calls: bool
    ) -> P:
        """XML-style tool calls: <tool_call><function=name><param=k>v</param>... ."""
        return chat_peg_tools.standard_constructed_tools(
            self, markers, tools, parallel_tool_calls, force_tool_calls
        )

    def python_style_tool_calls(
        self, tools: Any, parallel_tool_calls: bool, allow_json_literals: bool
    ) -> P:
        """Python-style calls: [name(arg="v", n=1), ...] (LFM2)."""
        return chat_peg_tools.python_style_tool_calls(
            self, tools, parallel_tool_calls, allow_json_literals
        )


def build_chat_peg_parser(fn: Callable[[ChatBuilder], P]) -> Arena:
    """Build a chat grammar whose root is `fn(builder)` (`build_chat_peg_parser`)."""
    builder = ChatBuilder()
    builder.set_root(fn(builder))
    return builder.build()
