"""The edge-llm engine over every real template × every corpus conversation.

Each request is normalised by Edge-LLM's rules, then the real transformers library
renders the normalised request: the engine's prompt must be that string (or the same
error), so the rules reach the template exactly as transformers takes them. (The vllm
engine is checked against vLLM itself, in tests/test_vllm_real.py: it renders with the
transformers vLLM installs.) The count of pairs whose prompt differs from plain
transformers is the measure of what the rules change.

All pairs run in one test, in this process: no pool round-trip per pair.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from app.problems import TemplateProblem
from app.render.core import RenderRequest, render_with
from app.render.engines.edge_llm import EdgeLlmEngine
from app.render.engines.vllm.contract import Contract, Refused
from app.render.engines.vllm.engine import ServerEngine, normalise
from tests.support.corpus import case_request, load_conversations
from tests.support.reference import Outcome, reference_render
from tests.support.shared_data import require_shared, template_files

require_shared()

TEMPLATES = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
CASES = load_conversations()


def _as_case(request: RenderRequest) -> dict[str, Any]:
    """A normalised request as a corpus case, for the reference render."""
    return {
        "messages": request.messages,
        "tools": request.tools,
        "documents": request.documents,
        "add_generation_prompt": request.add_generation_prompt,
        "continue_final_message": request.continue_final_message,
        "kwargs": request.kwargs,
        "special_tokens": request.special_tokens,
    }


def _ours(engine: ServerEngine, request: RenderRequest) -> Outcome:
    try:
        return ("ok", render_with(engine, request).prompt)
    except TemplateProblem as problem:
        return ("error", problem.type, problem.message)


def _same(ours: Outcome, expected: Outcome) -> bool:
    if expected[0] == "ok":
        return ours == expected
    return ours[0] == "error" and ours[1:] == expected[1:]


#: The corpus cases vLLM answers with a 400.
REFUSED_CASES = {
    "continue-reasoning-content",
    "tool-call-single-object-args",
    "tool-call-parallel",
    "tool-call-content-null",
}


@cache
def _plain(template: str, case_index: int) -> Outcome:
    """What plain transformers renders for the case as given."""
    return reference_render(CASES[case_index], TEMPLATES[template])


@cache
def _normalised(contract: Contract, template: str, case_index: int) -> dict[str, Any] | None:
    """The case as `contract`'s rules hand it to transformers; None: the server refuses it."""
    try:
        normalised, _ = normalise(case_request(CASES[case_index], TEMPLATES[template]), contract)
    except Refused:
        return None
    return _as_case(normalised)


def test_rules_render_as_transformers_renders_the_normalised_request():
    """Only requests the rules change are rendered again: an unchanged request renders as
    transformers does (test_conformance)."""
    engine: ServerEngine = EdgeLlmEngine()
    mismatches, refused, changed, rendered = [], set(), 0, 0
    pairs = [(name, index) for name in TEMPLATES for index in range(len(CASES))]
    for name, index in pairs:
        normalised = _normalised(engine.contract, name, index)
        if normalised is None:
            refused.add(CASES[index]["name"])
            continue
        original = _as_case(case_request(CASES[index], TEMPLATES[name]))
        if normalised == original:
            continue
        rendered += 1
        expected = reference_render(normalised, TEMPLATES[name])
        if not _same(_ours(engine, case_request(CASES[index], TEMPLATES[name])), expected):
            mismatches.append(f"{name}×{CASES[index]['name']}")
        changed += expected != _plain(name, index)
    print(
        f"{engine.id}: {len(pairs)} pairs, {len(refused)} cases refused, "
        f"{rendered} rendered again, "
        f"{changed} prompts differ from transformers'"
    )
    assert mismatches == []
    # The rules matter, but most renders stay as transformers makes them.
    assert 0.05 * len(pairs) <= changed <= 0.35 * len(pairs)
    # vLLM's request model, which Edge-LLM's follows, refuses object arguments and a
    # continued field other than the content, whatever the template.
    assert refused == REFUSED_CASES
