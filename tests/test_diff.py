"""app.analysis.diff: exact opcodes on every path, the line views and the summaries."""

from __future__ import annotations

import random
from collections.abc import Sequence
from difflib import SequenceMatcher

from hypothesis import given, settings
from hypothesis import strategies as st

from app.analysis.diff import (
    COST_BUDGET,
    DiffLine,
    char_opcodes,
    diff_stats,
    side_by_side_flagged,
    token_opcodes,
    unified,
)

TAGS = {"equal", "replace", "delete", "insert"}


def apply(left: Sequence, right: Sequence, opcodes: list) -> list:
    """Check `opcodes` cover both sides in order and rebuild `right` from `left` with them."""
    out: list = []
    i = j = 0
    for k, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        assert tag in TAGS and (i1, j1) == (i, j), opcodes[k]
        assert k == 0 or opcodes[k - 1][0] != tag, "adjacent opcodes with one tag"
        assert {"equal": i2 - i1 == j2 - j1 > 0, "replace": i2 > i1 and j2 > j1,
                "delete": i2 > i1 and j2 == j1, "insert": i2 == i1 and j2 > j1}[tag]  # fmt: skip
        if tag == "equal":
            assert left[i1:i2] == right[j1:j2]
            out += left[i1:i2]
        else:
            out += right[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(left), len(right))
    assert out == list(right)
    return out


def edited(text: str, k: int, seed: int = 0) -> str:
    """`text` with `k` characters replaced by "#" (absent from the texts used here)."""
    rng = random.Random(seed)
    chars = list(text)
    for pos in rng.sample(range(len(text)), k):
        chars[pos] = "#"
    return "".join(chars)


TEXT = st.lists(
    st.sampled_from(["\n", "\n\n", " ", "\t", "😀", "é", "<|im_start|>", "user", "the ", "a"])
    | st.text(max_size=5),
    max_size=25,
).map("".join)
BUDGETS = st.sampled_from([0, 40, 300, 3000, COST_BUDGET])


@settings(max_examples=400, deadline=None)
@given(left=TEXT, right=TEXT, budget=BUDGETS)
def test_opcodes_rebuild_right_on_every_path(left: str, right: str, budget: int) -> None:
    # Small budgets force the line, chunk and word paths and the coarse fallback.
    apply(left, right, char_opcodes(left, right, budget=budget))


@settings(max_examples=200, deadline=None)
@given(left=TEXT, data=st.data(), budget=BUDGETS)
def test_opcodes_of_an_edited_text(left: str, data: st.DataObject, budget: int) -> None:
    right = left
    for _ in range(data.draw(st.integers(0, 4))):
        at = data.draw(st.integers(0, len(right)))
        cut = data.draw(st.integers(0, 3))
        right = right[:at] + data.draw(TEXT) + right[at + cut :]
    apply(left, right, char_opcodes(left, right, budget=budget))


@settings(max_examples=200, deadline=None)
@given(left=TEXT, right=TEXT)
def test_small_inputs_are_plain_sequence_matcher(left: str, right: str) -> None:
    want = SequenceMatcher(None, left, right, autojunk=False).get_opcodes()
    assert char_opcodes(left, right) == want


def chat(turns: int, style: str) -> tuple[str, list[str]]:
    """A long conversation rendered as ChatML or Llama 3, and its message texts."""
    rng = random.Random(turns)
    words = ["the", "a", "prompt", "model", "said", "then", ",", ".", "and", "of\n"]
    bodies = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 120))) for _ in range(turns)]
    turns_ = [(("user", "assistant")[k % 2], body) for k, body in enumerate(bodies)]
    if style == "chatml":
        text = "".join(f"<|im_start|>{r}\n{b}<|im_end|>\n" for r, b in turns_)
    else:
        text = "<|begin_of_text|>" + "".join(
            f"<|start_header_id|>{r}<|end_header_id|>\n\n{b}<|eot_id|>" for r, b in turns_
        )
    return text, bodies


def test_large_edited_prompt_is_refined_line_first() -> None:
    left, _ = chat(800, "chatml")  # ~200 KB: far above what one character pass may cost
    right = edited(left, 25)
    ops = char_opcodes(left, right)
    apply(left, right, ops)
    # Only the 25 changed characters are marked, not their lines.
    assert diff_stats(ops) == {"equal": len(left) - 25, "inserted": 25, "deleted": 25}


def test_large_single_line_is_refined_by_chunks() -> None:
    left = chat(400, "chatml")[0].replace("\n", " ")  # no line to align on
    right = edited(left, 10, seed=1)
    ops = char_opcodes(left, right)
    apply(left, right, ops)
    assert diff_stats(ops)["inserted"] == 10


def test_two_templates_of_one_long_conversation() -> None:
    (left, bodies), (right, _) = chat(600, "chatml"), chat(600, "llama3")
    ops = char_opcodes(left, right)
    apply(left, right, ops)
    # Every message text is found equal although no line is the same in both renders.
    assert diff_stats(ops)["equal"] >= sum(map(len, bodies))
    equal_text = "".join(left[i1:i2] for tag, i1, i2, _, _ in ops if tag == "equal")
    assert all(b in equal_text for b in bodies[:50])


def test_budget_exhausted_is_coarse_but_exact() -> None:
    left, _ = chat(300, "chatml")
    right = edited(left, 30)
    apply(left, right, char_opcodes(left, right, budget=0))


@settings(max_examples=300, deadline=None)
@given(
    left=st.lists(st.integers(0, 6), max_size=40),
    right=st.lists(st.integers(0, 6), max_size=40),
    budget=BUDGETS,
)
def test_token_opcodes_rebuild_right(left: list[int], right: list[int], budget: int) -> None:
    apply(left, right, token_opcodes(left, right, budget=budget))
    if budget == COST_BUDGET:
        assert token_opcodes(left, right) == SequenceMatcher(None, left, right, False).get_opcodes()


def test_long_token_lists() -> None:
    rng = random.Random(5)
    left = [rng.choice([11, 11, 11, 12, 13, 14, 15, 16, 17]) for _ in range(60_000)]
    right = list(left)
    for pos in rng.sample(range(len(left)), 20):
        right[pos] = 99
    ops = token_opcodes(left, right)
    apply(left, right, ops)
    assert diff_stats(ops)["inserted"] == 20


def test_diff_stats() -> None:
    ops = [("equal", 0, 3, 0, 3), ("replace", 3, 5, 3, 4), ("delete", 5, 6, 4, 4),
           ("insert", 6, 6, 4, 7)]  # fmt: skip
    assert diff_stats(ops) == {"equal": 3, "inserted": 4, "deleted": 3}
    assert diff_stats([]) == {"equal": 0, "inserted": 0, "deleted": 0}


LETTERS = "".join(f"{c}\n" for c in "abcdefghij")


def test_unified_exact() -> None:
    right = LETTERS.replace("e\n", "E\n")
    gap = DiffLine("@", [("equal", "…\n")])
    assert unified(LETTERS, right, char_opcodes(LETTERS, right), context=1) == [
        gap,
        DiffLine(" ", [("equal", "d\n")], 4, 4),
        DiffLine("-", [("delete", "e"), ("equal", "\n")], 5, None),
        DiffLine("+", [("insert", "E"), ("equal", "\n")], None, 5),
        DiffLine(" ", [("equal", "f\n")], 6, 6),
        gap,
    ]
    assert unified(LETTERS, LETTERS, char_opcodes(LETTERS, LETTERS)) == []


def test_unified_line_split_and_missing_final_newline() -> None:
    left, right = "abcdef\nxy", "abc\ndef\nxy\n"
    assert unified(left, right, char_opcodes(left, right)) == [
        DiffLine("-", [("equal", "abcdef\n")], 1, None),
        DiffLine("-", [("equal", "xy")], 2, None),
        DiffLine("+", [("equal", "abc"), ("insert", "\n")], None, 1),
        DiffLine("+", [("equal", "def\n")], None, 2),
        DiffLine("+", [("equal", "xy"), ("insert", "\n")], None, 3),
    ]


def test_side_by_side_exact() -> None:
    left, right = "a\nb\nc\n", "a\nB\nx\nc\n"
    assert side_by_side_flagged(left, right, char_opcodes(left, right)) == (
        [
            ([("equal", "a\n")], [("equal", "a\n")]),
            ([("delete", "b"), ("equal", "\n")], [("insert", "B\n")]),
            (None, [("insert", "x"), ("equal", "\n")]),
            ([("equal", "c\n")], [("equal", "c\n")]),
        ],
        [False, True, True, False],
    )


def joined(parts: list | None, keep: set[str]) -> str:
    return "".join(text for kind, text in parts or [] if kind in keep)


@settings(max_examples=300, deadline=None)
@given(left=TEXT, right=TEXT, budget=BUDGETS)
def test_views_spell_both_texts(left: str, right: str, budget: int) -> None:
    ops = char_opcodes(left, right, budget=budget)
    stats = diff_stats(ops)
    full = unified(left, right, ops, context=10**6)
    if left == right:
        assert full == [] and all(a == b for a, b in side_by_side_flagged(left, right, ops)[0])
        return
    assert "".join(joined(d.parts, {"equal", "delete"}) for d in full if d.sign in " -") == left
    assert "".join(joined(d.parts, {"equal", "insert"}) for d in full if d.sign in " +") == right
    assert sum(len(joined(d.parts, {"delete"})) for d in full) == stats["deleted"]
    assert sum(len(joined(d.parts, {"insert"})) for d in full) == stats["inserted"]
    assert all(d.sign != "@" for d in full)
    rows, _ = side_by_side_flagged(left, right, ops)
    assert "".join(joined(a, {"equal", "delete"}) for a, _ in rows) == left
    assert "".join(joined(b, {"equal", "insert"}) for _, b in rows) == right
    # Trimmed: all changed lines kept, at most 2 context lines beside a change or a gap.
    short = unified(left, right, ops)
    assert [d for d in short if d.sign in "-+"] == [d for d in full if d.sign in "-+"]
    signs = "".join(d.sign for d in short)
    assert "@@" not in signs
    for run in signs.replace("-", "+").split("+"):  # the lines between two changes
        if "@" in run:
            assert run.count("@") == 1 and all(len(side) <= 2 for side in run.split("@"))
        else:
            assert len(run) <= 4
