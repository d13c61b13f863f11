"""The six suites of the real programs' own parse tests (and Ollama's render tests),
extracted as data: what each holds, where it came from, which of the suite's tests run
its cases, and every upstream test or case left out with its reason.

`oracles/suites_report.py` runs those tests and prints, per suite (and for vLLM per
upstream test file), the cases extracted, run and passing, and the skipped ones with
their reasons; `tests/test_extracted_suites.py` checks the bookkeeping.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracles.harmony import CASES as HARMONY_CASES
from oracles.transformers import PARSE_RESPONSE_CASES

ORACLES = Path(__file__).parent


@dataclass
class Suite:
    """One extracted suite (`part` splits it by upstream test file)."""

    name: str
    #: The test functions that run its cases (`file::function`).
    tests: tuple[str, ...]
    #: Each extracted case: its part (the upstream file) and its id.
    cases: list[tuple[str, str]] = field(default_factory=list)
    #: Part -> what was left out (a test, a group of tests, or a case) -> why.
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Part -> cases extracted but not run (they are among `skipped`).
    not_run: dict[str, int] = field(default_factory=dict)
    #: Part -> the expectations the real program itself meets, where the data says
    #: (vLLM's `holds_in_vllm_0_33_0`: ours must meet exactly those).
    holds: dict[str, int] = field(default_factory=dict)

    def parts(self) -> list[str]:
        return list(dict.fromkeys([part for part, _ in self.cases] + list(self.skipped)))


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _llama_cpp_skip_reason(case: dict[str, Any]) -> str:
    """Why the recorder left a test-chat.cpp case out, in words."""
    reason = case["verified"]["skipped"]
    if reason == "partial":
        return (
            "a partial parse (is_partial: the text of a stream cut short); the playground "
            "reads a finished answer"
        )
    if reason == "template":
        return (
            f"its template ({case['template']}) is not among the shared templates, and the "
            "repository holds no copy of llama.cpp's own"
        )
    return reason


def llama_cpp() -> Suite:
    doc = _load(ORACLES / "llamacpp" / "test_chat_parse_cases.json")
    part = f"{doc['upstream_file']} (llama.cpp {doc['llama_cpp']})"
    suite = Suite("llama.cpp", ("tests/test_llamacpp_answers.py::test_llama_cpp_test_chat_case",))
    for case in doc["cases"]:
        if "skipped" in case["verified"]:
            why = _llama_cpp_skip_reason(case)
            suite.skipped.setdefault(part, {})[f"case {case['index']}"] = why
            suite.not_run[part] = suite.not_run.get(part, 0) + 1
        else:
            suite.cases.append((part, f"{case['index']}:{case['template']}"))
    return suite


def _vllm_part(doc: dict[str, Any], item: dict[str, Any] | str) -> str:
    if isinstance(item, dict) and item.get("file"):
        return item["file"]
    if isinstance(item, str) and item.split("::")[0].endswith(".py"):
        return item.split("::")[0]
    return doc["source"]["file"].split(" (")[0]


def vllm() -> Suite:
    suite = Suite(
        "vLLM 0.33.0",
        (
            "tests/test_vllm_answers.py::test_vllm_own_test_cases",
            "tests/test_vllm_answers_model_parsers.py::test_vllm_test_expectations",
            "tests/test_vllm_answers_harmony.py::test_vllm_own_expectations",
        ),
    )
    for path in sorted((ORACLES / "vllm" / "parser_cases").glob("*.json")):
        doc = _load(path)
        for case in doc["cases"]:
            part = _vllm_part(doc, case)
            suite.cases.append((part, f"{path.stem}:{case['name']}"))
            suite.holds[part] = suite.holds.get(part, 0) + bool(case["holds_in_vllm_0_33_0"])
        for what, why in doc.get("skipped", {}).items():
            part = _vllm_part(doc, what)
            label = "the whole file" if what.endswith(".py") else what.split("::")[-1]
            suite.skipped.setdefault(part, {})[label] = why
    return suite


def harmony() -> Suite:
    doc = _load(HARMONY_CASES)
    part = f"{doc['upstream'].split(' ', 1)[1].split(' (')[0]} ({doc['version'].split(' (')[0]})"
    suite = Suite("openai-harmony", ("tests/test_harmony.py::test_harmony_own_tests",))
    suite.cases = [(part, case["name"]) for case in doc["cases"]]
    suite.skipped[part] = dict(doc["skipped"])
    return suite


def transformers() -> Suite:
    doc = _load(PARSE_RESPONSE_CASES)
    part = f"tests/utils/test_chat_parsing.py (transformers {doc['transformers']})"
    suite = Suite(
        "transformers",
        tuple(
            f"tests/test_transformers_answers.py::{name}"
            for name in (
                "test_same_as_transformers",
                "test_coerce_as_the_upstream_test_asserts",
                "test_schema_types_as_the_upstream_test_asserts",
                "test_tool_call_coercion_as_the_upstream_test_asserts",
            )
        ),
    )
    suite.cases = [(part, case["name"]) for case in doc["cases"] if "test" in case]
    for kind in ("coerce", "schema_types", "tool_calls"):
        entries = enumerate(doc["coercion"][kind])
        suite.cases += [(part, f"{kind}:{entry['test']}:{i}") for i, entry in entries]
    suite.skipped[part] = dict(doc["skipped"])
    return suite


EDGE_LLM = "TensorRT Edge-LLM 83f5f76"


def _edge_part(item: str) -> str:
    return f"{item.split('::')[0]} (Edge-LLM 83f5f76)"


def edge_llm() -> Suite:
    doc = _load(ORACLES / "edge_llm" / "parser_cases.json")
    suite = Suite(
        EDGE_LLM,
        tuple(
            f"tests/test_edge_llm_answers.py::{name}"
            for name in (
                "test_edge_llm_own_test_cases",
                "test_edge_llm_own_request_checks",
                "test_same_as_edge_llm",
            )
        ),
    )
    for case in [*doc["cases"], *doc["request_cases"]]:
        part = _edge_part(case["test"])
        suite.cases.append((part, case["name"]))
        suite.holds[part] = suite.holds.get(part, 0) + bool(case.get("holds_in_edge_llm", True))
    corpus = _edge_part(doc["corpus"]["test"])
    texts = len(doc["corpus"]["texts"])
    suite.cases += [(corpus, f"corpus/{i}") for i in range(texts)]
    # The corpus's expected readings are the program's own, recorded by running it.
    suite.holds[corpus] = suite.holds.get(corpus, 0) + texts
    for what, why in doc["skipped"].items():
        suite.skipped.setdefault(_edge_part(what), {})[what.split("::")[-1]] = why
    return suite


def _ollama_part(path: str, commit: str) -> str:
    return f"{path} (Ollama {commit[:7]})"


def ollama() -> Suite:
    from oracles.ollama.run import NotBuilt, load, run

    commit, cases, left_out = load()
    suite = Suite(
        f"Ollama {commit[:7]}", ("tests/test_ollama_suite.py::test_ollama_own_test_case",)
    )
    for path, tests in left_out.items():
        for test, why in tests.items():
            suite.skipped.setdefault(_ollama_part(path, commit), {})[test] = why
    for case in cases:
        part = _ollama_part(case.file, commit)
        try:
            run(case)
        except NotBuilt as why:
            suite.skipped.setdefault(part, {})[case.id] = str(why)
            suite.not_run[part] = suite.not_run.get(part, 0) + 1
            continue
        suite.cases.append((part, case.id))
    return suite


def suites() -> list[Suite]:
    return [llama_cpp(), vllm(), harmony(), transformers(), edge_llm(), ollama()]


#: The part of a suite that holds the cases of our own its tests also run.
OURS = "our own cases beside them (run by the same tests)"


def part_of(suite: Suite, params: dict[str, Any]) -> str:
    """The part of `suite` a test item with these parameters runs."""
    case = params.get("case", {})
    if suite.name == "vLLM 0.33.0":
        # The parser's file: by `stem`, by tool parser `name`, else the Harmony cases.
        stem = params.get("stem") or (f"tool_{params['name']}" if "name" in params else "harmony")
        path = ORACLES / "vllm" / "parser_cases" / f"{stem}.json"
        return _vllm_part(_load(path), case)
    if suite.name == "transformers" and isinstance(case, dict) and "name" in case:
        return suite.parts()[0] if "test" in case else OURS
    if suite.name.startswith("Ollama"):
        return _ollama_part(case.file, suite.name.split()[-1])
    if suite.name == EDGE_LLM:
        if "test" in case:
            return _edge_part(case["test"])
        doc = _load(ORACLES / "edge_llm" / "parser_cases.json")
        return _edge_part(doc["corpus"]["test"]) if case["name"].startswith("corpus/") else OURS
    return suite.parts()[0]
