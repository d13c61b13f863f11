"""The Response view's data: what every engine's runtime returns for the completion, and
whether its next prompt still starts with this one.

For each engine: its parser options (server flags) with the values in force, the message
its OpenAI-compatible API (or library) returns for the completion, read in a sandbox
worker, or the sentence saying what its program does instead; then the round trip
(`app.answers.roundtrip`): that message sent back, the next request rendered by the
same engine, compared with the prompt the completion continued.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from app.answers.roundtrip import RoundTrip, compare, next_request, sent_back, unchecked
from app.answers.stop_tokens import cut_stop_token
from app.problems import TemplateProblem, limit_exceeded
from app.render.answer import AnswerRequest, ParsedAnswer, ParserOption, Reading
from app.render.client import as_sent
from app.render.core import Engine, Rendered, RenderRequest
from app.render.engines import ENGINES
from app.render.pool import read_in_worker, render_in_worker

#: The largest completion read, in KiB (`PLAYGROUND_COMPLETION_KB`).
DEFAULT_COMPLETION_KB = 256


@dataclass
class EngineResponse:
    """One engine's answer to the completion."""

    engine: str
    engine_name: str
    options: tuple[ParserOption, ...] = ()
    #: The value in force of each option (the one asked for, else its default).
    chosen: dict[str, str] = field(default_factory=dict)
    answer: ParsedAnswer | None = None
    #: What its program does with a completion, when the engine does not read it.
    no_parser: str | None = None
    #: Why the reading (or the prompt it continues) failed: a limit, a template error.
    problem: TemplateProblem | None = None
    round_trip: RoundTrip | None = None
    #: Whether the view marks it as reading the completion differently
    #: (`mark_disagreements`), and the engines whose message means something else.
    differs: bool = False
    differs_from: tuple[str, ...] = ()

    @property
    def message_text(self) -> str:
        """The message as its API sends it: JSON, its keys in the API's order."""
        message = self.answer.message() if self.answer else None
        return json.dumps(message, indent=2, ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "engine_name": self.engine_name,
            "options": [option.to_json() for option in self.options],
            "chosen": self.chosen,
            **(self.answer.to_json() if self.answer else {"parser": None, "message": None}),
            "no_parser": self.no_parser,
            "problem": None if self.problem is None else self.problem.to_json(),
            "round_trip": None if self.round_trip is None else self.round_trip.to_json(),
            "differs": self.differs,
            "differs_from": list(self.differs_from),
        }


@dataclass
class Response:
    """Every engine's answer to one completion."""

    completion: str | None
    engines: list[EngineResponse]
    #: The stop token the completion ended with, which every engine read it without.
    stop_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "completion": self.completion,
            "stop_token": self.stop_token,
            "engines": [engine.to_json() for engine in self.engines],
        }


def check_completion_size(completion: str | None, max_kb: int) -> None:
    """Refuse a completion larger than `max_kb` KiB (`PLAYGROUND_COMPLETION_KB`)."""
    size = len((completion or "").encode("utf-8", "surrogatepass"))
    if size > max_kb * 1024:
        raise limit_exceeded(
            "completion_kb",
            f"The completion is {size:,} bytes; the limit is {max_kb:,} KiB "
            "(PLAYGROUND_COMPLETION_KB).",
        )


def read_completion(
    request: RenderRequest,
    completion: str | None,
    parsers: dict[str, dict[str, str]],
    run: Callable[..., Any],
    response_template: str | None = None,
    *,
    round_trip: bool = True,
    model_names: tuple[str, ...] = (),
) -> Response:
    """Every engine's reading of `completion` after `request`'s prompt; `run(function,
    *args)` runs a task in the sandbox pool (`SandboxPool.run`); `model_names`, what is
    known of the model's name (`AnswerRequest.model_names`)."""

    def render(sent: RenderRequest) -> Rendered:
        return run(render_in_worker, sent)

    given = completion
    completion, stop = cut_stop_token(completion or "", request.template, request.special_tokens)
    responses = []
    for engine in ENGINES.values():
        info = engine.info
        sent, _ = as_sent(replace(request, engine=info.id))
        options = parsers.get(info.id, {})
        answer = AnswerRequest(sent, completion or "", options, response_template, model_names)
        response = EngineResponse(info.id, info.name)
        try:
            reading: Reading = run(read_in_worker, answer)
        except TemplateProblem as problem:
            response.problem = problem
            responses.append(response)
            continue
        response.options = reading.options
        response.no_parser = reading.no_parser
        response.chosen = reading.chosen
        response.answer = reading.answer
        if round_trip and completion and reading.answer is not None:
            response.round_trip = _round_trip(engine, sent, completion, reading.answer, render)
        responses.append(response)
    mark_disagreements(responses)
    return Response(given, responses, stop)


def _round_trip(
    engine: Engine,
    request: RenderRequest,
    completion: str,
    answer: ParsedAnswer,
    render: Callable[[RenderRequest], Rendered],
) -> RoundTrip:
    """`answer` sent back to `engine` and compared with the prompt it continued."""
    if (reason := unchecked(request, answer)) is not None:
        return RoundTrip(None, reason)
    message = sent_back(answer, engine.info.openai_server)
    assert message is not None
    try:
        prompt = render(request).prompt
        next_prompt = render(next_request(request, message)).prompt
    except TemplateProblem as problem:
        return RoundTrip(None, f"The next request does not render: {problem.message}")
    return compare(prompt, completion, next_prompt, answer)


def meaning(answer: ParsedAnswer) -> str:
    """What a message says, for telling engines apart: its fields, with each call's
    name and arguments as JSON values (ids are each runtime's own; spacing is the round
    trip's business)."""
    calls = []
    for call in answer.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments
        calls.append([call.name, arguments])
    said = [answer.error, answer.content or "", answer.reasoning_content or "", calls]
    return json.dumps(said, sort_keys=True)


def mark_disagreements(responses: list[EngineResponse]) -> None:
    """Mark the engines whose message means something else than most engines' do.

    Engines that read the completion are grouped by what their message means; every
    engine outside the largest group is marked, and when two groups tie for largest
    (two engines that disagree, say) there is no majority to stand for the runtime's
    usual reading, so every reading engine is marked. Each marked engine names the
    engines whose message means something else."""
    read = [(r, meaning(r.answer)) for r in responses if r.answer is not None]
    sizes = Counter(said for _, said in read)
    largest = max(sizes.values(), default=0)
    majority = [said for said, size in sizes.items() if size == largest]
    for response, said in read:
        if len(sizes) > 1 and (len(majority) > 1 or said != majority[0]):
            response.differs = True
            response.differs_from = tuple(r.engine_name for r, other in read if other != said)
