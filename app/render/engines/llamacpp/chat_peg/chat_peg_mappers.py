"""The mappers of formats peg-gemma4 and peg-minimax-m3 (common/chat-peg-parser.cpp).

Both build tool arguments from the parse tree itself rather than from the generic
mapper's running text: Gemma 4 from its own value rules (gemma4-dict, gemma4-string,
...), MiniMax-M3 from nested tool-arg-object / tool-arg-array / tool-arg-item tags.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from app.render.engines.llamacpp.apply.chat_msg import (
    ChatMsg,
    ChatToolCall,
    dump_string,
    escape_json_string_inner,
)
from app.render.engines.llamacpp.chat_peg import chat_peg_tags as tags
from app.render.engines.llamacpp.peg.peg import (
    INVALID_ID,
    MAX_DEPTH,
    AstArena,
    AstNode,
    Result,
)

TOOL_ARG_OBJECT = "tool-arg-object"
TOOL_ARG_ARRAY = "tool-arg-array"
TOOL_ARG_ITEM = "tool-arg-item"


@contextmanager
def deep() -> Iterator[None]:
    """Room for trees as deep as a parse may nest (`peg.MAX_DEPTH`), for the recursive
    mappers below; the old recursion limit comes back afterwards."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 2 * MAX_DEPTH + 500))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


class _TreeMapper:
    """Reasoning and content as the generic mapper reads them; tools by `tool`."""

    def __init__(self, msg: ChatMsg) -> None:
        self.msg = msg

    def from_ast(self, ast: AstArena, result: Result) -> None:
        for node_id in result.nodes:
            self.visit(ast, ast.get(node_id))

    def visit(self, ast: AstArena, node: AstNode) -> None:
        if node.tag == tags.REASONING:
            self.msg.reasoning_content += node.text
        elif node.tag == tags.CONTENT:
            self.msg.content += node.text
        elif node.tag == tags.TOOL:
            self.tool(ast, node)
        else:
            for child in node.children:
                self.visit(ast, ast.get(child))

    def tool(self, ast: AstArena, node: AstNode) -> None:
        raise NotImplementedError


class Gemma4Mapper(_TreeMapper):
    """common_chat_peg_gemma4_mapper."""

    def tool(self, ast: AstArena, node: AstNode) -> None:
        name_id, args_id = (
            ast.find_by_tag(node, tags.TOOL_NAME),
            ast.find_by_tag(node, tags.TOOL_ARGS),
        )
        if name_id == INVALID_ID or args_id == INVALID_ID:
            return
        name, args = ast.get(name_id), ast.get(args_id)
        if name.is_partial:
            return
        arguments = gemma4_to_json(ast, args.children[0]) if args.children else ""
        self.msg.tool_calls.append(ChatToolCall(name.text, arguments))


def gemma4_to_json(ast: AstArena, node_id: int) -> str:
    """A gemma4 value node as JSON text (unfinished containers left open)."""
    node = ast.get(node_id)
    rule, kids = node.rule, node.children
    if not node.text:
        return ""
    if rule in ("gemma4-number", "gemma4-bool", "gemma4-null", "gemma4-dict-key-name"):
        return node.text
    if rule == "gemma4-string-content":
        return escape_json_string_inner(node.text)
    if rule == "gemma4-string":
        if not kids:
            return '"'
        return '"' + gemma4_to_json(ast, kids[0]) + ("" if node.is_partial else '"')
    if rule in ("gemma4-array", "gemma4-dict"):
        opening, closing = ("[", "]") if rule == "gemma4-array" else ("{", "}")
        body = ",".join(gemma4_to_json(ast, kid) for kid in kids)
        return opening + body + ("" if node.is_partial else closing)
    if rule == "gemma4-dict-key":
        key = escape_json_string_inner(gemma4_to_json(ast, kids[0])) if kids else ""
        return '"' + key + ("" if node.is_partial else '":')
    if rule == "gemma4-dict-kv":
        return "".join(gemma4_to_json(ast, kid) for kid in kids)
    if rule == "gemma4-value":
        return gemma4_to_json(ast, kids[0]) if kids else ""
    return ""


class MinimaxM3Mapper(_TreeMapper):
    """common_chat_peg_minimax_m3_mapper."""

    def tool(self, ast: AstArena, node: AstNode) -> None:
        name_id = ast.find_by_tag(node, tags.TOOL_NAME)
        if name_id == INVALID_ID:
            return
        arguments = _m3_container(ast, node, True, not node.is_partial)
        self.msg.tool_calls.append(ChatToolCall(ast.get(name_id).text, arguments))


def _m3_collect(ast: AstArena, node: AstNode, tag: str, out: list[int]) -> None:
    """The nearest descendants tagged `tag` (not looking inside them)."""
    for child_id in node.children:
        child = ast.get(child_id)
        if child.tag == tag:
            out.append(child_id)
        else:
            _m3_collect(ast, child, tag, out)


_M3_VALUES = (tags.TOOL_ARG_VALUE, tags.TOOL_ARG_STRING_VALUE, TOOL_ARG_OBJECT, TOOL_ARG_ARRAY)


def _m3_value_of(ast: AstArena, node: AstNode) -> int:
    return next((kid for kid in node.children if ast.get(kid).tag in _M3_VALUES), INVALID_ID)


def _m3_value(ast: AstArena, node_id: int, closed: bool) -> str:
    if node_id == INVALID_ID:
        return ""
    node = ast.get(node_id)
    if node.tag in (TOOL_ARG_OBJECT, TOOL_ARG_ARRAY):
        return _m3_container(ast, node, node.tag == TOOL_ARG_OBJECT, closed)
    if node.tag == tags.TOOL_ARG_STRING_VALUE:
        return '"' + escape_json_string_inner(node.text) + ('"' if closed else "")
    return node.text  # numbers and booleans, as the template wrote them


def _m3_container(ast: AstArena, node: AstNode, is_object: bool, closed: bool) -> str:
    entries: list[int] = []
    _m3_collect(ast, node, tags.TOOL_ARG if is_object else TOOL_ARG_ITEM, entries)
    parts = []
    for entry_id in entries:
        entry = ast.get(entry_id)
        if is_object:
            name_id = ast.find_by_tag(entry, tags.TOOL_ARG_NAME)
            if name_id == INVALID_ID:
                continue
            value = _m3_value(ast, _m3_value_of(ast, entry), not entry.is_partial)
            text = dump_string(ast.get(name_id).text) + ":" + value
        else:
            text = _m3_value(ast, _m3_value_of(ast, entry), not entry.is_partial)
        if text:
            parts.append(text)
    opening, closing = ("{", "}") if is_object else ("[", "]")
    return opening + ",".join(parts) + (closing if closed else "")
