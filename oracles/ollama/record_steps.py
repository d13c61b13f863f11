"""Extract Ollama's parser tests written as statements (not tables) as data.

qwen3_test.go, glm47_test.go, cohere_test.go ... test a parser in steps: `parser :=
...` (or `p`), `parser.Init(tools, last, think)`, `parser.Add(text, done)` (or
cohere's `cohereAddAll(t, p, chunks)`: each chunk added, the last with done) and after
each checks such as `content != "..."`, `thinking != "..."`, `len(calls) != N`,
`calls[N].Function.Name != "..."`, `v, ok := calls[N].Function.Arguments.Get("k");
!ok || v != ...`, or a `want` list of tool calls. This reads those statements, in
order, into sessions (one per Init): the parser, its Init arguments, and each Add's
text (and chunks) with the checks that follow it. Other statements are not read.
"""

from __future__ import annotations

from typing import Any

from oracles.ollama.gofile import assignments, test_functions
from oracles.ollama.goliteral import Reader, tokenize
from oracles.ollama.govalues import normalize

#: The checks read after an Add: the token pattern ("$" is the value) and its field.
CHECKS = (
    (("content", "!", "=", "$"), "content"),
    (("thinking", "!", "=", "$"), "thinking"),
    (("len", "(", "calls", ")", "!", "=", "$"), "calls"),
    (("calls", "[", "0", "]", ".", "Function", ".", "Name", "!", "=", "$"), "first_name"),
)


#: The names Ollama's tests give the parser under test.
PARSER_VARS = ("parser", "p")

#: `v, ok := calls[N].Function.Arguments.Get(K); !ok || v != V` ("$" any one token).
GET = ("v", ",", "ok", ":=", "calls", "[", "$", "]", ".", "Function", ".", "Arguments", ".")
GET_TAIL = ("Get", "(", "$", ")", ";", "!", "ok", "|", "|", "v", "!", "=", "$")
NAME = ("calls", "[", "$", "]", ".", "Function", ".", "Name", "!", "=", "$")


def _matches(tokens: list[tuple[str, str]], at: int, pattern: tuple[str, ...]) -> bool:
    """Whether `pattern` (with "$" for any value) starts at token `at`."""
    if at + len(pattern) > len(tokens):
        return False
    return all(p == "$" or tokens[at + j][1] == p for j, p in enumerate(pattern))


def _value(tokens: list[tuple[str, str]], at: int, env: dict[str, Any]) -> Any:
    """The value a check compares with: a name known (before the `{` of the if's body,
    which is not a composite literal) or an expression."""
    if tokens[at][0] == "ident" and tokens[at + 1][1] == "{" and tokens[at][1] in env:
        return normalize(env[tokens[at][1]])
    return normalize(Reader(tokens, at, env).expr())


def _indexed_checks(tokens: list[tuple[str, str]], i: int, env: dict[str, Any]) -> dict[str, Any]:
    """`calls[N].Function.Name != X` (N > 0) and `Arguments.Get(K)` checks at token i."""
    if _matches(tokens, i, NAME) and tokens[i + 2][1] != "0":
        return {f"name {tokens[i + 2][1]}": _value(tokens, i + len(NAME) - 1, env)}
    if _matches(tokens, i, GET + GET_TAIL):
        key = normalize(Reader(tokens, i + len(GET) + 2, env).expr())
        value = _value(tokens, i + len(GET + GET_TAIL) - 1, env)
        return {f"arg {tokens[i + 6][1]} {key}": value}
    return {}


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
    """The call `parser.Init(...)` or `parser.Add(...)` at token i, as (kind, args);
    `cohereAddAll(t, p, chunks)` is an Add of the chunks joined (its chunks kept)."""
    if tokens[i][1] == "cohereAddAll" and tokens[i + 1][1] == "(":
        chunks = normalize(Reader(tokens, i + 1, env).arguments())[2]
        return "Add", ["".join(chunks), True, chunks]
    if tokens[i][1] not in PARSER_VARS or tokens[i + 1][1] != "." or tokens[i + 3][1] != "(":
        return None
    if tokens[i + 2][1] not in ("Init", "Add"):
        return None
    return tokens[i + 2][1], normalize(Reader(tokens, i + 3, env).arguments())


def sessions(tokens: list[tuple[str, str]], body: int, end: int, env: dict[str, Any]) -> Any:
    """The parser and the Init/Add sessions of one test function, or None."""
    env = {**env, **assignments(tokens, body, end, env)}
    parser, found = None, []
    for i in range(body, end):
        assigned = tokens[i + 1 : i + 2] == [("op", ":=")] or tokens[i + 1 : i + 3] == [
            ("op", "="),
            ("op", "&"),
        ]
        if tokens[i][1] in PARSER_VARS and assigned:
            parser = _parser(Reader(tokens, i + 2, env))
        step = _session_step(tokens, i, env)
        if step and step[0] == "Init":
            found.append({"init": step[1], "steps": []})
        elif step and found:
            added = {"text": step[1][0], "done": step[1][1], "checks": {}}
            if len(step[1]) > 2:
                added["chunks"] = step[1][2]
            found[-1]["steps"].append(added)
        if not (found and found[-1]["steps"]):
            continue
        checks = found[-1]["steps"][-1]["checks"]
        for pattern, field in CHECKS:
            if _matches(tokens, i, pattern):
                checks.setdefault(field, _value(tokens, i + len(pattern) - 1, env))
        for field, value in _indexed_checks(tokens, i, env).items():
            checks.setdefault(field, value)
    if parser is None or not found:
        return None
    if "want" in env:
        found[-1]["want"] = normalize(env["want"])
    if "expectedArgs" in env:  # the first call's arguments
        found[-1]["want_args"] = normalize(env["expectedArgs"])
    return {"parser": parser, "sessions": found}


#: Why a statement-style test with no session checked is left out.
NO_CHECK = (
    "none of its parser sessions has a check the extractor reads after its Adds (its "
    "inputs or checks are built in Go code, e.g. a loop over a literal table)"
)


def extract_steps(
    text: str, env: dict[str, Any], tables: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The session cases of a statement-style test file, and the tests left out, why
    (the test functions in `tables` are read as tables, not here)."""
    cases, skipped = [], {}
    for name, body, end, tokens in test_functions(text, tables):
        found = sessions(tokens, body, end, env)
        if found is None:
            skipped[name] = (
                "it calls an internal function of the parser, not a parser's Init and Add, "
                "so there is no parser session to read"
            )
            continue
        before = len(cases)
        for index, session in enumerate(found["sessions"]):
            if not any(step["checks"] for step in session["steps"]) and "want" not in session:
                continue  # a session that only sets up the next (nothing is checked)
            fields = {"parser": found["parser"], **session}
            cases.append({"test": name, "name": f"session {index}", "fields": fields})
        if len(cases) == before:
            skipped[name] = NO_CHECK
    return cases, skipped


__all__ = ["extract_steps", "tokenize"]
