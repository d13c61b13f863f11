"""Run the extracted Ollama test cases against the engine's renderers and parsers.

`python -m oracles.ollama.run` prints, per family, the cases that pass, fail and are
skipped (with the reason); `tests/test_ollama_suite.py` runs each case as a test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from oracles.ollama.case import HARMONY, Case, NotBuilt, load
from oracles.ollama.run_renders import statements
from oracles.ollama.run_sessions import session
from oracles.ollama.runners import RUNNERS

__all__ = ["RUNNERS", "Case", "NotBuilt", "load", "run", "same"]


#: Upstream file -> family, for the tests without a runner yet.
FAMILY_OF_FILE = {
    "model/renderers/qwen3coder_test.go": "qwen3-coder",
    "model/renderers/deepseek3_test.go": "deepseek3.1",
    "model/renderers/glm47_test.go": "glm-4.7",
    "model/renderers/gemma4_reference_test.go": "gemma4",
    "model/parsers/qwen3_test.go": "qwen3",
    "model/parsers/qwen3coder_test.go": "qwen3-coder",
    "model/parsers/deepseek3_test.go": "deepseek3.1",
    "model/parsers/glm47_test.go": "glm-4.7",
    "model/parsers/qwen35_test.go": "qwen3.5",
    "model/parsers/glm46_test.go": "glm-4.7",
    "model/parsers/gemma4_test.go": "gemma4",
    "harmony/harmonyparser_test.go": HARMONY,
    "model/renderers/lfm2_test.go": "lfm2",
    "model/parsers/lfm2_test.go": "lfm2",
    "model/renderers/cohere_test.go": "cohere",
    "model/parsers/cohere_test.go": "cohere",
    "model/renderers/olmo3_test.go": "olmo3",
    "model/renderers/olmo3_think_test.go": "olmo3",
    "model/parsers/olmo3_test.go": "olmo3",
    "model/parsers/olmo3_think_test.go": "olmo3",
}


def family(case: Case) -> str:
    """The family a case belongs to."""
    return RUNNERS[case.test][0] if case.test in RUNNERS else FAMILY_OF_FILE[case.file]


def _runner(case: Case) -> Callable[[Case], tuple[Any, Any]] | None:
    """The runner of a case: its test's, or the statements runner for a renderer's
    statements, or the session runner for a parser session."""
    if case.test in RUNNERS:
        return RUNNERS[case.test][1]
    if "checks" in case.fields and "renderer" in case.fields:
        return statements
    return session if "steps" in case.fields and "parser" in case.fields else None


#: Cases whose expectation depends on where the stream is cut, and why ours differs.
CHUNKING = {
    "TestDeepSeekParser_Streaming/streaming_with_split_tags": (
        "its expected content keeps the space before the tool calls because that space "
        "arrived in an earlier chunk (deepseek3 emits content at once); the engine's "
        "parsers read the answer as one chunk, which trims it (Content beforeafter)"
    ),
}


def run(case: Case) -> tuple[Any, Any]:
    """(what ours gives, what Ollama's test expects); NotBuilt when it cannot run."""
    if case.id in CHUNKING:
        raise NotBuilt(CHUNKING[case.id])
    if case.unsupported:
        raise NotBuilt(f"the case holds Go code, not data: {', '.join(case.unsupported)}")
    runner = _runner(case)
    if runner is None:
        raise NotBuilt(f"{case.test} ({case.file}) is not run yet: its part is not reproduced")
    return runner(case)


def same(got: Any, want: Any) -> bool:
    """Equal as Go's DeepEqual sees decoded JSON: 1 and 1.0 differ, so compare typed."""
    return json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def main() -> None:
    """Print the tally per family: passed / run / total, and the skip reasons."""
    commit, cases, skipped = load()
    tally: dict[str, list[int]] = {}
    reasons: dict[str, int] = {}
    for case in cases:
        counts = tally.setdefault(family(case), [0, 0, 0])
        counts[2] += 1
        try:
            got, want = run(case)
        except NotBuilt as why:
            reasons[f"{family(case)}: {why}"] = reasons.get(f"{family(case)}: {why}", 0) + 1
            continue
        counts[1] += 1
        counts[0] += same(got, want)
    print(f"Ollama {commit[:7]}: family: passed / run / extracted")
    for name, (passed, ran, total) in tally.items():
        print(f"  {name}: {passed} / {ran} / {total}")
    print("Skipped cases:")
    for why, count in reasons.items():
        print(f"  {count} x {why}")
    print("Test functions not extracted:")
    for path, tests in skipped.items():
        for test, why in tests.items():
            print(f"  {path}::{test}: {why}")


if __name__ == "__main__":
    main()
