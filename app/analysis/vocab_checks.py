"""Checks that need the model's vocabulary: BOS, the end-of-turn token, split markers.

The vocabulary runs in a source worker: every text these checks tokenize is collected
first and sent in one batch (`TokenIds`), then the checks read the ids.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from app.analysis.diagnostics import Diagnostic, line_of
from app.sources.source import Source
from app.text import template_markers

#: The special tokens at which generation stops (llama.cpp's end-of-generation set).
END_OF_GENERATION = ("eos_token", "eot_token", "eom_token")

#: Token ids of each text (special tokens parsed), or None when the vocabulary failed.
TokenIds = Callable[[list[str]], list[list[int]] | None]


class _Vocabulary:
    """The ids of every text the checks need, and the vocabulary's EOS id."""

    def __init__(self, ids: dict[str, list[int]], eos_id: int | None) -> None:
        self.ids = ids
        self.eos_id = eos_id


def doubled_bos(prompt: str, template: str, bos: str | None, add_bos: bool | None) -> list:
    if not bos or not add_bos or not prompt.startswith(bos):
        return []
    return [
        Diagnostic(
            "doubled-bos",
            "error",
            f"The prompt starts with {bos!r} and the vocabulary adds a BOS token too: "
            "tokenized with special tokens added, the model sees two.",
            line_of(template, "bos_token"),
        )
    ]


def _stops(special_tokens: dict[str, str]) -> set[str]:
    return {special_tokens[name] for name in END_OF_GENERATION if special_tokens.get(name)}


def end_marker_checks(
    marker: str, template: str, special_tokens: dict[str, str], vocabulary: _Vocabulary | None
) -> list[Diagnostic]:
    """The marker that ends an assistant turn must be one end-of-generation token."""
    stops = _stops(special_tokens)
    line = line_of(template, marker)
    if vocabulary is None:
        if stops and marker not in stops:
            names = ", ".join(sorted(stops))
            message = f"Assistant turns end with {marker!r}, which is not an end token ({names})."
            return [Diagnostic("end-marker-not-eog", "warning", message, line)]
        return []
    ids = vocabulary.ids[marker]
    if len(ids) != 1:
        message = (
            f"Assistant turns end with {marker!r}, which this vocabulary splits into "
            f"{len(ids)} tokens: the model cannot emit it as one stop token."
        )
        return [Diagnostic("end-marker-split", "error", message, line)]
    stop_ids = {i for text in stops for i in vocabulary.ids[text][:1]}
    if vocabulary.eos_id is not None:
        stop_ids.add(vocabulary.eos_id)
    if ids[0] not in stop_ids:
        message = (
            f"Assistant turns end with {marker!r} (id {ids[0]}), which is not among the "
            f"vocabulary's end-of-generation tokens: generation may not stop there."
        )
        return [Diagnostic("end-marker-not-eog", "error", message, line)]
    return []


def _written_markers(prompt: str, template: str, turn_markers: Collection[str]) -> list[str]:
    """The turn delimiters the template writes into this prompt."""
    return [m for m in template_markers(template) if m in prompt and m in turn_markers]


def split_markers(
    prompt: str, template: str, vocabulary: _Vocabulary, turn_markers: Collection[str]
) -> list[Diagnostic]:
    """Turn delimiters the vocabulary splits: the model never saw them as one token."""
    found = []
    for marker in _written_markers(prompt, template, turn_markers):
        count = len(vocabulary.ids[marker])
        if count > 1:
            message = (
                f"The template writes {marker!r}, which this vocabulary splits into {count} "
                "tokens: it is not a special token of this model."
            )
            found.append(Diagnostic("marker-split", "warning", message, line_of(template, marker)))
    return found


def vocabulary_diagnostics(
    prompt: str | None,
    template: str,
    special_tokens: dict[str, str],
    source: Source | None,
    end_marker: str | None,
    token_ids: TokenIds | None = None,
    turn_markers: Collection[str] = (),
) -> list[Diagnostic]:
    """Findings that depend on the loaded source (its vocabulary and BOS flag).

    Of the markers the template writes, only `turn_markers` (those between turns, see
    `diagnostics.turn_delimiters`) and stop tokens are checked for splitting.
    """
    if prompt is None:
        return []
    vocabulary = None
    delimiters = {*turn_markers, *_stops(special_tokens)}
    if source is not None and source.can_tokenize and token_ids is not None:
        texts = sorted({*_written_markers(prompt, template, delimiters), *_stops(special_tokens)})
        texts += [end_marker] if end_marker and end_marker not in texts else []
        ids = token_ids(texts)
        if ids is not None:
            eos = source.tokenizer.eos_id if source.tokenizer else None
            vocabulary = _Vocabulary(dict(zip(texts, ids, strict=True)), eos)
    found = doubled_bos(
        prompt, template, special_tokens.get("bos_token"), source.add_bos_token if source else None
    )
    if end_marker:
        found += end_marker_checks(end_marker, template, special_tokens, vocabulary)
    if vocabulary is not None:
        found += split_markers(prompt, template, vocabulary, delimiters)
    return found
