"""The conversation corpus every template is rendered with in the conformance tests."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines import render

#: The clock `strftime_now` reads in every conformance render, ours and transformers'.
PINNED_NOW = datetime(2026, 11, 29, 12, 0, 0)

#: Special tokens for the cases that do not set their own.
DEFAULT_SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}

CONVERSATIONS_FILE = Path(__file__).with_name("conversations.json")

#: The fields a case may have besides `name` and `messages`.
OPTIONAL_FIELDS = frozenset(
    {
        "tools",
        "documents",
        "add_generation_prompt",
        "continue_final_message",
        "kwargs",
        "special_tokens",
    }
)


def load_conversations(file: Path = CONVERSATIONS_FILE) -> list[dict[str, Any]]:
    """Every case of `file` (the corpus unless an engine's own cases are asked for),
    with its defaults filled in, in file order."""
    cases = json.loads(file.read_text(encoding="utf-8"))
    loaded = []
    for case in cases:
        unknown = case.keys() - OPTIONAL_FIELDS - {"name", "messages"}
        if unknown:
            raise ValueError(f"Case {case.get('name')!r} has unknown fields {sorted(unknown)}")
        loaded.append(
            {
                "name": case["name"],
                "messages": case["messages"],
                "tools": case.get("tools"),
                "documents": case.get("documents"),
                "add_generation_prompt": case.get("add_generation_prompt", False),
                "continue_final_message": case.get("continue_final_message", False),
                "kwargs": case.get("kwargs", {}),
                "special_tokens": case.get("special_tokens", dict(DEFAULT_SPECIAL_TOKENS)),
            }
        )
    return loaded


def case_request(case: dict[str, Any], template: str) -> RenderRequest:
    """Our render request for a case (a deep copy: renders must not share inputs)."""
    case = copy.deepcopy(case)
    return RenderRequest(
        template=template,
        messages=case["messages"],
        tools=case.get("tools"),
        documents=case.get("documents"),
        add_generation_prompt=case.get("add_generation_prompt", False),
        continue_final_message=case.get("continue_final_message", False),
        special_tokens=case.get("special_tokens", {}),
        kwargs=case.get("kwargs", {}),
        now=PINNED_NOW,
    )


def case_body(case: dict[str, Any], template: str) -> dict[str, Any]:
    """The `/api/render` body for a case, with the pinned clock."""
    return {
        "template": template,
        "messages": case["messages"],
        "tools": case.get("tools"),
        "documents": case.get("documents"),
        "add_generation_prompt": case.get("add_generation_prompt", False),
        "continue_final_message": case.get("continue_final_message", False),
        "special_tokens": case.get("special_tokens", {}),
        "kwargs": case.get("kwargs", {}),
        "now": PINNED_NOW.isoformat(),
    }


def our_outcome(case: dict[str, Any], template: str) -> tuple:
    """("ok", prompt) or ("error", type, message), comparable with the reference's."""
    try:
        return ("ok", render(case_request(case, template)).prompt)
    except TemplateProblem as problem:
        return ("error", problem.type, problem.message)
