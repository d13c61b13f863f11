"""From a chat PEG parse to llama.cpp's message (common_chat_peg_mapper, common_chat_peg_parse).

`peg_parse` is `common_chat_peg_parse`: it parses the generation prompt plus the
completion in LENIENT mode, raises `ChatParseError` with llama.cpp's words when the
grammar fails, and maps the tagged nodes to a `ChatMsg` the way the C++ mapper does:
content and reasoning concatenated, tool arguments kept as the text of a JSON object or
assembled from argument names and values, unclosed braces closed, whitespace-only
reasoning dropped. Formats peg-gemma4 and peg-minimax-m3 have mappers of their own
(`chat_peg_mappers`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.render.engines.llamacpp.apply.chat_msg import (
    ChatMsg,
    ChatToolCall,
    dump_string,
    escape_json_string_inner,
)
from app.render.engines.llamacpp.chat_peg import chat_peg_tags as tags
from app.render.engines.llamacpp.chat_peg.chat_peg import build_chat_peg_parser
from app.render.engines.llamacpp.chat_peg.chat_peg_mappers import (
    Gemma4Mapper,
    MinimaxM3Mapper,
    deep,
)
from app.render.engines.llamacpp.peg.peg import FLAG_LENIENT, Arena, AstArena, Context, Result
from app.render.engines.llamacpp.peg.peg_parsers import SPACE


class ChatParseError(Exception):
    """common_chat_peg_parse's runtime_error: the completion does not fit the grammar.

    `furthest` is ours, for the notes: how far into the parsed text (generation prompt
    plus completion) any part of the grammar read before the parse failed."""

    def __init__(self, message: str, furthest: int = 0) -> None:
        super().__init__(message)
        self.furthest = furthest


#: A JSON-ish string: from its quote to its closing quote, or to the end of the text (a
#: backslash takes the character after it, if any). Written as one loop without choices
#: between overlapping branches, so it matches in one pass.
_STRING = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)')


def brace_depth(text: str) -> int:
    """Unclosed '{' in JSON-ish text, braces inside strings not counted: the strings are
    cut out in one pass of the regular-expression engine, the braces left are counted
    (a character at a time in Python, 100 kB of arguments took 4 ms)."""
    bare = _STRING.sub("", text)
    return bare.count("{") - bare.count("}")


def _word(char: str) -> bool:
    return (char.isascii() and char.isalnum()) or char == "_"


_PY_LITERALS = (("True", "true"), ("False", "false"), ("None", "null"))


def normalize_quotes_to_json(text: str) -> str:
    """Python-ish values to JSON: single-quoted strings double-quoted (escapes fixed) and
    True/False/None (or a prefix of one, at a word start) lower-cased to JSON's."""
    out: list[str] = []
    single = double = False
    i, size = 0, len(text)
    while i < size:
        char = text[i]
        if char == "\\" and i + 1 < size:
            nxt = text[i + 1]
            if single:
                out.append({"'": "'", '"': '\\"'}.get(nxt, char + nxt))
                i += 2
            elif double:
                out.append(char + nxt)
                i += 2
            else:
                out.append(char)
                i += 1
            continue
        if char == '"':
            if single:
                out.append('\\"')
            else:
                double = not double
                out.append(char)
        elif char == "'":
            if double:
                out.append(char)
            else:
                single = not single
                out.append('"')
        elif not single and not double and char in "TFN" and (i == 0 or not _word(text[i - 1])):
            n = 0
            while i + n < size and _word(text[i + n]):
                n += 1
            token = text[i : i + n]
            for python, js in _PY_LITERALS:
                if python[:n] == token:
                    out.append(js[:n])
                    i += n - 1
                    break
            else:
                out.append(char)
        else:
            out.append(char)
        i += 1
    return "".join(out)


class Mapper:
    """common_chat_peg_mapper: fills `msg` from the tagged nodes, in pre-order."""

    def __init__(self, msg: ChatMsg) -> None:
        self.msg = msg
        self.pending: ChatToolCall | None = None
        self.current: ChatToolCall | None = None
        self.arg_count = 0
        self.closing_quote_pending = False
        self.args_buffer = ""

    def from_ast(self, ast: AstArena, result: Result) -> None:
        """Map every node of `result`, then flush a named call left open and drop
        whitespace-only reasoning (a `<think></think>` prefill)."""
        for node in ast.walk(result.nodes):
            self.map(node.tag, node.text)
        pending = self.pending
        if pending is not None and pending.name:
            if self.args_buffer:
                pending.arguments = self.args_buffer
            if self.closing_quote_pending and pending.arguments:
                pending.arguments += '"'
            self.msg.tool_calls.append(pending)
            self.pending = None
        if not self.msg.reasoning_content.strip(" \n\r\t"):
            self.msg.reasoning_content = ""

    def _append(self, text: str) -> None:
        # Before the name is known, arguments go to a buffer (args_target in C++).
        if self.current is not None and self.current.name:
            self.current.arguments += text
        else:
            self.args_buffer += text

    def _set(self, text: str) -> None:
        if self.current is not None and self.current.name:
            self.current.arguments = text
        else:
            self.args_buffer = text

    def _target(self) -> str:
        if self.current is not None and self.current.name:
            return self.current.arguments
        return self.args_buffer

    def map(self, tag: str, text: str) -> None:
        """One node: its tag decides what its text adds to the message."""
        if tag == tags.REASONING:
            self.msg.reasoning_content += text
        elif tag == tags.CONTENT:
            self.msg.content += text
        elif tag == tags.TOOL_OPEN:
            self.pending = self.current = ChatToolCall()
            self.arg_count, self.args_buffer, self.closing_quote_pending = 0, "", False
        elif tag == tags.TOOL_ARG_OPEN:
            self.closing_quote_pending = False
        elif self.current is not None:
            self._map_tool(tag, text, self.current)

    def _map_tool(self, tag: str, text: str, call: ChatToolCall) -> None:
        if tag == tags.TOOL_ID:
            ident = text.rstrip(SPACE)
            if len(ident) >= 2 and ident[0] == '"' and ident[-1] == '"':
                ident = ident[1:-1]
            call.id = ident
        elif tag == tags.TOOL_NAME:
            call.name = text.rstrip(SPACE)
            if self.args_buffer:
                call.arguments, self.args_buffer = self.args_buffer, ""
            elif not call.arguments:
                call.arguments = "{"
            if self.pending is not None:
                self.msg.tool_calls.append(self.pending)
                self.pending = None
        elif tag == tags.TOOL_ARGS:
            args = text.rstrip(SPACE)
            if args.startswith("{"):
                self._set(args)
        elif tag == tags.TOOL_ARG_NAME:
            key = text[1:] if text[:1] in SPACE and text else text
            entry = ("," if self.arg_count > 0 else "") + dump_string(key.rstrip(SPACE)) + ":"
            self.arg_count += 1
            if not self._target():
                self._set("{")
            self._append(entry)
        elif tag in (tags.TOOL_ARG_VALUE, tags.TOOL_ARG_STRING_VALUE):
            self._append(self._value(tag == tags.TOOL_ARG_STRING_VALUE, text))
        elif tag == tags.TOOL_ARG_CLOSE and self.closing_quote_pending:
            self._append('"')
            self.closing_quote_pending = False
        elif tag == tags.TOOL_CLOSE:
            self._close(call)

    def _value(self, is_string: bool, text: str) -> str:
        if is_string:
            opening = "" if self.closing_quote_pending and text else '"'
            self.closing_quote_pending = True
            return opening + escape_json_string_inner(text)
        return normalize_quotes_to_json(text) if text else ""

    def _close(self, call: ChatToolCall) -> None:
        if not call.name and self.args_buffer:
            call.arguments, self.args_buffer = self.args_buffer, ""
        if self.closing_quote_pending:
            call.arguments += '"'
            self.closing_quote_pending = False
        call.arguments += "}" * max(0, brace_depth(call.arguments))
        if self.pending is not None:
            if call.name:
                self.msg.tool_calls.append(self.pending)
            self.pending = None
            self.current = None  # later argument nodes belong to no call (b11434)


def peg_parse(arena: Arena | None, text: str, is_partial: bool = False, fmt: str = "",
              generation_prompt: str = "") -> ChatMsg:  # fmt: skip
    """common_chat_peg_parse: the message `arena` reads from `generation_prompt + text`
    (no arena: all of it is content); raises ChatParseError as llama.cpp throws."""
    if arena is None or arena.empty():
        arena = build_chat_peg_parser(lambda p: p.content(p.rest()) + p.end())
    ctx = Context(generation_prompt + text, FLAG_LENIENT)
    with deep():
        result = arena.parse(ctx)
        if result.fail() and not (is_partial and result.end > 0):
            raise ChatParseError(
                f"The model produced output that does not match the expected {fmt} format",
                ctx.furthest,
            )
        msg = ChatMsg(parsed_to=result.end)
        mapper_for(fmt, msg).from_ast(ctx.ast, result)
    return msg


def mapper_for(fmt: str, msg: ChatMsg) -> Mapper | Gemma4Mapper | MinimaxM3Mapper:
    """The mapper common_chat_peg_parse picks for format `fmt`."""
    if fmt == "peg-gemma4":
        return Gemma4Mapper(msg)
    if fmt == "peg-minimax-m3":
        return MinimaxM3Mapper(msg)
    return Mapper(msg)


@dataclass
class TaggedResult:
    """tagged_parse_result: the parse result and the last text of each tag."""

    result: Result
    tags: dict[str, str]


def parse_and_extract(arena: Arena, text: str, flags: int = 0, start: int = 0) -> TaggedResult:
    """tagged_peg_parser::parse_and_extract: parse, then map each tag to its (last) text."""
    ctx = Context(text, flags)
    with deep():
        result = arena.parse(ctx, start)
    found = {node.tag: node.text for node in ctx.ast.walk(result.nodes) if node.tag}
    return TaggedResult(result, found)
