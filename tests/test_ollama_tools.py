"""Ollama's tools parser for Go templates: the tag, then JSON objects naming a tool.

The cases are facts from Ollama's own tools_test.go (fb30760): what its parser gives, fed
those chunks, for a Qwen-like (`<tool_call>`), Mistral-like (`[TOOL_CALLS]`) or bare-JSON
(`{`) tag.
"""

from __future__ import annotations

import pytest

from app.render.engines.ollama.tools import ToolsParser, read_tool_calls

NAMES = ["get_temperature", "get_conditions", "say_hello"]
LONDON = ("get_temperature", {"city": "London", "format": "fahrenheit"})
TOKYO = ("get_conditions", {"location": "Tokyo"})


def _parse(tag: str, chunks: list[str]):
    """Everything the parser gives over the chunks, as Ollama's test gathers it."""
    parser = ToolsParser(tag, NAMES)
    content, calls = "", []
    for chunk in chunks:
        found, text = parser.add(chunk)
        content += text
        calls += found
    return content, calls


@pytest.mark.parametrize(
    ("tag", "chunks", "content", "calls"),
    [
        (
            "<tool_call>",
            ["Hello, how can I help you today?"],
            "Hello, how can I help you today?",
            [],
        ),
        (
            "<tool_call>",
            ['<tool_call>{"name": "get_conditions", "arguments": {}}</tool_call>'],
            "",
            [("get_conditions", {})],
        ),
        (
            "<tool_call>",
            [
                'Okay, let\'s call both tools! <tool_call>{"name": "get_temperature", '
                '"arguments": {"city": "London", "format": "fahrenheit"}}</tool_call>'
                '<tool_call>{"name": "get_conditions", "arguments": {"location": "Tokyo"}}'
                "</tool_call>"
            ],
            "Okay, let's call both tools! ",
            [LONDON, TOKYO],
        ),
        (
            "[TOOL_CALLS] [",
            [
                '[TOOL_CALLS] [{"name": "get_temperature", "arguments": {"city": "London", '
                '"format": "fahrenheit"}}, {"name": "get_conditions", "arguments": '
                '{"location": "Tokyo"}}][/TOOL_CALLS]'
            ],
            "",
            [LONDON, TOKYO],
        ),
        # Split across chunks: the tag's start is held back until it completes.
        (
            "<tool_call>",
            [
                "Let me check. <tool",
                '_call>{"name": "get_conditions", ',
                '"arguments": {"location": "Tokyo"}}',
            ],
            "Let me check. ",
            [TOKYO],
        ),
        # A bare "{" tag gives up once other text comes first.
        (
            "{",
            ['Sure: {"name": "get_conditions", "arguments": {"location": "Tokyo"}}'],
            'Sure: {"name": "get_conditions", "arguments": {"location": "Tokyo"}}',
            [],
        ),
        # Arguments given as JSON text, under "parameters".
        (
            "{",
            ['{"name": "get_conditions", "parameters": "{\\"location\\": \\"Tokyo\\"}"}'],
            "",
            [TOKYO],
        ),
    ],
)
def test_ollamas_tool_parser(tag, chunks, content, calls):
    assert _parse(tag, chunks) == (content, calls)


def test_chat_sends_a_chunks_content_and_drops_its_calls():
    # /api/chat answers a chunk's content when it has any; its calls then go unsent.
    text = 'Let me check. <tool_call>{"name": "get_conditions", "arguments": {"location": "Tokyo"}}'
    assert read_tool_calls("<tool_call>", NAMES, [text]) == ("Let me check. ", [])
    chunks = ["Let me check. ", text.removeprefix("Let me check. ")]
    assert read_tool_calls("<tool_call>", NAMES, chunks) == ("Let me check. ", [TOKYO])


def test_lfm2_reads_a_whole_answer_as_a_stream_ending_in_an_empty_done_chunk() -> None:
    """Ollama hands its parser the text in chunks and then the stop message, which
    llama-server sends empty: lfm2's reading of a bare call (no tags), which only looks at
    what the done chunk adds, never runs on a real answer. Tagged calls are read."""
    from app.render.engines.ollama.parsers import PARSERS

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    bare = PARSERS["lfm2"]('[get_weather(city="Paris")]', tools, None)
    assert (bare.content, bare.tool_calls) == ('[get_weather(city="Paris")]', ())
    tagged = PARSERS["lfm2"](
        '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>', tools, None
    )
    assert [call[0] for call in tagged.tool_calls] == ["get_weather"]


def test_a_named_parser_that_refuses_the_answer_gives_ollamas_error() -> None:
    """Ollama's /api/chat answers `{"error": ...}` when its parser fails on the answer
    (server/routes.go: parserErr); the reading says so instead of raising."""
    from app.render.engines.ollama.named_parser import read_named
    from app.render.request import RenderRequest

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    request = RenderRequest(template="{{ .Prompt }}", messages=[], tools=tools)
    answer = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    parsed = read_named("qwen3-coder", request, answer)
    assert parsed.error and "qwen3-coder" in parsed.error
    assert parsed.tool_calls == ()
