"""The small text helpers every layer shares (app/text.py)."""

from __future__ import annotations

import gc

from hypothesis import given
from hypothesis import strategies as st

from app.text import common_prefix_length, gc_paused


def _naive_prefix(left, right) -> int:
    count = 0
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        count += 1
    return count


def test_common_prefix_length_of_strings_and_lists() -> None:
    assert common_prefix_length("abc", "abd") == 2
    assert common_prefix_length("ab", "abc") == 2
    assert common_prefix_length("", "x") == 0
    assert common_prefix_length("same", "same") == 4
    assert common_prefix_length([1, 2, 3], [1, 2, 4]) == 2
    long = "x" * 2_000_000
    assert common_prefix_length(long, long[:1_234_567] + "y") == 1_234_567


@given(st.text("ab", max_size=40), st.text("ab", max_size=40))
def test_common_prefix_length_agrees_with_a_plain_loop(left: str, right: str) -> None:
    assert common_prefix_length(left, right) == _naive_prefix(left, right)


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
