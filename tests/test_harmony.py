"""Harmony (gpt-oss) read from text against the real openai-harmony package.

`oracles/harmony/cases.json` holds openai-harmony's own parsing tests as data;
`recorded.json` what the package itself (0.0.8, run by `oracles/harmony/record.py`)
returns for those inputs, the Completion menu's gpt-oss answers and broken variants,
strict and lenient. `app.render.harmony` must return the same messages, and fail where
the package fails, with its message. Hostile inputs must read in linear time.
"""

from __future__ import annotations

import contextlib
import json

import pytest

from app.render.harmony import HarmonyError, parse_messages, pieces
from oracles import harmony
from tests.support.timing import cpu_seconds

CASES = json.loads(harmony.CASES.read_text())["cases"]
RECORDED = json.loads(harmony.RECORDED.read_text())["cases"]
MODES = ("strict", "lenient")


def _ours(text: str, role: str | None, strict: bool) -> dict:
    try:
        return {"messages": [m.to_json() for m in parse_messages(text, role, strict)]}
    except HarmonyError as error:
        return {"error": str(error)}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_harmony_own_tests(case: dict) -> None:
    got = _ours(case["text"], case["role"], case["strict"])
    if "error" in case:
        assert case["error"] in got.get("error", "")
    elif "message_count" in case:
        assert len(got["messages"]) == case["message_count"]
    else:
        assert got == {"messages": case["messages"]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", RECORDED, ids=[c["name"] for c in RECORDED])
def test_same_as_openai_harmony(case: dict, mode: str) -> None:
    got, expected = _ours(case["text"], case["role"], mode == "strict"), case[mode]
    if "error" in expected:
        # The package names a refused token by its id, we by its text.
        assert "error" in got, got
        if expected["error"].startswith("Unexpected token "):
            assert got["error"].startswith("Unexpected token ")
        else:
            assert got["error"] == expected["error"]
    else:
        assert got == expected


def test_every_upstream_test_is_a_case_or_skipped_with_a_reason() -> None:
    """openai-harmony's tests/test_harmony.py, test by test: a case here, or a reason."""
    document = json.loads(harmony.CASES.read_text())
    extracted = {case["test"].split("[")[0] for case in CASES}
    skipped = document["skipped"]
    assert extracted | set(skipped) == set(document["upstream_tests"])
    assert not extracted & set(skipped)
    assert all(len(reason) > 30 for reason in skipped.values())


def test_every_case_recorded() -> None:
    names = {c["name"] for c in RECORDED}
    assert {f"harmony_test/{c['name']}" for c in CASES} <= names
    assert any(name.startswith("menu/") for name in names)


def test_pieces_keep_every_character() -> None:
    text = "a<|start|>b<|reserved_200013|><|reserved_9|><|nope|><|end|"
    assert "".join(pieces(text)) == text
    assert list(pieces(text))[:4] == ["a", "<|start|>", "b", "<|reserved_200013|>"]


HOSTILE = {
    "headers": "<|start|>" * 12_500,
    "open_header": "<|channel|>" + "x " * 50_000,
    "near_specials": "<|" * 50_000,
    "reserved_lookalikes": "<|reserved_99999999999|>" * 4_000,
    "content": "<|channel|>final<|message|>" + "<|channel|>a" * 8_000,
    "many_messages": "<|channel|>final<|message|>x<|end|><|start|>assistant" * 2_000,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_inputs_read_in_linear_time(name: str) -> None:
    text = HOSTILE[name]
    assert len(text) >= 50_000

    def read() -> None:
        for mode in (True, False):
            with contextlib.suppress(HarmonyError):
                parse_messages(text, "assistant", mode)

    ours = 3 * cpu_seconds(read)
    # A plain linear pass over the same text.
    scan = 6 * cpu_seconds(lambda: sum(1 for char in text if char == "<"))
    assert ours < 60 * scan + 0.05
