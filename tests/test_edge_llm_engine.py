"""The edge-llm engine end to end against TensorRT Edge-LLM's own renderer: for every
shared template its load verdict, and for every recorded conversation its prompt or its
error, from the request as a client sends it (`tests/support/edge_llm/recorded.json`)."""

from __future__ import annotations

from typing import Any

import pytest

from app.problems import LOAD_ERROR, TemplateProblem
from app.render.core import render_with
from app.render.engines.edge_llm import EdgeLlmEngine
from tests.support.corpus import case_request, load_conversations
from tests.support.edge_llm import recorded
from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()

ENGINE = EdgeLlmEngine()
#: The corpus's cases with the defaults Edge-only conversations leave out.
DEFAULTS: dict[str, Any] = {
    "tools": None,
    "documents": None,
    "add_generation_prompt": False,
    "continue_final_message": False,
    "kwargs": {},
    "special_tokens": {"bos_token": "<s>", "eos_token": "</s>"},
}
CASES = {
    case["name"]: case
    for case in load_conversations()
    + [{**DEFAULTS, **case} for case in recorded()["extra_conversations"]]
}


def _template(stem: str) -> str:
    return (TEMPLATES_DIR / f"{stem}.jinja").read_text(encoding="utf-8")


def _outcome(stem: str, case: dict[str, Any]) -> tuple[str, str]:
    try:
        return "ok", render_with(ENGINE, case_request(case, _template(stem))).prompt
    except TemplateProblem as problem:
        return "error", problem.message


@pytest.mark.parametrize("stem", sorted(recorded()["templates"]))
def test_each_template_loads_or_is_refused_as_edge_llm_does(stem):
    verdict = recorded()["templates"][stem]["load"]
    first = next(iter(CASES.values()))
    try:
        render_with(ENGINE, case_request(first, _template(stem)))
    except TemplateProblem as problem:
        if problem.type == LOAD_ERROR:
            assert not verdict["ok"], problem.message
            assert problem.message == f"Edge-LLM would not load this model: {verdict['error']}"
            return
    assert verdict["ok"], verdict.get("error")


@pytest.mark.parametrize("stem", sorted(recorded()["templates"]))
def test_each_conversation_renders_or_fails_as_edge_llm_does(stem):
    renders = recorded()["templates"][stem].get("renders", {})
    differ = []
    for name, expected in renders.items():
        if name not in CASES:  # a variant with the arguments parsed by the client
            continue
        outcome, text = _outcome(stem, CASES[name])
        wanted = expected.get("prompt") if expected["outcome"] == "ok" else expected["error"]
        if (outcome, text) != (expected["outcome"], wanted):
            differ.append(
                f"{name}: {outcome} {text[:80]!r} != {expected['outcome']} {wanted!r:.80}"
            )
    assert differ == []


def test_the_counts_of_the_issue():
    templates = recorded()["templates"]
    loads = [stem for stem, entry in templates.items() if entry["load"]["ok"]]
    assert (len(templates), len(loads)) == (68, 59)
    firefunction = templates["fireworks-ai-llama-3-firefunction-v2"]["load"]["error"]
    assert "(at 4:" in firefunction and "filter" in firefunction
