"""What TensorRT Edge-LLM's own chat template code answered, recorded once by running it
outside the repository (README, Engines, edge-llm)."""

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
