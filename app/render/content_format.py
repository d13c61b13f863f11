"""Does a template read message content as a string or as a list of parts?

vLLM answers this for `--chat-template-content-format auto` by walking the template's
Jinja syntax tree (vllm/renderers/hf.py, `_detect_content_format`): the format is
"openai" when some loop iterates over the content of a message taken from `messages`
(or over a variable named `content`), and "string" otherwise. A template that does not
compile is "string" too. This module makes the same decision, so the playground can say
which flag vLLM needs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from functools import lru_cache

from jinja2 import nodes

from app.render.environment import shared_environment


def _reads_name(node: nodes.Node, name: str) -> bool:
    return isinstance(node, nodes.Name) and node.ctx == "load" and node.name == name


def _reads_key(node: nodes.Node, name: str, key: str) -> bool:
    """`name[key]` or `name.key`."""
    if isinstance(node, nodes.Getitem):
        return (
            _reads_name(node.node, name)
            and isinstance(node.arg, nodes.Const)
            and node.arg.value == key
        )
    return isinstance(node, nodes.Getattr) and _reads_name(node.node, name) and node.attr == key


def _reads(node: nodes.Node, name: str, key: str | None = None) -> bool:
    """`name` (or `name[key]`), possibly filtered, tested or sliced, as vLLM counts it."""
    if isinstance(node, nodes.Filter):
        return node.node is not None and _reads(node.node, name, key)
    if isinstance(node, nodes.Test):
        return _reads(node.node, name, key)
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Slice):
        return _reads(node.node, name, key)
    return _reads_key(node, name, key) if key else _reads_name(node, name)


class _Unsupported(Exception):
    """A shape vLLM's walk does not expect (it asserts); vLLM then falls back to "string"."""


def _target_name(node: nodes.Node) -> str:
    if not isinstance(node, nodes.Name):
        raise _Unsupported
    return node.name


def _aliases(root: nodes.Template, name: str) -> list[str]:
    """`name` and every variable assigned from it (`{% set msgs = messages[1:] %}`)."""
    found, queue = [name], deque([name])
    while queue:
        current = queue.popleft()
        for assign in root.find_all(nodes.Assign):
            if _reads(assign.node, current):
                alias = _target_name(assign.target)
                found.append(alias)
                if alias != current:  # a self-assignment would loop forever
                    queue.append(alias)
    return found


def _message_variables(root: nodes.Template) -> Iterator[str]:
    """Loop variables that iterate over `messages` or one of its aliases."""
    aliases = _aliases(root, "messages")
    for loop in root.find_all(nodes.For):
        if any(_reads(loop.iter, alias) for alias in aliases):
            yield _target_name(loop.target)


def _loops_over_content(root: nodes.Template) -> bool:
    messages = list(_message_variables(root))
    for loop in root.find_all(nodes.For):
        if any(_reads(loop.iter, message, "content") for message in messages):
            _target_name(loop.target)
            return True
        if isinstance(loop.iter, nodes.Name) and loop.iter.name == "content":
            _target_name(loop.target)
            return True
    return False


@lru_cache(maxsize=64)
def detect_content_format(template: str) -> str:
    """Either "openai" or "string", as vLLM's `--chat-template-content-format auto` decides."""
    try:
        root = shared_environment().parse(template)
    except Exception:  # vLLM falls back to its default, "string", on any compile failure
        return "string"
    try:
        return "openai" if _loops_over_content(root) else "string"
    except _Unsupported:
        return "string"
