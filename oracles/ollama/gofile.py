"""Find the parts of a Go test file the recorder reads: its top-level functions, a
test's table, the names given literal values, and helpers that return a literal."""

from __future__ import annotations

from typing import Any

from oracles.ollama.goliteral import GoSyntaxError, Reader, tokenize


def find(tokens: list[tuple[str, str]], *pattern: str, start: int = 0) -> int:
    """The index of the first run of tokens equal to `pattern`, or -1."""
    for i in range(start, len(tokens) - len(pattern) + 1):
        if all(tokens[i + j][1] == p for j, p in enumerate(pattern)):
            return i
    return -1


def functions(text: str) -> dict[str, tuple[int, int, list[tuple[str, str]]]]:
    """Top-level functions: name -> (body start, body end, tokens) of the file."""
    tokens = tokenize(text)
    found = {}
    i = 0
    while i < len(tokens):
        if tokens[i][1] == "func" and tokens[i + 1][0] == "ident" and tokens[i + 2][1] == "(":
            name = tokens[i + 1][1]
            reader = Reader(tokens, i + 2)
            reader.skip_balanced()
            while reader.peek() != "{":
                reader.take()
            body = reader.pos
            reader.skip_balanced()
            found[name] = (body, reader.pos, tokens)
            i = reader.pos
        else:
            i += 1
    return found


def test_functions(
    text: str, tables: tuple[str, ...] = ()
) -> list[tuple[str, int, int, list[tuple[str, str]]]]:
    """The file's test functions not read as tables: (name, body start, body end, tokens)."""
    return [
        (name, body, end, tokens)
        for name, (body, end, tokens) in functions(text).items()
        if name.startswith("Test") and name not in tables
    ]


def table(
    tokens: list[tuple[str, str]], start: int, end: int, var: str, env: dict[str, Any]
) -> list[Any]:
    """The rows of `var := []struct{...}{...}` inside tokens[start:end]."""
    at = find(tokens, var, ":=", start=start)
    if at < 0 or at > end:
        raise GoSyntaxError(f"no table {var!r}")
    reader = Reader(tokens, at + 2, {**env, **assignments(tokens, start, at, env)})
    rows = reader.expr()
    if not isinstance(rows, list):
        raise GoSyntaxError(f"table {var!r} is not a list")
    return rows


def assignments(
    tokens: list[tuple[str, str]], start: int, end: int, env: dict[str, Any]
) -> dict[str, Any]:
    """The names given a literal value (`x := "..."`, `x = ...` in const blocks) in range."""
    found: dict[str, Any] = {}
    for i in range(start, end - 1):
        if tokens[i][0] == "ident" and tokens[i + 1][1] in (":=", "=") and tokens[i][1] != "_":
            try:
                reader = Reader(tokens, i + 2, {**env, **found})
                value = reader.expr()
            except (GoSyntaxError, IndexError, ValueError):
                continue
            ended = reader.peek() in (";", ")", "}", "") or tokens[reader.pos][0] == "ident"
            if ended and not _unresolved(value):
                found.setdefault(tokens[i][1], value)
    return found


def _unresolved(value: Any) -> bool:
    """Whether a value still holds source the reader could not turn into data."""
    if isinstance(value, dict):
        return "$expr" in value or any(_unresolved(v) for v in value.values())
    if isinstance(value, list):
        return any(_unresolved(v) for v in value)
    return False


def environment(text: str) -> dict[str, Any]:
    """A test file's top-level constants and its helpers that return a literal."""
    found = functions(text)
    tokens = tokenize(text)
    spans = sorted((b, e) for b, e, _ in found.values())
    outside: dict[str, Any] = {}
    last = 0
    for body, end in spans:
        outside.update(assignments(tokens, last, body, outside))
        last = end
    outside.update(assignments(tokens, last, len(tokens), outside))
    for name, (body, end, toks) in found.items():
        value = returned(toks, body, end, outside)
        if value is not None and not _unresolved(value):
            outside[f"{name}()"] = value
    return outside


def returned(tokens: list[tuple[str, str]], start: int, end: int, env: dict[str, Any]) -> Any:
    """What a function `{ return <literal> }` returns (None when it does more)."""
    if tokens[start + 1][1] != "return":
        return None
    reader = Reader(tokens, start + 2, env)
    try:
        value = reader.expr()
    except (GoSyntaxError, IndexError, ValueError):
        return None
    return value if reader.pos == end - 1 else None
