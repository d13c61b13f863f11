"""Expressions of Edge-LLM's patched Inja, evaluated over JSON values as its renderer does.

Inja tells a *missing* value (an unknown variable, key or index) apart from `null`: most
operators, filters and callbacks raise "variable 'x' not found" for a missing argument,
while `{{ x }}`, `{% if x %}`, `not x`, `x is defined`, `default(x, ...)`, `and`/`or` and
`{% for %}` over a missing value take it quietly. Here a missing value is a `Missing`
object that remembers the node that was not found, so the message and position match.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.edge_llm.inja import nodes as n
from app.render.engines.edge_llm.inja.builtins import BUILTIN_IMPLS
from app.render.engines.edge_llm.inja.callbacks import call_callback, resolve
from app.render.engines.edge_llm.inja.jsonvalue import (
    JsonError,
    as_bool,
    as_int,
    from_bytes,
    is_integer,
    python_string,
    size,
    str_ref,
    to_bytes,
    truthy,
    type_name,
)
from app.render.engines.edge_llm.inja.operators import InjaError, binary
from app.render.engines.edge_llm.inja.pointer import pointer_get, pointer_parts


class Missing:
    """A value that was not found; `node` is what Inja blames in its message."""

    __slots__ = ("node",)

    def __init__(self, node: n.Node) -> None:
        self.node = node


class Evaluator:
    """Evaluates expression nodes against the request data and the renderer's variables."""

    #: Longest string or list that `*` may build (keeps memory bounded; Inja has no limit).
    MAX_REPEAT = 2_000_000

    def __init__(
        self, template: n.Template, data: dict[str, Any], now: float | None = None
    ) -> None:
        self.template = template
        self.data = data
        self.now = now
        # Inja's renderer creates `loop` (as null) when it starts, so it is always defined.
        self.extra: dict[str, Any] = {"loop": None}

    # ------------------------------------------------------------ lookups

    def lookup(self, node: n.Var) -> Any:
        """A variable: set/loop variables first, then the request data, then a callback
        with no arguments (`namespace`), else Missing."""
        parts = pointer_parts(node.name)
        for root in (self.extra, self.data):
            found, value = pointer_get(root, parts)
            if found:
                return value
        if resolve(node.name, 0) == "callback":
            return call_callback(node.name, [])
        return Missing(node)

    def need(self, node: n.Expr) -> Any:
        """Evaluate an argument that must exist, with Inja's message when it does not."""
        value = self.eval(node)
        if isinstance(value, Missing):
            raise not_found(value)
        return value

    # ------------------------------------------------------------ expressions

    def eval(self, node: n.Expr) -> Any:
        """The value of `node`, or Missing."""
        method = getattr(self, "_eval_" + type(node).__name__)
        return method(node)

    def _eval_Literal(self, node: n.Literal) -> Any:
        return node.value

    def _eval_Var(self, node: n.Var) -> Any:
        return self.lookup(node)

    def _eval_ListLit(self, node: n.ListLit) -> Any:
        return [self.need(item) for item in node.items]

    def _eval_DictLit(self, node: n.DictLit) -> Any:
        result: dict[str, Any] = {}
        for key_node, value_node in node.pairs:
            key = python_string(self.need(key_node))
            result[key] = self.need(value_node)
        return result

    def _eval_Cond(self, node: n.Cond) -> Any:
        return self.eval(node.then if truthy(self.quiet(node.cond)) else node.otherwise)

    def quiet(self, node: n.Expr) -> Any:
        """Evaluate where a missing value counts as null (Inja's non-throwing arguments)."""
        value = self.eval(node)
        return None if isinstance(value, Missing) else value

    def _eval_Item(self, node: n.Item) -> Any:
        container, key = self.eval(node.target), self.eval(node.key)
        if isinstance(container, Missing) or isinstance(key, Missing):
            return Missing(node)
        if isinstance(container, dict):
            name = python_string(key)
            return container[name] if name in container else Missing(node)
        index = as_int(key)
        length = size(container)
        if index < 0:
            index += length
        if index < 0 or index >= length:
            return Missing(node)
        if not isinstance(container, list):
            kind = type_name(container)
            raise JsonError(f"[json.exception.type_error.304] cannot use at() with {kind}")
        return container[index]

    def _eval_Slice(self, node: n.Slice) -> Any:
        target = self.need(node.target)
        bounds = [self.need(part) for part in (node.start, node.stop, node.step)]
        if not isinstance(target, list | str):
            raise InjaError("slice requires an array or string", node.pos)
        length = size(target)  # nlohmann's size() of a string is 1, so strings slice oddly
        step = 1 if bounds[2] is None else as_int(bounds[2])
        if step == 0:
            raise InjaError("slice step cannot be zero", node.pos)
        start = (0 if step > 0 else length - 1) if bounds[0] is None else as_int(bounds[0])
        stop = (length if step > 0 else -1) if bounds[1] is None else as_int(bounds[1])
        if bounds[0] is not None and start < 0:
            start += length
        if bounds[1] is not None and stop < 0:
            stop += length
        low, high = (0, length) if step > 0 else (-1, max(-1, length - 1))
        start, stop = min(max(start, low), high), min(max(stop, low), high)
        picked = range(start, stop, step)
        if isinstance(target, str):
            data = to_bytes(target)
            return from_bytes(bytes(data[i] for i in picked))
        return [target[i] for i in picked]

    def _eval_Test(self, node: n.Test) -> Any:
        if node.name in ("boolean", "number", "integer"):
            value = self.need(node.arg)  # these three tests use Inja's throwing arguments
            if node.name == "boolean":
                return isinstance(value, bool)
            return is_integer(value) if node.name == "integer" else _is_number(value)
        value = self.eval(node.arg)
        if node.name == "defined":
            return not isinstance(value, Missing)
        if node.name == "undefined":
            return isinstance(value, Missing)
        if isinstance(value, Missing):
            return False
        checks = {
            "none": value is None,
            "iterable": isinstance(value, list | dict | str),
            "sequence": isinstance(value, list | dict | str),
            "mapping": isinstance(value, dict),
            "string": isinstance(value, str),
            "true": value is True,
            "false": value is False,
        }
        return checks[node.name]

    def _eval_Call(self, node: n.Call) -> Any:
        if node.kind == "macro":
            return self.call_macro(node)
        if node.kind == "callback":
            return call_callback(node.name, [self.need(arg) for arg in node.args], self.now)
        if node.name == "default":
            return self._default(node)
        if node.name == "at":
            return self._eval_Item(n.Item(node.pos, node.args[0], node.args[1]))
        if node.name == "exists":
            name = str_ref(self.need(node.args[0]))
            return pointer_get(self.data, pointer_parts(name))[0]
        if node.name == "super":
            args = [self.need(arg) for arg in node.args]
            return self.super_block(node, args)
        return BUILTIN_IMPLS[node.name]([self.need(arg) for arg in node.args])

    def _default(self, node: n.Call) -> Any:
        value = self.eval(node.args[0])
        use_default = isinstance(value, Missing)
        if not use_default and len(node.args) == 3:
            use_default = as_bool(self.need(node.args[2])) and not truthy(value)
        return self.need(node.args[1]) if use_default else value

    def call_macro(self, node: n.Call) -> Any:
        """Render a macro call (the statement renderer provides this)."""
        raise NotImplementedError

    def super_block(self, node: n.Call, args: list[Any]) -> Any:
        """`super()`: Edge-LLM never has a parent template, so this always fails."""
        raise NotImplementedError

    def _eval_Op(self, node: n.Op) -> Any:
        op, args = node.op, node.args
        if op == "not":
            return not truthy(self.quiet(args[0]))
        if op in ("and", "or"):
            first = self.eval(args[0])
            if truthy(None if isinstance(first, Missing) else first) == (op == "or"):
                return Missing(node) if isinstance(first, Missing) else first
            return self.eval(args[1])
        if op == "at_id":
            return self._at_id(node)
        left, right = self.need(args[0]), self.need(args[1])
        return binary(op, left, right, node, self.MAX_REPEAT)

    def _at_id(self, node: n.Op) -> Any:
        container = self.quiet(node.args[0])
        member = node.args[1]
        if not isinstance(member, n.Var) or not isinstance(self.eval(member), Missing):
            raise InjaError("invalid member access", node.pos)
        if not isinstance(container, dict) or member.name not in container:
            raise JsonError(f"[json.exception.out_of_range.403] key '{member.name}' not found")
        return container[member.name]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def not_found(missing: Missing) -> InjaError:
    """Inja's error for a missing argument."""
    node = missing.node
    if isinstance(node, n.Var):
        return InjaError(f"variable '{node.name}' not found", node.pos)
    return InjaError("expression could not be evaluated", node.pos)
