"""vLLM 0.33.0's pythonic tool calls (`pythonic`, `llama4_pythonic`): `[f(a=1), g()]`.

vLLM first checks the answer against a regular expression (the answer must start with
`[`, a call `name(` whose arguments are empty or start `key=`, and reach a `)` and `]`),
then parses the whole answer as Python: it must be one list of calls to plain or dotted
names with literal keyword arguments. Anything else is content, all of it. The
expression is decided here by a scan instead of vLLM's backtracking pattern.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from app.render.answer import ToolCall
from app.render.engines.vllm.answers.base import ToolExtraction, tool_call_id

#: A `)` that closes the list: what every successful match of vLLM's pattern ends with.
CLOSE = re.compile(r"\)\s*\]")
NAME_LITERALS = {"null": None, "true": True, "false": False}


class NotLiteral(ValueError):
    """A call vLLM's `handle_single_tool` refuses."""


def _ident_end(text: str, at: int) -> int:
    """The end of a `[a-zA-Z]\\w*` name at `at` (`at` itself when there is none)."""
    if at >= len(text) or not ("a" <= text[at].lower() <= "z" and text[at].isascii()):
        return at
    end = at + 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return end


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def looks_like_calls(text: str) -> bool:
    """Whether vLLM's TOOL_CALL_REGEX matches at the start of `text`."""
    if not text.startswith("["):
        return False
    at = 1
    while True:
        name_end = _ident_end(text, at)
        if name_end == at or text[name_end : name_end + 1] != "(":
            return False
        at = name_end + 1
        key_end = _ident_end(text, at)
        if key_end > at and text[key_end : key_end + 1] == "=":
            # Arguments are `.*` (any text): the call may end at any later `)\s*]`.
            return CLOSE.search(text, key_end + 1) is not None
        if text[at : at + 1] != ")":
            return False
        at += 1
        comma = text[at : at + 1] == ","
        at = _skip_space(text, at + comma)
        if not comma and text[at : at + 1] == "]":
            return True


def _value(node: ast.expr) -> Any:
    """vLLM's `get_parameter_value`: a literal argument as JSON data."""
    if isinstance(node, ast.Constant):
        if node.value is None or isinstance(node.value, (str, int, float)):
            return node.value
        raise NotLiteral("a constant JSON cannot hold")
    if isinstance(node, ast.Dict):
        if not all(isinstance(key, ast.Constant) for key in node.keys):
            raise NotLiteral("a dict key that is not a literal")
        return {key.value: _value(v) for key, v in zip(node.keys, node.values, strict=True)}  # type: ignore[union-attr]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_value(v) for v in node.elts]
    if isinstance(node, ast.JoinedStr) and all(isinstance(p, ast.Constant) for p in node.values):
        return "".join(str(p.value) for p in node.values)  # type: ignore[attr-defined]
    if isinstance(node, ast.Name) and node.id in NAME_LITERALS:
        return NAME_LITERALS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    raise NotLiteral("an argument that is not a literal")


def _name(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise NotLiteral("a call to something that is not a name")
    return ".".join([node.id, *reversed(parts)])


def read_calls(text: str, parser: str) -> ToolExtraction:
    """The calls of a pythonic answer, as vLLM's `extract_tool_calls` returns them."""
    if not looks_like_calls(text):
        return ToolExtraction(tools_called=False, content=text)
    try:
        module = ast.parse(text)
        parsed = getattr(module.body[0], "value", None)
        if not isinstance(parsed, ast.List) or not all(
            isinstance(e, ast.Call) for e in parsed.elts
        ):
            raise NotLiteral("Python that is not one list of calls")
        calls: list[ToolCall] = []
        for element in parsed.elts:
            assert isinstance(element, ast.Call)
            name = _name(element.func)
            arguments = {k.arg: _value(k.value) for k in element.keywords}
            text_args = json.dumps(arguments, ensure_ascii=False)
            calls.append(ToolCall(name, text_args, tool_call_id(len(calls), name)))
    except NotLiteral as error:
        why = str(error)
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError, TypeError) as error:
        why = f"text Python cannot parse ({type(error).__name__})"
    else:
        return ToolExtraction(tools_called=True, tool_calls=tuple(calls), content=None)
    note = (
        f"The completion looks like pythonic tool calls but holds {why}, so vLLM's {parser} "
        "parser returns it all as content."
    )
    return ToolExtraction(tools_called=False, content=text, notes=(note,))
