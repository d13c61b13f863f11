"""The vllm engine against vLLM itself, over every shared template × corpus conversation.

`tests/support/vllm/recorded.json` holds what vLLM rendered for each pair, or the error it
answered with, recorded by `bench/record_vllm.py` with vLLM's own request validation and
renderer running here on the CPU. The engine must render every pair as vLLM did, but for
the reasoned entries of `KNOWN_DIFFERENCES` (none today). Edge-LLM's engine shares the
vLLM contract's code: where its documented differences leave a request as vLLM shapes
it, that shared code must shape it as vLLM did too.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from app.problems import TemplateProblem
from app.render.core import Rendered, render_with
from app.render.engines.vllm import VllmEngine
from app.render.engines.vllm.contract import Refused
from app.render.engines.vllm.engine import normalise
from tests.support.corpus import CONVERSATIONS_FILE, case_request, load_conversations
from tests.support.shared_data import require_shared, template_files
from tests.support.vllm import RECORDED

require_shared()

RECORDING = json.loads(RECORDED.read_text(encoding="utf-8"))
TEMPLATES = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
CASES = {case["name"]: case for case in load_conversations()}
#: (template, conversation): why the engine cannot render that pair as vLLM did.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_recording_is_of_this_vllm_these_templates_and_this_corpus():
    # Stale recordings say so: re-record with `python -m bench.record_vllm`.
    assert RECORDING["versions"]["vllm"] == VllmEngine.version
    assert RECORDING["templates"] == {name: _sha256(text) for name, text in TEMPLATES.items()}
    assert RECORDING["corpus_sha256"] == _sha256(CONVERSATIONS_FILE.read_text(encoding="utf-8"))


def _as_vllm_answered(outcome: Rendered | TemplateProblem) -> dict[str, Any]:
    """Our outcome in the recording's terms: a prompt, a refusal (vLLM's request model
    refuses before any template runs: a pydantic ValidationError there), or what the
    template raised (the cause of vLLM's VLLMValidationError)."""
    if isinstance(outcome, Rendered):
        return {"outcome": "ok", "prompt": outcome.prompt}
    if outcome.type == "InvalidRequest":
        return {"outcome": "error", "type": "ValidationError"}
    return {"outcome": "error", "type": "VLLMValidationError", "cause": outcome.type}


def _recorded_as_compared(recorded: dict[str, Any]) -> dict[str, Any]:
    if recorded["outcome"] == "ok":
        return recorded
    if recorded["type"] == "ValidationError":
        return {"outcome": "error", "type": "ValidationError"}
    return {"outcome": "error", "type": recorded["type"], "cause": recorded["cause"]}


def _ours(template: str, case: str) -> dict[str, Any]:
    try:
        outcome: Rendered | TemplateProblem = render_with(
            VllmEngine(), case_request(CASES[case], TEMPLATES[template])
        )
    except TemplateProblem as problem:
        outcome = problem
    return _as_vllm_answered(outcome)


def test_the_engine_renders_every_pair_as_vllm_did():
    pairs = [(t, c) for t, cases in RECORDING["renders"].items() for c in cases]
    assert len(pairs) == len(TEMPLATES) * len(CASES)
    differ, prompts = [], 0
    for template, case in pairs:
        recorded = _recorded_as_compared(RECORDING["renders"][template][case])
        prompts += recorded["outcome"] == "ok"
        if _ours(template, case) != recorded and (template, case) not in KNOWN_DIFFERENCES:
            differ.append(f"{template} × {case}")
    print(f"vllm: {len(pairs)} pairs, {len(pairs) - len(differ)} as vLLM {VllmEngine.version}, "
          f"{prompts} of them prompts")  # fmt: skip
    assert differ == []
    still = [pair for pair in KNOWN_DIFFERENCES if _ours(*pair) != _recorded(*pair)]
    assert still == list(KNOWN_DIFFERENCES), "a known difference is gone: drop its entry"


def _recorded(template: str, case: str) -> dict[str, Any]:
    return _recorded_as_compared(RECORDING["renders"][template][case])


@cache
def _shaped(contract: Any, template: str, case: str) -> Any:
    """The request as `contract`'s rules shape it, without the rewrites; None if refused."""
    try:
        request, _ = normalise(case_request(CASES[case], TEMPLATES[template]), contract)
    except Refused:
        return None
    return request
