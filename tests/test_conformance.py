"""Every real template × every corpus conversation, rendered by us and by transformers.

The two renders must be the same string, or must both fail with the same error type and message.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from oracles.transformers.reference import Outcome, reference_render, reference_tokenizer
from tests.support.corpus import DEFAULT_SPECIAL_TOKENS, load_conversations, our_outcome
from tests.support.shared_data import require_shared, template_files

require_shared()

TEMPLATES = {path.stem: path for path in template_files()}
CASES = {case["name"]: case for case in load_conversations()}
PAIRS = [(template, case) for template in TEMPLATES for case in CASES]


@cache
def template_source(name: str) -> str:
    return TEMPLATES[name].read_text(encoding="utf-8")


@cache
def expected_outcome(template: str, case: str) -> Outcome:
    return reference_render(CASES[case], template_source(template))


def our_render(case: dict[str, Any], template: str) -> Outcome:
    return our_outcome(case, template)


@pytest.mark.parametrize(("template", "case"), PAIRS, ids=[f"{t}×{c}" for t, c in PAIRS])
def test_render_matches_transformers(template: str, case: str) -> None:
    expected = expected_outcome(template, case)
    actual = our_render(CASES[case], template_source(template))
    if expected[0] == "ok":
        assert actual == expected
    else:
        # Both refuse, for the same reason: the exception type names and messages agree.
        assert actual[0] == "error", f"transformers raised {expected[1]}: {expected[2]}"
        assert actual[1] == expected[1], f"transformers: {expected[2]!r}; we: {actual[2]!r}"
        assert actual[2] == expected[2]


def test_pair_count_covers_every_template_and_case() -> None:
    assert len(TEMPLATES) >= 68
    assert len(CASES) == len(load_conversations()) >= 30  # names are unique
    assert len(PAIRS) == len(TEMPLATES) * len(CASES) >= 68 * 30
    assert len({f"{t}×{c}" for t, c in PAIRS}) == len(PAIRS)


def test_most_pairs_render_rather_than_fail() -> None:
    """A corpus every template refuses would make the comparison meaningless."""
    outcomes = [expected_outcome(template, case) for template, case in PAIRS]
    rendered = sum(outcome[0] == "ok" for outcome in outcomes)
    assert rendered >= 0.75 * len(PAIRS)
    # Every case renders with most templates, and every template renders some case.
    for case in CASES:
        ok = sum(expected_outcome(t, case)[0] == "ok" for t in TEMPLATES)
        assert ok >= len(TEMPLATES) // 4, case
    for template in TEMPLATES:
        assert any(expected_outcome(template, c)[0] == "ok" for c in CASES), template


def _has(case: dict[str, Any], predicate) -> bool:
    return any(predicate(message) for message in case["messages"])


def _text(case: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in case["messages"])


def _tool_calls(case: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["tool_calls"] for m in case["messages"] if m.get("tool_calls")]


COVERAGE = {
    "with a system message": lambda c: c["messages"][0]["role"] == "system",
    "without a system message": lambda c: all(m["role"] != "system" for m in c["messages"]),
    "single turn": lambda c: len(c["messages"]) == 1,
    "multi-turn": lambda c: sum(m["role"] == "user" for m in c["messages"]) >= 2,
    "generation prompt on": lambda c: c["add_generation_prompt"],
    "generation prompt off": lambda c: not c["add_generation_prompt"],
    "continue final assistant message": lambda c: (
        c["continue_final_message"] is True and c["messages"][-1]["role"] == "assistant"
    ),
    "continue reasoning_content": lambda c: c["continue_final_message"] == "reasoning_content",
    "two tools offered": lambda c: c["tools"] is not None and len(c["tools"]) == 2,
    "single tool call": lambda c: any(len(calls) == 1 for calls in _tool_calls(c)),
    "parallel object arguments": lambda c: any(
        len(calls) >= 2 and all(isinstance(x["function"]["arguments"], dict) for x in calls)
        for calls in _tool_calls(c)
    ),
    "parallel string arguments": lambda c: any(
        len(calls) >= 2 and all(isinstance(x["function"]["arguments"], str) for x in calls)
        for calls in _tool_calls(c)
    ),
    "tool results": lambda c: _has(
        c, lambda m: m["role"] == "tool" and "tool_call_id" in m and "name" in m
    ),
    "reasoning in history": lambda c: (
        _has(c, lambda m: m["role"] == "assistant" and "reasoning_content" in m)
        and c["messages"][-1]["role"] == "user"
    ),
    "developer role": lambda c: _has(c, lambda m: m["role"] == "developer"),
    "content blocks": lambda c: _has(c, lambda m: isinstance(m.get("content"), list)),
    "empty content": lambda c: _has(c, lambda m: m.get("content") == ""),
    "whitespace content": lambda c: _has(
        c, lambda m: isinstance(m.get("content"), str) and m["content"] and not m["content"].strip()
    ),
    "null content with tool calls": lambda c: _has(
        c, lambda m: "content" in m and m["content"] is None and m.get("tool_calls")
    ),
    "non-ASCII": lambda c: all(ch in _text(c) for ch in ("你", "🌦", "é", "م", "ש")),
    "template markers": lambda c: "<|im_start|>system" in _text(c) and "[INST]" in _text(c),
    "long conversation": lambda c: len(c["messages"]) >= 12,
    "custom special tokens": lambda c: (
        c["special_tokens"]
        == {**DEFAULT_SPECIAL_TOKENS, "bos_token": "<|begin|>", "eos_token": "<|end|>"}
    ),
    "enable_thinking true": lambda c: c["kwargs"].get("enable_thinking") is True,
    "enable_thinking false": lambda c: c["kwargs"].get("enable_thinking") is False,
    "documents": lambda c: bool(c["documents"]),
    "date kwarg": lambda c: "date_string" in c["kwargs"],
    "generation prompt after assistant": lambda c: (
        c["add_generation_prompt"] and c["messages"][-1]["role"] == "assistant"
    ),
}


@pytest.mark.parametrize("feature", COVERAGE)
def test_corpus_covers(feature: str) -> None:
    assert any(COVERAGE[feature](case) for case in CASES.values()), feature


def test_reference_clock_is_pinned() -> None:
    case = {"messages": [{"role": "user", "content": "hi"}], "special_tokens": {}}
    assert reference_render(case, "{{ strftime_now('%Y-%m-%d') }}") == ("ok", "2026-11-29")
    ours = our_render(
        {**load_conversations()[0], "special_tokens": {}}, "{{ strftime_now('%Y-%m-%d') }}"
    )
    assert ours == ("ok", "2026-11-29")


def test_reference_special_tokens_are_exactly_the_given_ones() -> None:
    tokens = {"bos_token": "<|begin|>", "eos_token": "<|end|>", "unk_token": "<unk>"}
    assert reference_tokenizer(tokens).special_tokens_map == tokens
    case = {"messages": [{"role": "user", "content": "x"}], "special_tokens": tokens}
    assert reference_render(case, "{{ bos_token }}|{{ eos_token }}|{{ unk_token }}") == (
        "ok",
        "<|begin|>|<|end|>|<unk>",
    )
