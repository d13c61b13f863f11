"""The vllm engine against vLLM itself, over every shared template × conversation.

`oracles/vllm/recorded.json` holds what vLLM rendered for each pair, or the error it
answered with, recorded by `oracles/vllm/record.py` with vLLM's own request validation and
renderer running here on the CPU. The conversations are the corpus's and vLLM's own
(`oracles/vllm/conversations.json`: several system messages, a system message after
a user's, developer and system together, tools with a system message, reasoning under
both keys, tool calls as the request model reorders or refuses them). The engine must
answer every pair as vLLM did, but for the reasoned entries of `KNOWN_DIFFERENCES` (none
today): the same prompt, or the same error, in vLLM's words where the engine passes them
on (see `_agrees`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from app.problems import TemplateProblem
from app.render.engines import render
from app.render.engines.vllm import VllmEngine
from oracles.vllm import CONVERSATIONS, KNOWN_DIFFERENCES, RECORDED
from tests.support.corpus import CONVERSATIONS_FILE, case_request, load_conversations
from tests.support.shared_data import require_shared, template_files

require_shared()

RECORDING = json.loads(RECORDED.read_text(encoding="utf-8"))
TEMPLATES = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
CASES = {case["name"]: case for case in load_conversations() + load_conversations(CONVERSATIONS)}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_recording_is_of_this_vllm_these_templates_and_these_conversations():
    # Stale recordings say so: re-record with `python -m oracles.vllm.record`.
    assert RECORDING["versions"]["vllm"] == VllmEngine.info.version
    assert RECORDING["templates"] == {name: _sha256(text) for name, text in TEMPLATES.items()}
    assert RECORDING["corpus_sha256"] == _sha256(CONVERSATIONS_FILE.read_text(encoding="utf-8"))
    extra = _sha256(CONVERSATIONS.read_text(encoding="utf-8"))
    assert RECORDING["extra_conversations_sha256"] == extra


def _first_pydantic_error(message: str) -> str:
    """`field: message` of the first error pydantic lists (its location without the
    list indexes and the union branch names, its message up to the first comma)."""
    location, detail = message.splitlines()[1:3]
    field = ".".join(
        part for part in location.split(".") if not part.isdigit() and not part[:1].isupper()
    )
    return f"{field}: {detail.strip().split(' [type=')[0].split(',')[0]}"


def _ours(template: str, case: str) -> dict[str, Any]:
    """Our outcome in the recording's terms: a prompt, or an error's type and message.
    Rendered as the API renders a request (`engines.render`): the conversation exactly as
    the case writes it, object arguments included, as vLLM itself got it."""
    request = case_request(CASES[case], TEMPLATES[template])
    try:
        rendered = render(replace(request, engine="vllm"))
    except TemplateProblem as problem:
        return {"outcome": "error", "type": problem.type, "message": problem.message}
    return {"outcome": "ok", "prompt": rendered.prompt}


def _agrees(ours: dict[str, Any], recorded: dict[str, Any]) -> bool:
    """Whether we answered as vLLM did.

    A prompt is compared whole. An error the template raised is compared by its type and
    its words: vLLM answers a 400 whose text is the Jinja error's (`_template_error_reason`),
    which the engine passes on unchanged. A request vLLM refuses before any template runs
    is an `InvalidRequest` here. vLLM's own refusals (a VLLMValidationError without a
    cause) are worded as vLLM words them, after the message's place. Its request model's
    are a pydantic ValidationError listing every branch of OpenAI's unions, with links; the
    engine words them as one sentence naming the message and the field, so ours must carry
    pydantic's first error: its field and its message.
    """
    if recorded["outcome"] == "ok":
        return ours == recorded
    if ours["outcome"] == "ok":
        return False
    if recorded["type"] == "ValidationError":
        return ours["type"] == "InvalidRequest" and (
            _first_pydantic_error(recorded["message"]) in ours["message"]
        )
    if recorded["cause"] is None:
        return ours["type"] == "InvalidRequest" and recorded["message"] in ours["message"]
    return (ours["type"], ours["message"]) == (recorded["cause"], recorded["message"])


def _differs(template: str, case: str) -> bool:
    return not _agrees(_ours(template, case), RECORDING["renders"][template][case])


def test_the_engine_answers_every_pair_as_vllm_did():
    pairs = [(t, c) for t, cases in RECORDING["renders"].items() for c in cases]
    assert len(pairs) == len(TEMPLATES) * len(CASES)
    differ, prompts = [], 0
    for template, case in pairs:
        prompts += RECORDING["renders"][template][case]["outcome"] == "ok"
        if _differs(template, case) and (template, case) not in KNOWN_DIFFERENCES:
            differ.append(f"{template} × {case}")
    version = VllmEngine.info.version
    print(f"vllm: {len(pairs)} pairs, {len(pairs) - len(differ)} as vLLM {version}, "
          f"{prompts} of them prompts")  # fmt: skip
    assert differ == []
    still = [pair for pair in KNOWN_DIFFERENCES if _differs(*pair)]
    assert still == list(KNOWN_DIFFERENCES), "a known difference is gone: drop its entry"
