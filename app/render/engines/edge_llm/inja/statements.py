"""Statements of Edge-LLM's patched Inja: output, if, for, set, macros, loop control.

Scoping follows Inja's renderer: a `for` iteration and a macro call open a scope, and the
first plain (undotted) `set` of a name inside it saves the old value, which comes back
when the scope ends; a dotted `set ns.x` writes through a JSON pointer and is never
undone, which is what makes `namespace()` work.
"""

from __future__ import annotations

from typing import Any

from app.problems import limit_exceeded
from app.render.engines.edge_llm.inja import nodes as n
from app.render.engines.edge_llm.inja.evaluate import Evaluator, InjaError, Missing
from app.render.engines.edge_llm.inja.jsonvalue import (
    copy_value,
    from_bytes,
    printed,
    to_bytes,
    truthy,
)
from app.render.engines.edge_llm.inja.pointer import assign, descend

#: Deepest chain of macro calls rendered (Inja recurses on the C++ stack without a bound).
MAX_MACRO_DEPTH = 40

_MISSING_SLOT = object()


class Renderer(Evaluator):
    """Renders a parsed template into a string, within an output budget."""

    def __init__(
        self,
        template: n.Template,
        data: dict[str, Any],
        max_chars: int,
        now: float | None = None,
    ) -> None:
        super().__init__(template, data, now)
        self.max_chars = max_chars
        self.out: list[str] = []
        self.written = 0
        self.scopes: list[dict[str, Any]] = []
        self.loop_control: str | None = None
        self.macro_depth = 0
        self.in_block = 0
        #: Offset of the statement being rendered, for errors that carry no position.
        self.pos = 0

    # ------------------------------------------------------------ variables and output

    def write(self, text: str) -> None:
        """Append to the current output, refusing to grow past the output budget."""
        self.written += len(text)
        if self.written > self.max_chars:
            line = self.template.location(self.pos)[0]
            raise limit_exceeded(
                "output_chars", f"The template wrote more than {self.max_chars:,} characters.", line
            )
        self.out.append(text)

    def remember(self, key: str) -> None:
        """Save `key`'s value in the innermost scope, the first time it changes there."""
        if self.scopes and key not in self.scopes[-1]:
            self.scopes[-1][key] = self.extra.get(key, _MISSING_SLOT)

    def set_value(self, key: str, value: Any) -> None:
        """Inja's `set_value`: a dotted key writes through a JSON pointer into variables."""
        parts = key.split(".")
        if len(parts) == 1:
            self.remember(key)
        current: Any = self.extra
        for index, part in enumerate(parts[:-1]):
            current = descend(current, part, parts[index + 1])
        assign(current, parts[-1], copy_value(value))

    def unset_value(self, key: str) -> None:
        """Make a macro parameter undefined for the call (an argument that was missing)."""
        self.remember(key)
        self.extra.pop(key, None)

    def end_scope(self) -> None:
        """Restore what the innermost scope saved."""
        for key, saved in self.scopes.pop().items():
            if saved is _MISSING_SLOT:
                self.extra.pop(key, None)
            else:
                self.extra[key] = saved

    # ------------------------------------------------------------ statements

    def run(self, body: list[n.Node]) -> None:
        """Render each node, stopping early after a `break` or `continue`."""
        for node in body:
            self.pos = node.pos
            getattr(self, "_run_" + type(node).__name__)(node)
            if self.loop_control is not None:
                return

    def _run_Text(self, node: n.Text) -> None:
        self.write(node.text)

    def _expression(self, expr: n.Expr | None, pos: int) -> Any:
        if expr is None:
            raise InjaError("empty expression", pos)
        return self.quiet(expr)

    def _run_Output(self, node: n.Output) -> None:
        self.write(printed(self._expression(node.expr, node.pos)))

    def _run_If(self, node: n.If) -> None:
        if truthy(self._expression(node.cond, node.pos)):
            self.run(node.body)
        elif node.has_else:
            self.run(node.orelse)

    def _run_For(self, node: n.For) -> None:
        if node.iterable is None:
            raise InjaError("empty expression", node.pos)
        iterable = self.eval(node.iterable)
        if isinstance(iterable, Missing):
            return  # Inja skips a loop over an undefined value; a null one is an error
        names = [node.value] if node.key is None else [node.key, node.value]
        items = _loop_items(iterable, node)
        if node.filter is not None:
            items = [item for item in items if self._selected(names, item, node.filter)]
        for index, item in enumerate(items):
            self.scopes.append({})
            for name, value in zip(names, item, strict=True):
                self.set_value(name, value)
            self.set_value("loop", _loop_object(items, index, node.key is None))
            try:
                self.run(node.body)
            finally:
                self.end_scope()
            control, self.loop_control = self.loop_control, None
            if control == "break":
                break

    def _selected(self, names: list[str], item: list[Any], condition: n.Expr) -> bool:
        self.scopes.append({})
        try:
            for name, value in zip(names, item, strict=True):
                self.set_value(name, value)
            return truthy(self.quiet(condition))
        finally:
            self.end_scope()

    def _run_Set(self, node: n.Set) -> None:
        self.set_value(node.key, self._expression(node.expr, node.pos))

    def _run_SetBlock(self, node: n.SetBlock) -> None:
        self.set_value(node.key, self.capture(node.body))

    def capture(self, body: list[n.Node]) -> str:
        """Render `body` into a string of its own (set blocks and macro calls)."""
        saved, self.out = self.out, []
        try:
            self.run(body)
            return "".join(self.out)
        finally:
            self.out = saved

    def _run_Macro(self, node: n.Macro) -> None:
        return None

    def _run_LoopControl(self, node: n.LoopControl) -> None:
        self.loop_control = node.kind

    def _run_Include(self, node: n.Include) -> None:
        raise InjaError(f"include '{node.file}' not found", node.pos)

    def _run_Extends(self, node: n.Extends) -> None:
        raise InjaError(f"extends '{node.file}' not found", node.pos)

    def _run_Block(self, node: n.Block) -> None:
        self.in_block += 1
        try:
            self.run(self.template.blocks.get(node.name, node).body)
        finally:
            self.in_block -= 1

    # ------------------------------------------------------------ calls

    def super_block(self, node: n.Call, args: list[Any]) -> Any:
        """Inja's `super()`; Edge-LLM renders a single template, so there is no parent."""
        if not self.in_block:
            raise InjaError("super() call is not within a block", node.pos)
        raise InjaError(
            "level of super() call does not match parent templates (between 1 and 0)", node.pos
        )

    def call_macro(self, node: n.Call) -> Any:
        """Bind the call's arguments to the macro's parameters and render its body."""
        macro = self.template.macros.get(node.name)
        if macro is None:
            raise InjaError(f"unknown macro '{node.name}'", node.pos)
        values = [self.eval(arg) for arg in node.args]
        if self.macro_depth >= MAX_MACRO_DEPTH:
            raise InjaError(
                f"macro '{node.name}' nests deeper than {MAX_MACRO_DEPTH} calls", node.pos
            )
        self.scopes.append({})
        self.macro_depth += 1
        try:
            self._bind(macro, node, values)
            return self.capture(macro.body)
        finally:
            self.macro_depth -= 1
            self.end_scope()

    def _bind(self, macro: n.Macro, node: n.Call, values: list[Any]) -> None:
        names = [param.name for param in macro.params]
        bound = [False] * len(names)
        next_positional = 0
        for value, keyword in zip(values, node.arg_names, strict=False):
            if keyword:
                if keyword not in names:
                    raise InjaError(
                        f"unknown argument '{keyword}' for macro '{node.name}'", node.pos
                    )
                index = names.index(keyword)
            else:
                index = next_positional
                while index < len(bound) and bound[index]:
                    index += 1
                next_positional = index + 1
            if index >= len(bound) or bound[index]:
                raise InjaError(f"invalid arguments for macro '{node.name}'", node.pos)
            if isinstance(value, Missing):
                self.unset_value(names[index])
            else:
                self.set_value(names[index], value)
            bound[index] = True
        for index, param in enumerate(macro.params):
            if bound[index]:
                continue
            if param.default is None:
                raise InjaError(
                    f"missing argument '{param.name}' for macro '{node.name}'", node.pos
                )
            self.set_value(param.name, self.quiet(param.default))


def _loop_items(iterable: Any, node: n.For) -> list[list[Any]]:
    """The tuples a loop binds: `[value]` for `for v in`, `[key, value]` for `for k, v in`."""
    if node.key is None:
        if isinstance(iterable, dict):
            return [[key] for key in iterable]
        if isinstance(iterable, str):
            data = to_bytes(iterable)  # Inja loops over bytes
            return [[from_bytes(bytes([byte]))] for byte in data]
        if isinstance(iterable, list):
            return [[item] for item in iterable]
        raise InjaError("for loop requires an iterable", node.pos)
    if isinstance(iterable, dict):
        return [[key, value] for key, value in iterable.items()]
    if isinstance(iterable, list):
        for item in iterable:
            if not isinstance(item, list) or len(item) != 2:
                raise InjaError("tuple loop requires two-element values", node.pos)
        return [list(item) for item in iterable]
    raise InjaError("tuple loop requires an object or pair sequence", node.pos)


def _loop_object(items: list[list[Any]], index: int, single: bool) -> dict[str, Any]:
    """Inja's `loop` variable (a plain nlohmann object, so its keys are sorted)."""
    count = len(items)

    def item(at: int) -> Any:
        if not 0 <= at < count:
            return None
        return items[at][0] if single else items[at]

    return {
        "first": index == 0,
        "index": index + 1,
        "index0": index,
        "index1": index + 1,
        "is_first": index == 0,
        "is_last": index + 1 == count,
        "last": index + 1 == count,
        "length": count,
        "nextitem": item(index + 1),
        "previtem": item(index - 1),
        "revindex": count - index,
        "revindex0": count - index - 1,
    }
