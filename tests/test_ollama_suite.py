"""Ollama's own renderer and parser tests (oracles/ollama/cases.json, extracted from
ollama/ollama's *_test.go by oracles/ollama/record.py) run against the engine's
renderers and parsers. A case whose part is not reproduced is skipped with its reason
(`python -m oracles.ollama.run` tallies them per family)."""

from __future__ import annotations

import pytest

from oracles.ollama.gofile import environment, functions, table
from oracles.ollama.govalues import normalize
from oracles.ollama.run import RUNNERS, NotBuilt, load, run, same

COMMIT, CASES, SKIPPED = load()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_ollama_own_test_case(case) -> None:
    try:
        got, want = run(case)
    except NotBuilt as why:
        pytest.skip(str(why))
    assert same(got, want), f"{case.file}::{case.id}"


def test_every_left_out_test_function_says_why() -> None:
    assert COMMIT.startswith("fb30760")
    reasons = [why for tests in SKIPPED.values() for why in tests.values()]
    assert reasons and all(len(why) > 30 for why in reasons)
    assert {case.test for case in CASES} >= set(RUNNERS)


GO = """
const q = `<|"|>`

func helper() []api.Tool { return []api.Tool{{Function: api.ToolFunction{Name: "x"}}} }

func TestThing(t *testing.T) {
    tests := []struct{ name string; msgs []api.Message; want any; think *api.ThinkValue }{
        {name: "a\\tb", msgs: []api.Message{{Role: "user", Content: "hi" + q}}, want: 1.5},
        {name: "c", want: map[string]any{"K": testArgs(map[string]any{"n": float64(2)})},
        think: &api.ThinkValue{Value: "high"}, msgs: nil},
        {name: "d", want: helper()[0]},
    }
}
"""


def test_the_go_reader_reads_table_rows_as_api_json() -> None:
    body, end, tokens = functions(GO)["TestThing"]
    rows = [normalize(row) for row in table(tokens, body, end, "tests", environment(GO))]
    assert rows[0] == {
        "name": "a\tb",
        "msgs": [{"role": "user", "content": 'hi<|"|>'}],
        "want": 1.5,
    }
    # Map keys stay as written (only struct fields become JSON names); float64 stays float.
    assert rows[1]["want"] == {"K": {"n": 2.0}} and rows[1]["think"] == "high"
    assert rows[1]["msgs"] is None
    assert rows[2]["want"] == {"function": {"name": "x"}}


def test_ollama_harmony_routes_channels_and_reads_one_call_by_its_user_name() -> None:
    """Ollama's handler (harmonyparser.go) has no upstream test of its routing: analysis
    is thinking, a recipient's text is the call's JSON, the Harmony-safe tool name maps
    back to the user's, and <|call|>/<|return|> are not message ends to it."""
    from app.render.engines.ollama.parsers import PARSERS

    tools = [{"type": "function", "function": {"name": "get-weather"}}]
    answer = (
        "<|channel|>analysis<|message|>Need the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris"}'
    )
    message = PARSERS["harmony"](answer, tools, True)
    assert message.thinking == "Need the weather."
    assert message.content == ""
    assert message.tool_calls == (("get-weather", {"city": "Paris"}),)
    final = PARSERS["harmony"]("<|channel|>final<|message|>Hi<|return|>", None, None)
    assert final.content == "Hi<|return|>"
