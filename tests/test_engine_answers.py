"""Every engine either reads a completion as its program does or says plainly what its
program does instead; its parser options are well-formed."""

from __future__ import annotations

from collections import Counter

import pytest

from app.render.answer import AnswerReader, AnswerRequest, ParsedAnswer, ParserOption, ReadContext
from app.render.core import Engine, EngineInfo, Rendered, RenderRequest, read_with
from app.render.engines import ENGINES, parser_choices
from app.render.engines.vllm import answers as vllm_answers
from app.render.engines.vllm import engine as vllm_engine
from app.render.limits import DEFAULT_LIMITS, RenderLimits

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
REQUEST = RenderRequest(
    template=CHATML, messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True
)


@pytest.mark.parametrize("engine", ENGINES.values(), ids=lambda engine: engine.info.id)
def test_each_engine_reads_the_answer_or_says_what_it_does(engine):
    request = RenderRequest(**{**REQUEST.__dict__, "engine": engine.info.id})
    reading = read_with(engine, AnswerRequest(request, "Hello there."), DEFAULT_LIMITS)
    if reading.no_parser is not None:
        assert reading.answer is None and len(reading.no_parser) > 40
        return
    assert isinstance(reading.answer, ParsedAnswer) and reading.answer.parser
    assert reading.answer.message()["content"] == "Hello there."


@pytest.mark.parametrize("engine", ENGINES.values(), ids=lambda engine: engine.info.id)
def test_each_option_defaults_to_one_of_its_choices(engine):
    for option in engine.reader.options(REQUEST) if engine.reader else ():
        assert option.default in option.choices, option
        assert option.label.startswith(("--", "parse_")), option


def test_the_page_lists_the_parsers_of_the_engines_that_have_some():
    listed = {entry["id"] for entry in parser_choices()}
    assert listed == {"llama.cpp", "vllm", "edge-llm"}


CALLS: Counter[str] = Counter()


class CountingReader(AnswerReader):
    """A reader that counts what it is asked, and reads its prompt twice."""

    def options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        CALLS["options"] += 1
        return (ParserOption("flag", "--flag", ("a", "b"), "a"),)

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        said = f"{context.options['flag']} {context.prompt} {context.prompt}"
        return ParsedAnswer("counting", content=said)


class CountingEngine(Engine):
    """An engine whose prompt is "P", counting its renders."""

    info = EngineInfo(id="counting", name="Counting (test)", version="0", description="Counts.")
    reader = CountingReader()

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        CALLS["render"] += 1
        return Rendered("P", [])


def test_a_reading_resolves_its_options_and_renders_its_prompt_once():
    CALLS.clear()
    answer = AnswerRequest(REQUEST, "x", {"flag": "b"})
    reading = read_with(CountingEngine(), answer, DEFAULT_LIMITS)
    assert reading.answer is not None and reading.answer.content == "b P P"
    assert reading.chosen == {"flag": "b"}
    assert CALLS == {"options": 1, "render": 1}


def test_vllm_works_out_its_options_and_its_prompt_once_per_reading(monkeypatch):
    """vLLM's reader takes the options and the prompt from its context: its options are
    worked out once (they were twice in the worker), its prompt rendered once."""
    counts: Counter[str] = Counter()
    options, render = vllm_answers.VllmReader.options, vllm_engine.server_render

    def counted(name, function):
        def call(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(vllm_answers.VllmReader, "options", counted("options", options))
    monkeypatch.setattr(vllm_engine, "server_render", counted("render", render))
    request = RenderRequest(**{**REQUEST.__dict__, "engine": "vllm"})
    chosen = {"tool_call_parser": "hermes", "reasoning_parser": "qwen3"}
    reading = read_with(
        ENGINES["vllm"], AnswerRequest(request, "a</think>b", chosen), DEFAULT_LIMITS
    )
    assert reading.answer is not None and reading.answer.reasoning_content == "a"
    assert reading.chosen == chosen
    assert counts == {"options": 1, "render": 1}
