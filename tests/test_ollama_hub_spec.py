"""@huggingface/ollama-utils's own tests as data, run against the engine's Hub mapping.

The package ships its spec (src/chat-template.spec.ts). `tests/support/hub_spec.cjs`
bundles it with esbuild, its test runner replaced by a recorder: run once against the
package itself (every case passes, and each records the chat template it converts), then
against what the engine's mapper reports for those inputs, in the package's shape.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.render.engines.ollama.hub.mapper import hub_mapping
from app.render.limits import DEFAULT_LIMITS
from tests.support import REPO

SPEC = REPO / "node_modules" / "@huggingface" / "ollama-utils" / "src" / "chat-template.spec.ts"
RUNNER = REPO / "tests" / "support" / "hub_spec.cjs"


def run_spec(answers: Path | None = None) -> list[dict]:
    """The spec's cases, each with its inputs and its failure (None: it passed)."""
    node = shutil.which("node")
    assert node, "Node.js is missing: the Hub's mapping runs in Node"
    assert SPEC.is_file(), f"{SPEC} is missing: npm ci installs it"
    command = [node, str(RUNNER), str(SPEC), *([str(answers)] if answers else [])]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def engine_answers(cases: list[dict]) -> dict[str, dict | None]:
    """What the engine's mapper reports for every input the cases passed, by input."""
    answers: dict[str, dict | None] = {}
    for case in cases:
        for gguf in case["inputs"]:
            given = [gguf["chat_template"], gguf["bos_token"], gguf["eos_token"]]
            mapped = hub_mapping(*given, DEFAULT_LIMITS)
            answers[json.dumps(given, separators=(",", ":"), ensure_ascii=False)] = mapped and {
                "model": mapped.model,
                "template": mapped.go_template,
                "stop": list(mapped.stop),
                "params": {name: json.loads(value) for name, value in mapped.params},
            }
    return answers


@pytest.fixture(scope="module")
def package_cases() -> list[dict]:
    return run_spec()


def test_the_package_passes_its_own_spec(package_cases):
    assert len(package_cases) == 13
    assert [case["name"] for case in package_cases if case["failure"]] == []
    assert all(len(case["inputs"]) == 1 for case in package_cases)


def test_the_engine_passes_the_packages_spec(package_cases, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(engine_answers(package_cases), ensure_ascii=False))
    cases = run_spec(answers)
    assert [(case["name"], case["failure"]) for case in cases if case["failure"]] == []
    assert len(cases) == len(package_cases)


def test_a_wrong_answer_fails_the_spec(package_cases, tmp_path):
    # The recorder compares for real: one template changed, and its case fails.
    wrong = engine_answers(package_cases)
    first = next(key for key, value in wrong.items() if value)
    wrong[first] = {**wrong[first], "template": wrong[first]["template"] + " "}
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(wrong, ensure_ascii=False))
    failed = [case for case in run_spec(answers) if case["failure"]]
    assert len(failed) == 1 and "expected" in failed[0]["failure"]
