"""Cutting special tokens out of a text the way llama.cpp does (`tokenizer_st_partition`).

llama.cpp takes its special tokens longest first; for each, it splits every remaining run of plain
text at each occurrence, left to right. A token may swallow ASCII whitespace on its left or right
(the lstrip/rstrip attributes). With parse_special=False only user-defined tokens take part:
control and unknown tokens are then plain text.

Running `str.find` for every special token over a long text would be slow for vocabularies with
thousands of them, so a single regex pass first finds which ones occur at all.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

# llama.cpp strips with C `isspace` on bytes: ASCII whitespace only.
_ASCII_WS = frozenset(" \t\n\v\f\r")


def _trie_pattern(words: Sequence[str]) -> str:
    """A regex matching the longest of `words` at a position (a trie of nested groups)."""
    if max(map(len, words)) > 200:  # deep tries would hit the recursion limit
        return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        # A word may end here: try the longer continuations first (greedy `?`).
        return f"(?:{body})?" if "" in node else body

    return emit(trie)


class SpecialMatcher:
    """Finds llama.cpp's special tokens in a text; built once per vocabulary."""

    def __init__(
        self,
        texts: Sequence[str],
        ids: Sequence[int],
        plain_ok: Sequence[bool],
        lstrip: Sequence[bool],
        rstrip: Sequence[bool],
    ) -> None:
        """`texts`/`ids` in llama.cpp's order (longest first); `plain_ok`: kept when
        parse_special=False (user-defined tokens)."""
        self._texts = list(texts)
        self._ids = list(ids)
        self._plain_ok = list(plain_ok)
        self._lstrip = list(lstrip)
        self._rstrip = list(rstrip)
        self._rank = {t: r for r, t in enumerate(self._texts)}
        self._regex = re.compile(_trie_pattern(self._texts)) if self._texts else None

    def _present(self, text: str) -> list[int]:
        """Ranks of the special tokens occurring in `text`, in llama.cpp's order."""
        if self._regex is None:
            return []
        found: set[str] = set()
        search, pos = self._regex.search, 0
        while (m := search(text, pos)) is not None:
            found.add(m.group())
            pos = m.start() + 1  # overlapping occurrences matter too
        # The regex reports only the longest token at a position; shorter ones there are prefixes.
        for word in list(found):
            found.update(word[:k] for k in range(1, len(word)) if word[:k] in self._rank)
        return sorted(self._rank[w] for w in found)

    def partition(self, text: str, parse_special: bool) -> list[tuple[int, int, int | None]]:
        """`text` as consecutive (start, end, id) parts; id None for plain text.

        A special part's span includes the whitespace its lstrip/rstrip attribute swallowed.
        """
        starts: list[int] = []  # claimed spans, sorted and disjoint
        ends: list[int] = []
        owners: list[int] = []
        n = len(text)
        for rank in self._present(text):
            if not parse_special and not self._plain_ok[rank]:
                continue
            word, pos = self._texts[rank], 0
            while (s := text.find(word, pos)) >= 0:
                e = s + len(word)
                k = bisect.bisect_right(starts, s)
                if (k and ends[k - 1] > s) or (k < len(starts) and starts[k] < e):
                    pos = s + 1  # overlaps a token cut out earlier: not in any plain run
                    continue
                lo = ends[k - 1] if k else 0
                hi = starts[k] if k < len(starts) else n
                if self._lstrip[rank]:
                    while s > lo and text[s - 1] in _ASCII_WS:
                        s -= 1
                if self._rstrip[rank]:
                    while e < hi and text[e] in _ASCII_WS:
                        e += 1
                starts.insert(k, s)
                ends.insert(k, e)
                owners.insert(k, self._ids[rank])
                pos = e
        parts: list[tuple[int, int, int | None]] = []
        prev = 0
        for s, e, token in zip(starts, ends, owners, strict=True):
            if s > prev:
                parts.append((prev, s, None))
            parts.append((s, e, token))
            prev = e
        if prev < n:
            parts.append((prev, n, None))
        return parts
