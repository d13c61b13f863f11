"""The extracted Ollama test cases (cases.json, written by record.py), as objects."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parent / "cases.json"
HARMONY = "gpt-oss (harmony)"


class NotBuilt(Exception):
    """The case needs a part of Ollama the engine does not reproduce (the reason)."""


@dataclass(frozen=True)
class Case:
    """One extracted case: its upstream file and test, name and fields."""

    file: str
    test: str
    name: str
    fields: dict[str, Any]
    local: dict[str, Any]
    unsupported: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """A stable test id."""
        return f"{self.test}/{self.name}"


def load() -> tuple[str, list[Case], dict[str, dict[str, str]]]:
    """The Ollama commit, every case, and per file the tests left out with reasons."""
    doc = json.loads(CASES.read_text(encoding="utf-8"))
    cases = [
        Case(
            path,
            c["test"],
            c["name"],
            c["fields"],
            part["locals"].get(c["test"], {}),
            tuple(c.get("unsupported", ())),
        )
        for path, part in doc["files"].items()
        for c in part["cases"]
    ]
    skipped = {path: part["skipped"] for path, part in doc["files"].items()}
    return doc["ollama"], cases, skipped
