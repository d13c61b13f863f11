"""The edge-llm engine end to end against TensorRT Edge-LLM's own renderer: for every
shared template its load verdict, and for every recorded conversation its prompt or its
error, from the request as a client sends it (`oracles/edge_llm/recorded.json`).

The recording called Edge-LLM's C++ chat template code directly; the engine puts Edge-LLM's
OpenAI server in front of it (docs/engines/edge-llm.md), which refuses some of those
requests outright: those must be refused, in the server's words, and the rest render as
recorded. (What the C++ code made of the refused ones is checked in
test_edge_llm_context.py, without the server.)"""

from __future__ import annotations

from typing import Any

import pytest

from app.problems import LOAD_ERROR, TemplateProblem
from app.render.core import render_with
from app.render.engines.edge_llm import EdgeLlmEngine
from app.render.engines.edge_llm.context import edge_context
from oracles.edge_llm import recorded
from tests.support.corpus import case_request, load_conversations
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
#: The recorded conversations Edge-LLM's server refuses, and why (read at 83f5f76:
#: api/protocol.py forbids unknown fields and takes only enable_thinking and
#: reasoning_effort as chat_template_kwargs; parsing/tool_calling.py wants a forced tool
#: among the tools).
CONTINUE = "continue_final_message: Extra inputs are not permitted"
SERVER_REFUSES = {
    "continue-final-message": CONTINUE,
    "continue-trailing-space": CONTINUE,
    "continue-reasoning-content": CONTINUE,
    "continue-content-blocks": CONTINUE,
    "continue-final-user": CONTINUE,
    "documents": "documents: Extra inputs are not permitted",
    "date-string-kwarg": "unsupported chat_template_kwargs: date_string",
    "kwargs-override-special-tokens": "unsupported chat_template_kwargs: bos_token, eos_token",
    "kwargs-string-variables": "unsupported chat_template_kwargs: datetime, functions",
    "edge-request-fields": "Unknown forced tool name: get_weather",
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


def _server_context_differs(stem: str, case: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Whether the server hands Edge-LLM's C++ code a context that renders otherwise than
    the recording's: they differ only in `tool_choice`, "none" where a request offers no
    tools (`validate_tool_request`) where the recording passed the C++ default, "auto",
    which only a template that names it can see (Inja has no way to list the context)."""
    ours, _ = edge_context(case_request(case, _template(stem)))
    theirs = recorded()["contexts"][expected["context"]]
    if ours == theirs:
        return False
    assert (ours["tool_choice"], theirs["tool_choice"], case["tools"]) == ("none", "auto", None)
    assert ours == {**theirs, "tool_choice": "none"}
    return "tool_choice" in _template(stem)


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
        if name in SERVER_REFUSES:
            refusal = f"Edge-LLM's server refuses the request: {SERVER_REFUSES[name]}"
            if (outcome, text[: len(refusal)]) != ("error", refusal):
                differ.append(f"{name}: {outcome} {text[:80]!r}, not refused")
            continue
        if _server_context_differs(stem, CASES[name], expected):
            continue
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
