"""The LRU cache bounded by entries and by size at once, keeping the newest one
(app/sources/caches.py)."""

from __future__ import annotations

from app.sources.caches import BoundedLRUCache


def cache(maxsize: int = 10, maxcount: int = 3) -> BoundedLRUCache[str, str]:
    return BoundedLRUCache(maxsize=maxsize, maxcount=maxcount, getsizeof=len)


def test_the_count_bound_forgets_the_least_recently_used():
    kept = cache(maxsize=100, maxcount=3)
    for key in "abc":
        kept[key] = "x"
    assert kept["a"] == "x"  # a use: "b" is the least recently used now
    kept["d"] = "x"
    assert sorted(kept) == ["a", "c", "d"]
    assert len(kept) == 3


def test_the_size_bound_forgets_until_the_sizes_fit():
    kept = cache(maxsize=10, maxcount=100)
    kept["a"], kept["b"], kept["c"] = "xxxx", "xxxx", "xx"
    assert kept.currsize == 10
    kept["d"] = "xxxxx"  # 15: "a" and then "b" go
    assert sorted(kept) == ["c", "d"]
    assert kept.currsize == 7


def test_a_value_stored_again_is_counted_at_its_new_size():
    kept = cache(maxsize=10, maxcount=100)
    kept["a"], kept["b"] = "xxxx", "xxxx"
    kept["b"] = "xxxxxxxx"  # 12: "a" goes, "b" stays
    assert list(kept) == ["b"]
    assert kept.currsize == 8


def test_the_newest_is_kept_alone_whatever_its_size():
    kept = cache(maxsize=10, maxcount=3)
    kept["a"], kept["b"] = "x", "x"
    kept["huge"] = "x" * 50  # cachetools alone would raise ValueError here
    assert list(kept) == ["huge"]
    assert kept.currsize == 50
    kept["c"] = "x"  # the huge one, least recently used, goes at the next store
    assert list(kept) == ["c"]


def test_a_count_of_zero_still_keeps_the_newest():
    kept = cache(maxsize=0, maxcount=0)
    kept["a"] = "x"
    kept["b"] = "x"
    assert list(kept) == ["b"]


def test_bounds_changed_apply_from_the_next_store():
    kept = cache(maxsize=100, maxcount=5)
    for key in "abcd":
        kept[key] = "xx"
    kept.maxsize, kept.maxcount = 4, 5
    assert kept.maxsize == 4 and len(kept) == 4  # nothing forgotten yet
    kept["e"] = "xx"
    assert sorted(kept) == ["d", "e"]
