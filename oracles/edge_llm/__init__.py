"""What TensorRT Edge-LLM's own chat template code answered, recorded once by running it
outside the repository (docs/engines/edge-llm.md)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

#: The recording: load verdicts, prompts or errors, and the contexts handed to Inja.
RECORDED = Path(__file__).with_name("recorded.json")


@cache
def recorded() -> dict[str, Any]:
    """The recording, read once."""
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def system_only_context(context: dict[str, Any]) -> dict[str, Any]:
    """The context of apply's second render, the first message alone without a generation
    prompt, which Edge-LLM makes when that message is a system message (its prompt is kept
    for KV-cache reuse when it prefixes the full prompt; a failure there is ignored). The
    engine makes no such render (it reports no KV-cache reuse); the recording's
    `system_prompt_length` is checked with it."""
    return {**context, "messages": context["messages"][:1], "add_generation_prompt": False}
