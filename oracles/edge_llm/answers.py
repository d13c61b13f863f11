"""Edge-LLM's answer parsing as recorded (`answers.json`, `oracles/edge_llm/record.py`)
and as its own tests state it (`parser_cases.json`), and the edge-llm engine's reading of
the same case in the same form."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from app.render.answer import AnswerRequest, ParsedAnswer
from app.render.core import RenderRequest, read_with
from app.render.engines import ENGINES
from app.render.engines.edge_llm.answers.calls import ServerFailure, tools_of
from app.render.engines.edge_llm.answers.parse import parse
from app.render.engines.edge_llm.answers.reasoning import PARSERS, auto_reasoning
from app.render.engines.edge_llm.server import check_tools
from app.render.limits import DEFAULT_LIMITS
from tests.support import REPO

HERE = Path(__file__).parent
COMPLETIONS = REPO / "tests" / "support" / "answers" / "completions.json"


@cache
def recorded() -> dict[str, Any]:
    return json.loads((HERE / "answers.json").read_text(encoding="utf-8"))


@cache
def own_cases() -> dict[str, Any]:
    return json.loads((HERE / "parser_cases.json").read_text(encoding="utf-8"))


@cache
def _menu() -> dict[tuple[str, str], str]:
    entries = json.loads(COMPLETIONS.read_text(encoding="utf-8"))["entries"]
    return {(e["template"], e["kind"]): e["completion"] for e in entries if "completion" in e}


def text_of(case: dict[str, Any]) -> str:
    """The case's completion (a menu case names the menu's entry)."""
    if "menu" in case:
        return _menu()[(case["menu"]["template"], case["menu"]["kind"])]
    return case["text"]


def ours(case: dict[str, Any], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The edge-llm engine's reading of the case, in the recording's form."""
    kwargs = {} if case.get("tool_choice") is None else {"tool_choice": case["tool_choice"]}
    question = [{"role": "user", "content": "q"}]
    request = RenderRequest(template="", messages=question, tools=tools, kwargs=kwargs)
    mode, forced = check_tools(request)
    reads_tools = bool(tools) and mode != "none"
    name = case["reasoning_parser"]
    parser = PARSERS[auto_reasoning((case["model"],)) if name == "auto" else name]
    try:
        parsed = parse(
            text_of(case), tools_of(tools or [], forced) if reads_tools else None, parser
        )
    except ServerFailure as failure:
        return {"raises": {"type": failure.kind, "message": str(failure)}}
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in parsed.calls]
    return {"content": parsed.content, "reasoning": parsed.reasoning, "calls": calls}


def engine_reading(
    completion: str,
    tools: list[dict[str, Any]] | None,
    *,
    names: tuple[str, ...] = ("Qwen3-8B",),
    kwargs: dict[str, Any] | None = None,
    options: dict[str, str] | None = None,
) -> ParsedAnswer:
    """The edge-llm engine's answer to `completion` after a one-question request with
    these tools and kwargs, for a model of these names (a Qwen3 by default)."""
    request = RenderRequest(
        template="{{ messages[0].content }}",
        messages=[{"role": "user", "content": "Weather?"}],
        tools=tools,
        kwargs=kwargs or {},
        add_generation_prompt=True,
        engine="edge-llm",
    )
    answer = AnswerRequest(request, completion, options or {}, model_names=names)
    reading = read_with(ENGINES["edge-llm"], answer, DEFAULT_LIMITS)
    assert reading.no_parser is None and reading.answer is not None
    return reading.answer
