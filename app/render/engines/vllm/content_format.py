"""Does a template read message content as a string or as a list of parts?

vLLM answers this for `--chat-template-content-format auto` by walking the template's
Jinja syntax tree (vllm/renderers/hf.py, `_detect_content_format`, as of vLLM 0.33.0):
the format is "openai" when some loop iterates over message content, and "string"
otherwise. Message content means `m.content` (or `m["content"]`, filtered, tested or
sliced) of a loop variable `m` over `messages` or one of its aliases (a variable, or a
namespace attribute, assigned from it); or a macro parameter that some call of the macro
passes such content; or, in a loop outside every macro, a variable named `content`. A
template that does not compile, or a shape the walk does not expect, is "string". This
module makes the same decision, so that the playground renders as vLLM does and says
which flag vLLM needs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from functools import lru_cache

from jinja2 import nodes

from app.render.environment import shared_environment


class _Unsupported(Exception):
    """A shape vLLM's walk does not expect (it asserts); vLLM then falls back to "string"."""


def _reads_name(node: nodes.Node, name: str) -> bool:
    """`name`, or the attribute path `ns.attr` when `name` is dotted."""
    if isinstance(node, nodes.Name):
        return node.ctx == "load" and node.name == name
    if isinstance(node, nodes.Getattr) and "." in name:
        base, _, attr = name.rpartition(".")
        return node.attr == attr and _reads_name(node.node, base)
    return False


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


def _target_name(node: nodes.Node) -> str:
    if not isinstance(node, nodes.Name):
        raise _Unsupported
    return node.name


def _dotted(node: nodes.Node) -> str | None:
    """An assignment target `ns.attr` (or `ns.a.b`) as a dotted name."""
    if isinstance(node, nodes.NSRef):
        return f"{node.name}.{node.attr}"
    parts = []
    while isinstance(node, nodes.Getattr):
        parts.append(node.attr)
        node = node.node
    if not isinstance(node, nodes.Name):
        return None
    return ".".join([node.name, *reversed(parts)])


def _assigned_from(assign: nodes.Assign, name: str) -> list[str]:
    """The names an assignment makes an alias of `name`: a variable set from it, the
    attributes of a namespace made from it, or a namespace attribute set to it."""
    target, value = assign.target, assign.node
    if isinstance(target, nodes.Name) and _reads(value, name):
        return [target.name]
    is_namespace = (
        isinstance(value, nodes.Call)
        and isinstance(value.node, nodes.Name)
        and value.node.name == "namespace"
    )
    if isinstance(target, nodes.Name) and is_namespace:
        return [f"{target.name}.{kw.key}" for kw in value.kwargs if _reads(kw.value, name)]
    if isinstance(target, nodes.Getattr | nodes.NSRef) and _reads(value, name):
        dotted = _dotted(target)
        return [dotted] if dotted is not None else []
    return []


def _aliases(root: nodes.Template, name: str) -> list[str]:
    """`name` and everything assigned from it, breadth first (`{% set msgs = messages[1:]
    %}`, `namespace(rest=messages)`, `{% set ns.rest = messages %}`)."""
    found, queue, seen = [name], deque([name]), {name}
    while queue:
        current = queue.popleft()
        for assign in root.find_all(nodes.Assign):
            for alias in _assigned_from(assign, current):
                found.append(alias)
                if alias not in seen:  # a self-assignment would loop forever
                    seen.add(alias)
                    queue.append(alias)
    return found


def _message_variables(root: nodes.Template) -> list[str]:
    """Loop variables that iterate over `messages` or one of its aliases."""
    aliases = _aliases(root, "messages")
    return [
        _target_name(loop.target)
        for loop in root.find_all(nodes.For)
        if any(_reads(loop.iter, alias) for alias in aliases)
    ]


def _content_parameters(root: nodes.Template, macro: nodes.Macro, messages: list[str]) -> set[str]:
    """The parameters of `macro` that some call passes a message's content."""

    def is_content(node: nodes.Node) -> bool:
        return any(_reads(node, message, "content") for message in messages)

    names = [arg.name for arg in macro.args]
    found = set()
    for call in root.find_all(nodes.Call):
        if not (isinstance(call.node, nodes.Name) and call.node.name == macro.name):
            continue
        found |= {names[i] for i, arg in enumerate(call.args[: len(names)]) if is_content(arg)}
        found |= {kw.key for kw in call.kwargs if kw.key in names and is_content(kw.value)}
    return found


def _content_loops(root: nodes.Template) -> Iterator[nodes.For]:
    """Loops over message content, as vLLM finds them."""
    messages = _message_variables(root)
    in_macros: set[int] = set()
    parameters_of: dict[int, set[str]] = {}
    for macro in root.find_all(nodes.Macro):
        parameters = _content_parameters(root, macro, messages)
        for loop in macro.find_all(nodes.For):
            in_macros.add(id(loop))
            if parameters:
                parameters_of[id(loop)] = parameters
    for loop in root.find_all(nodes.For):
        over = loop.iter
        if any(_reads(over, message, "content") for message in messages):
            yield loop
            continue
        if not isinstance(over, nodes.Name):
            continue
        # A macro parameter some call passes content, or `content` outside every macro.
        bare_content = over.name == "content" and id(loop) not in in_macros
        if bare_content or over.name in parameters_of.get(id(loop), ()):
            yield loop


@lru_cache(maxsize=64)
def detect_content_format(template: str) -> str:
    """Either "openai" or "string", as vLLM's `--chat-template-content-format auto` decides."""
    try:
        root = shared_environment().parse(template)
    except Exception:  # vLLM falls back to its default, "string", on any compile failure
        return "string"
    try:
        loop = next(_content_loops(root), None)
        if loop is not None:
            _target_name(loop.target)
        return "string" if loop is None else "openai"
    except _Unsupported:
        return "string"
