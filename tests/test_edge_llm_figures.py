"""The Edge-LLM figures of docs/engines/edge-llm.md, counted again from the recording of
Edge-LLM's own code, so that they cannot go stale: which shared templates load and why the
others do not, and how many render each conversation in its table."""

from __future__ import annotations

import re

import pytest

from oracles.edge_llm import RECORDED, recorded
from tests.support import REPO

pytestmark = pytest.mark.skipif(not RECORDED.exists(), reason="no Edge-LLM recording")

PAGE = (REPO / "docs" / "engines" / "edge-llm.md").read_text(encoding="utf-8")
#: Inja's parser error: where, and why.
PARSER_ERROR = re.compile(r"^\[inja\.exception\.parser_error\] \(at (\d+):(\d+)\) (.+)$")


def renders(*conversations: str) -> int:
    """How many loading templates Edge-LLM's code rendered every one of `conversations`."""
    return sum(
        all(entry["renders"][name]["outcome"] == "ok" for name in conversations)
        for entry in recorded()["templates"].values()
        if entry["load"]["ok"]
    )


def test_the_load_count_is_the_recordings():
    templates = recorded()["templates"]
    loading = sum(entry["load"]["ok"] for entry in templates.values())
    refused = len(templates) - loading
    assert f"Of the {len(templates)} shared templates, {loading} load and {refused} do not" in (
        PAGE
    )


def test_every_refused_template_is_listed_with_its_place_and_reason():
    listed = {
        match[1]: (int(match[2]), int(match[3]), match[4])
        for match in re.finditer(r"^- `([^`]+)` \(line (\d+), column (\d+)\): (.+)$", PAGE, re.M)
    }
    refused = {}
    for stem, entry in recorded()["templates"].items():
        if not entry["load"]["ok"]:
            line, column, reason = PARSER_ERROR.match(entry["load"]["error"]).groups()
            refused[stem] = (int(line), int(column), reason)
    assert listed == refused


def test_every_row_of_the_table_is_counted_from_the_recording():
    """A row names one conversation or several (rendered all), and how many render."""
    rows = re.findall(r"^\| (.*`.*) \| (\d+) \|$", PAGE, re.M)
    assert len(rows) >= 10
    wrong = []
    for cell, figure in rows:
        names = re.findall(r"`([^`]+)`", cell.split(":")[0])
        if renders(*names) != int(figure):
            wrong.append(f"{names}: the page {figure}, recording {renders(*names)}")
    assert wrong == []


def test_the_issues_figure_is_a_plain_chat_a_generation_prompt_and_a_tool_round():
    """Issue 24 measured 42 templates that render a plain chat, one with
    add_generation_prompt and a tool round without an error: the tool round whose
    call has null content, as OpenAI clients send it."""
    assert renders("single-turn", "single-turn-gen-prompt", "tool-call-content-null") == 42
    assert "(the issue's 42) | 42 |" in PAGE
