"""Ollama's thinking parser for Go templates; the cases are facts from its own
thinking/parser_test.go (fb30760)."""

from __future__ import annotations

import pytest

from app.render.engines.ollama.thinking import ThinkingParser


@pytest.mark.parametrize(
    ("chunks", "thinking", "content"),
    [
        (["<think> internal </think> world"], "internal ", "world"),
        (["<think>a</think><think>b</think>c"], "a", "<think>b</think>c"),
        (["no think"], "", "no think"),
        # Content before the tag: no thinking, and the spaces stay.
        (["  abc", "def"], "", "  abcdef"),
        (["  abc <think>def</think> ghi"], "", "  abc <think>def</think> ghi"),
        # Split tags wait for the next chunk.
        (["<thi", "nk>", "  deep", "</th", "ink>", "  ", "answer"], "deep", "answer"),
    ],
)
def test_ollamas_thinking_parser(chunks, thinking, content):
    parser = ThinkingParser("<think>", "</think>")
    said = [parser.add(chunk) for chunk in chunks]
    assert ("".join(t for t, _ in said), "".join(c for _, c in said)) == (thinking, content)


def test_a_separator_control_character_is_not_space_as_in_go():
    # Python takes \x1c as white space; Go's unicode.IsSpace does not.
    assert ThinkingParser("<think>", "</think>").add("\x1c<think>x</think>y") == (
        "",
        "\x1c<think>x</think>y",
    )
