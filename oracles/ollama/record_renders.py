"""Extract Ollama's renderer tests written as statements (not tables) as data.

cohere_test.go tests a renderer in statements: `r := &CohereRenderer{}`, arguments
built with `args.Set(key, value)`, `got, err := r.Render(messages, tools, think)`, then
checks: `got != want` (the whole prompt), `got[len(got)-len(wantSuffix):] !=
wantSuffix` (its end) and `contains(t, got, X, ...)` (a part). lfm2_test.go checks one
helper call, `got := lfm2JSON(tool)` against `want`. This reads those into cases:
the renderer, its three arguments and the checks; or the helper, its arguments and
`want`. Other statements are not read.
"""

from __future__ import annotations

import copy
from typing import Any

from oracles.ollama.gofile import assignments, find, test_functions
from oracles.ollama.goliteral import Reader
from oracles.ollama.govalues import normalize

#: `got[len(got)-len(wantSuffix):] != wantSuffix`
SUFFIX = ("got", "[", "len", "(", "got", ")", "-", "len", "(")

#: Why a statement-style renderer test with no Render call or check read is left out.
NO_RENDER = (
    "it makes no Render call with a check the extractor reads (it checks registration, "
    "a helper or Go state, not a prompt)"
)


def _with_sets(tokens: list[tuple[str, str]], body: int, end: int, env: dict[str, Any]) -> dict:
    """The test's names, with the `x.Set(key, value)` calls on them applied in order."""
    env = copy.deepcopy({**env, **assignments(tokens, body, end, env)})
    for i in range(body, end - 3):
        name = tokens[i][1]
        called = [text for _, text in tokens[i + 1 : i + 4]] == [".", "Set", "("]
        if called and isinstance(env.get(name), dict):
            key, value = Reader(tokens, i + 3, env).arguments()
            env[name][key] = value
    return env


def _checks(tokens: list[tuple[str, str]], body: int, end: int, env: dict[str, Any]) -> dict:
    """The checks on `got`: equal, suffix and the parts it must contain."""
    checks: dict[str, Any] = {}
    if find(tokens, "got", "!", "=", "want", start=body) in range(body, end):
        checks["equal"] = normalize(env.get("want"))
    at = find(tokens, *SUFFIX, start=body)
    if body <= at < end:
        checks["suffix"] = normalize(env.get(tokens[at + len(SUFFIX)][1]))
    for i in range(body, end - 5):
        if [t for _, t in tokens[i : i + 5]] == ["contains", "(", "t", ",", "got"]:
            part = Reader(tokens, i + 6, env).expr()
            checks.setdefault("contains", []).append(normalize(part))
    return checks


def _render_case(tokens: list[tuple[str, str]], body: int, end: int, env: dict) -> Any:
    """The case of one test: its renderer's call and checks, or None."""
    call = next(
        (
            i
            for i in range(body, end - 3)
            if tokens[i + 1 : i + 4] == [("op", "."), ("ident", "Render"), ("op", "(")]
        ),
        None,
    )
    if call is None:
        return None
    renderer = next(
        (
            tokens[i + 3][1]
            for i in range(body, call)
            if tokens[i][1] == tokens[call][1] and tokens[i + 1][1] == ":="
        ),
        None,
    )
    messages, tools, think = Reader(tokens, call + 3, env).arguments()
    checks = _checks(tokens, body, end, env)
    if not checks:
        return None
    fields = {"renderer": renderer, "messages": messages, "tools": tools, "think": think}
    return {**normalize(fields), "checks": checks}


def _helper_case(tokens: list[tuple[str, str]], body: int, end: int, env: dict) -> Any:
    """`got := helper(args)` checked against `want`, or None."""
    at = find(tokens, "got", ":=", start=body)
    if not body <= at < end or "want" not in env or tokens[at + 3][1] != "(":
        return None
    args = Reader(tokens, at + 3, env).arguments()
    return {"function": tokens[at + 2][1], "args": normalize(args), "want": normalize(env["want"])}


def extract_renders(
    text: str, env: dict[str, Any], tables: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The cases of a statement-style renderer test file, and the tests left out, why
    (the test functions in `tables` are read as tables, not here)."""
    cases, skipped = [], {}
    for name, body, end, tokens in test_functions(text, tables):
        local = _with_sets(tokens, body, end, env)
        fields = _render_case(tokens, body, end, local) or _helper_case(tokens, body, end, local)
        if fields is None:
            skipped[name] = NO_RENDER
            continue
        cases.append({"test": name, "name": "statements", "fields": fields})
    return cases, skipped
