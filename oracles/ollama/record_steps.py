"""Extract Ollama's parser tests written as statements (not tables) as data.

qwen3_test.go and glm47_test.go test a parser in steps: `parser := ...`,
`parser.Init(tools, last, think)`, `parser.Add(text, done)` and after each Add checks
such as `content != "..."`, `thinking != "..."`, `len(calls) != N`,
`calls[0].Function.Name != "..."`, or a `want` list of tool calls. This reads those
statements, in order, into sessions (one per Init): the parser, its Init arguments,
and each Add's text with the checks that follow it. Other statements are not read.
"""

from __future__ import annotations

from typing import Any

from oracles.ollama.gofile import assignments, functions
from oracles.ollama.goliteral import Reader, tokenize
from oracles.ollama.govalues import normalize

#: The checks read after an Add: the token pattern ("$" is the value) and its field.
CHECKS = (
    (("content", "!", "=", "$"), "content"),
    (("thinking", "!", "=", "$"), "thinking"),
    (("len", "(", "calls", ")", "!", "=", "$"), "calls"),
    (("calls", "[", "0", "]", ".", "Function", ".", "Name", "!", "=", "$"), "first_name"),
)


def _matches(tokens: list[tuple[str, str]], at: int, pattern: tuple[str, ...]) -> bool:
    """Whether `pattern` (with "$" for any value) starts at token `at`."""
    if at + len(pattern) > len(tokens):
        return False
    return all(p == "$" or tokens[at + j][1] == p for j, p in enumerate(pattern))


def _parser(reader: Reader) -> dict[str, Any]:
    """`parser := &Type{fields}` or `parser := ParserForName("name")`."""
    if reader.peek() == "&":
        reader.take()
    name = reader.peek()
    value = reader.expr()
    if isinstance(value, dict) and value.get("$call") == "ParserForName":
        return {"name": value["args"][0]}
    return {"type": name, "fields": normalize(value)}


def _session_step(tokens: list[tuple[str, str]], i: int, env: dict[str, Any]) -> Any:
    """The call `parser.Init(...)` or `parser.Add(...)` at token i, as (kind, args)."""
    if tokens[i][1] != "parser" or tokens[i + 1][1] != "." or tokens[i + 3][1] != "(":
        return None
    if tokens[i + 2][1] not in ("Init", "Add"):
        return None
    return tokens[i + 2][1], normalize(Reader(tokens, i + 3, env).arguments())


def sessions(tokens: list[tuple[str, str]], body: int, end: int, env: dict[str, Any]) -> Any:
    """The parser and the Init/Add sessions of one test function, or None."""
    env = {**env, **assignments(tokens, body, end, env)}
    parser, found = None, []
    for i in range(body, end):
        if tokens[i][1] == "parser" and tokens[i + 1][1] == ":=":
            parser = _parser(Reader(tokens, i + 2, env))
        step = _session_step(tokens, i, env)
        if step and step[0] == "Init":
            found.append({"init": step[1], "steps": []})
        elif step and found:
            found[-1]["steps"].append({"text": step[1][0], "done": step[1][1], "checks": {}})
        for pattern, field in CHECKS:
            if found and found[-1]["steps"] and _matches(tokens, i, pattern):
                value = normalize(Reader(tokens, i + len(pattern) - 1, env).expr())
                found[-1]["steps"][-1]["checks"].setdefault(field, value)
    if parser is None or not found:
        return None
    if "want" in env:
        found[-1]["want"] = normalize(env["want"])
    if "expectedArgs" in env:  # the first call's arguments
        found[-1]["want_args"] = normalize(env["expectedArgs"])
    return {"parser": parser, "sessions": found}


def extract_steps(text: str, env: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The session cases of a statement-style test file, and the tests left out, why."""
    cases, skipped = [], {}
    for name, (body, end, tokens) in functions(text).items():
        if not name.startswith("Test"):
            continue
        found = sessions(tokens, body, end, env)
        if found is None:
            skipped[name] = (
                "it calls an internal function of the parser, not a parser's Init and Add, "
                "so there is no parser session to read"
            )
            continue
        for index, session in enumerate(found["sessions"]):
            if not any(step["checks"] for step in session["steps"]) and "want" not in session:
                continue  # a session that only sets up the next (nothing is checked)
            fields = {"parser": found["parser"], **session}
            cases.append({"test": name, "name": f"session {index}", "fields": fields})
    return cases, skipped


__all__ = ["extract_steps", "tokenize"]
