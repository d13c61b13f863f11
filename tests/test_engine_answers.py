"""Every engine either reads a completion as its program does or says plainly what its
program does instead; its parser options are well-formed."""

from __future__ import annotations

import pytest

from app.render.answer import AnswerRequest, ParsedAnswer
from app.render.core import RenderRequest, read_with
from app.render.engines import ENGINES, parser_choices
from app.render.limits import DEFAULT_LIMITS

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
REQUEST = RenderRequest(
    template=CHATML, messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True
)


@pytest.mark.parametrize("engine", ENGINES.values(), ids=lambda engine: engine.id)
def test_each_engine_reads_the_answer_or_says_what_it_does(engine):
    request = RenderRequest(**{**REQUEST.__dict__, "engine": engine.id})
    reading = read_with(engine, AnswerRequest(request, "Hello there."), DEFAULT_LIMITS)
    if reading.no_parser is not None:
        assert reading.answer is None and len(reading.no_parser) > 40
        return
    assert isinstance(reading.answer, ParsedAnswer) and reading.answer.parser
    assert reading.answer.message()["content"] == "Hello there."


@pytest.mark.parametrize("engine", ENGINES.values(), ids=lambda engine: engine.id)
def test_each_option_defaults_to_one_of_its_choices(engine):
    for option in engine.answer_options(REQUEST):
        assert option.default in option.choices, option
        assert option.label.startswith(("--", "parse_")), option


def test_the_page_lists_the_parsers_of_the_engines_that_have_some():
    listed = {entry["id"] for entry in parser_choices()}
    assert listed == {"llama.cpp", "vllm", "edge-llm"}
