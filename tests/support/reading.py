"""One engine's reader on a completion, in the context the worker gives it
(`reading_context`), for tests that check a reader's message."""

from __future__ import annotations

from app.render.answer import AnswerRequest, ParsedAnswer
from app.render.core import reading_context
from app.render.engines import ENGINES
from app.render.limits import DEFAULT_LIMITS, RenderLimits


def read_by(
    engine_id: str, answer: AnswerRequest, limits: RenderLimits = DEFAULT_LIMITS
) -> ParsedAnswer:
    """The message the reader of engine `engine_id` reads from `answer.completion`
    (empty or not, declined or not: the reader's own answer)."""
    engine = ENGINES[engine_id]
    assert engine.reader is not None, engine.info.help.no_parser
    _, context = reading_context(engine, engine.reader, answer, limits)
    return engine.reader.read(answer.completion, context)
