"""The bookkeeping of the five extracted suites (`oracles/suites.py`):
every case has a part and an id of its own, every left-out test or case says why, and
every vLLM parser-case file names the upstream file it came from, and every test of
Edge-LLM's two parser test files is a case or says why not."""

from __future__ import annotations

import json

import pytest

from oracles.suites import ORACLES, Suite, part_of, suites
from tests.support import REPO

SUITES = suites()


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_cases_are_unique_and_reasons_are_sentences(suite: Suite) -> None:
    ids = [case_id for _, case_id in suite.cases]
    assert len(ids) == len(set(ids)) > 0
    reasons = [why for part in suite.skipped.values() for why in part.values()]
    assert reasons and all(len(why) > 30 for why in reasons), suite.name
    for test in suite.tests:
        path, name = test.split("::")
        assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), test


def test_llama_cpp_cases_not_run_are_the_skipped_ones() -> None:
    (suite,) = [s for s in SUITES if s.name == "llama.cpp"]
    doc = json.loads((ORACLES / "llamacpp" / "test_chat_parse_cases.json").read_text("utf-8"))
    ((part, skipped),) = suite.skipped.items()
    assert suite.not_run == {part: len(skipped)} == {part: doc["counts"]["skipped"]}
    assert len(suite.cases) == doc["counts"]["verified_equal"]


def test_each_vllm_case_belongs_to_the_upstream_file_it_came_from() -> None:
    (suite,) = [s for s in SUITES if s.name.startswith("vLLM")]
    parts = suite.parts()
    assert all(part.startswith("tests/") and part.endswith(".py") for part in parts), parts
    assert "tests/tool_parsers/test_qwen3coder_tool_parser.py" in parts
    doc = json.loads((ORACLES / "vllm/parser_cases/tool_qwen3_coder.json").read_text("utf-8"))
    by_file = {part_of(suite, {"name": "qwen3_coder", "case": case}) for case in doc["cases"]}
    assert by_file == {
        "tests/tool_parsers/test_qwen3xml_tool_parser.py",
        "tests/tool_parsers/test_qwen3coder_tool_parser.py",
    }
    assert sum(suite.holds.values()) <= len(suite.cases)


def test_every_edge_llm_parser_test_is_a_case_or_skipped_with_its_reason() -> None:
    (suite,) = [s for s in SUITES if s.name.startswith("TensorRT Edge-LLM")]
    doc = json.loads((ORACLES / "edge_llm/parser_cases.json").read_text("utf-8"))
    used = {c["test"] for c in [*doc["cases"], *doc["request_cases"]]} | {doc["corpus"]["test"]}
    skipped = {what.split(" (")[0] for what in doc["skipped"]}
    for path, names in doc["upstream_tests"].items():
        for name in names:
            assert f"{path}::{name}" in used | skipped, name
    texts = len(doc["corpus"]["texts"])
    assert sum(suite.holds.values()) == len(doc["cases"]) + len(doc["request_cases"]) + texts
    assert {part_of(suite, {"case": case}) for case in doc["cases"]} <= set(suite.parts())
    assert part_of(suite, {"case": {"name": "corpus/3"}}) == part_of(
        suite, {"case": {"test": doc["corpus"]["test"]}}
    )
