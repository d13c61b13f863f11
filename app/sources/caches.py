"""The one cache cachetools does not have: least recently used, bounded twice.

Every other bounded memory of the project is a plain `cachetools` cache; this one is for
the two that keep big things, both of sources (a source worker's built tokenizers, the
store's summaries), which need a count and a size bound at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K")
V = TypeVar("V")


class BoundedLRUCache(LRUCache[K, V], Generic[K, V]):
    """An LRU cache of at most `maxcount` entries whose sizes (`getsizeof`) add up to at
    most `maxsize`; the newest entry is kept whatever its size, alone if it must be.

    Not cachetools alone: its caches take one bound, `maxsize` in the unit `getsizeof`
    counts (so not both entries and bytes), and refuse an entry larger than that bound
    (`ValueError`), where these caches keep it: the newest one is what the task at hand
    needs. Both bounds may be changed; they apply from the next store on.

    Not thread-safe, as no cachetools cache is: the caller holds its own lock.
    """

    def __init__(self, maxsize: int, maxcount: int, getsizeof: Callable[[V], int]) -> None:
        # The base class bounds nothing (an infinite size); `__setitem__` applies both.
        super().__init__(math.inf, getsizeof)
        self._size_bound = maxsize
        self.maxcount = maxcount

    @property
    def maxsize(self) -> float:
        """The bound on the entries' sizes together (the newest one may pass it)."""
        return self._size_bound

    @maxsize.setter
    def maxsize(self, value: float) -> None:
        self._size_bound = value

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)  # the most recently used now: never evicted below
        while len(self) > 1 and (len(self) > self.maxcount or self.currsize > self._size_bound):
            self.popitem()
