"""The functions a template may call in Edge-LLM's patched Inja, by name and argument count.

Inja resolves every call while it parses: `name(a, b)`, `a|name(b)` and `a.name(b)` all
become a call of `name` with two arguments (the receiver or piped value comes first), and
the pair (name, count) must be registered, or else a registered variadic `name` when the
count is above zero. A call that matches nothing is taken for a macro call, and a macro
of that name must exist when parsing ends. This table is what Edge-LLM's
`cpp/chatTemplate/injaCallbacks.cpp` registers on top of the vendored Inja 3.5.0's own
builtins (`FunctionStorage` in `3rdParty/inja/include/inja/inja.hpp`), at commit
83f5f76871d71fbd2682c903eac285621d9077f7 of guswns531/TensorRT-Edge-LLM.
"""

from __future__ import annotations

from app.render.engines.edge_llm.inja.edge_callbacks import call_callback

__all__ = [
    "BUILTINS",
    "CALLBACKS",
    "EDGE_CALLBACKS",
    "VARIADIC",
    "accepts",
    "call_callback",
    "resolve",
]

#: The argument count Inja uses for a callback that takes any number of arguments.
VARIADIC = -1

#: Inja's builtin operations, by name, with the argument counts each is registered for.
BUILTINS: dict[str, frozenset[int]] = {
    "at": frozenset({2}),
    "capitalize": frozenset({1}),
    "default": frozenset({2, 3}),
    "divisibleBy": frozenset({2}),
    "even": frozenset({1}),
    "exists": frozenset({1}),
    "existsIn": frozenset({2}),
    "first": frozenset({1}),
    "float": frozenset({1}),
    "int": frozenset({1}),
    "isArray": frozenset({1}),
    "isBoolean": frozenset({1}),
    "isFloat": frozenset({1}),
    "isInteger": frozenset({1}),
    "isNumber": frozenset({1}),
    "isObject": frozenset({1}),
    "isString": frozenset({1}),
    "last": frozenset({1}),
    "length": frozenset({1}),
    "lower": frozenset({1}),
    "max": frozenset({1}),
    "min": frozenset({1}),
    "odd": frozenset({1}),
    "range": frozenset({1}),
    "replace": frozenset({3}),
    "round": frozenset({2}),
    "sort": frozenset({1}),
    "upper": frozenset({1}),
    "super": frozenset({0, 1}),
    "join": frozenset({2}),
}

#: Edge-LLM's own callbacks (`registerInjaCallbacks`), by name and accepted counts.
EDGE_CALLBACKS: dict[str, frozenset[int]] = {
    "tojson": frozenset({1, 2}),
    "safe": frozenset({1}),
    "string": frozenset({1}),
    "trim": frozenset({1}),
    "strip": frozenset({1, 2}),
    "lstrip": frozenset({1, 2}),
    "rstrip": frozenset({1, 2}),
    "startswith": frozenset({2}),
    "endswith": frozenset({2}),
    "split": frozenset({2, 3}),
    "get": frozenset({2, 3}),
    "items": frozenset({1}),
    "list": frozenset({1}),
    "fromjson": frozenset({1}),
    "reject": frozenset({3}),
    "dictsort": frozenset({1}),
    "sort": frozenset({2}),
    "map": frozenset({2}),
    "selectattr": frozenset({VARIADIC}),
    "rejectattr": frozenset({VARIADIC}),
    "unique": frozenset({1}),
    "range": frozenset({VARIADIC}),
    "namespace": frozenset({0, VARIADIC}),
    "raise_exception": frozenset({1}),
    "strftime_now": frozenset({1}),
}


def _merged() -> dict[str, frozenset[int]]:
    table: dict[str, frozenset[int]] = dict(BUILTINS)
    for name, counts in EDGE_CALLBACKS.items():
        table[name] = table.get(name, frozenset()) | counts
    return table


#: Every callable name with the argument counts registered for it (VARIADIC for "any > 0").
CALLBACKS: dict[str, frozenset[int]] = _merged()


def resolve(name: str, count: int) -> str | None:
    """How Inja's `find_function` resolves `name` called with `count` arguments.

    Returns "builtin" or "callback" for the registration that wins (an exact count first,
    then a variadic one when `count > 0`), or None when nothing matches, in which case Inja
    treats the call as a macro call.
    """
    if count in BUILTINS.get(name, ()):
        return "builtin"
    if count in EDGE_CALLBACKS.get(name, ()):
        return "callback"
    if count > 0 and VARIADIC in EDGE_CALLBACKS.get(name, ()):
        return "callback"
    return None


def accepts(name: str, count: int) -> bool:
    """Whether a call of `name` with `count` arguments resolves to a builtin or callback."""
    return resolve(name, count) is not None
