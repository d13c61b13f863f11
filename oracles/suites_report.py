"""The real programs' own parse tests, as the suite runs them: `python -m oracles.suites_report`.

For each of the five extracted suites (llama.cpp's tests/test-chat.cpp, vLLM's parser
tests, openai-harmony's tests, transformers' parse_response tests, TensorRT Edge-LLM's
server parser tests), and for vLLM and Edge-LLM per upstream test file: the cases
extracted, how many the suite ran, how many passed, and
every upstream test or case left out, with its reason (`oracles/suites.py`).
It runs the suite's tests for those cases in this process (pytest, one process, about
half a minute); the figures are for the closing note of issue 23. `--brief` leaves out
the reasons.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

import pytest

from oracles.suites import OURS, Suite, part_of, suites


class Tally:
    """A pytest plugin: each collected item's suite and part, and its outcome."""

    def __init__(self, all_suites: list[Suite]) -> None:
        self.suites = {suite.name: suite for suite in all_suites}
        self.where: dict[str, tuple[str, str]] = {}
        self.outcomes: Counter[tuple[str, str, str]] = Counter()

    def _place(self, item: Any) -> tuple[str, str] | None:
        for suite in self.suites.values():
            if any(item.nodeid.split("[")[0] == test for test in suite.tests):
                return suite.name, part_of(suite, getattr(item, "callspec", None).params)
        return None

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        for item in items:
            if (place := self._place(item)) is not None:
                self.where[item.nodeid] = place

    def pytest_runtest_logreport(self, report: Any) -> None:
        place = self.where.get(report.nodeid)
        if place is None:
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.outcomes[(*place, report.outcome)] += 1


def report(all_suites: list[Suite], tally: Tally, brief: bool) -> None:
    for suite in all_suites:
        print(f"\n## {suite.name}")
        for part in [*suite.parts(), OURS]:
            extracted = sum(1 for p, _ in suite.cases if p == part) + suite.not_run.get(part, 0)
            run = sum(n for (s, p, _), n in tally.outcomes.items() if (s, p) == (suite.name, part))
            passed = tally.outcomes[(suite.name, part, "passed")]
            skipped = suite.skipped.get(part, {})
            if part == OURS:
                if run:
                    print(f"({run} {part}, {passed} passing)")
                continue
            print(
                f"{part}: {extracted} cases extracted, {run} run, {passed} passing; "
                f"{len(skipped)} skipped (a test, a group of tests or a case, each with a reason)"
            )
            if part in suite.holds:
                print(f"  (the program itself meets {suite.holds[part]} of these expectations)")
            if not brief:
                for what, why in skipped.items():
                    print(f"  - skipped {what}: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brief", action="store_true", help="counts only, no reasons")
    args = parser.parse_args()
    all_suites = suites()
    tally = Tally(all_suites)
    files = sorted({test.split("::")[0] for suite in all_suites for test in suite.tests})
    selectors = [test for suite in all_suites for test in suite.tests]
    code = pytest.main(
        [*files, "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--no-header", "-k",
         " or ".join(s.split("::")[1] for s in selectors)],
        plugins=[tally],
    )  # fmt: skip
    report(all_suites, tally, args.brief)
    sys.exit(0 if code in (0, 5) else code)


if __name__ == "__main__":
    main()
