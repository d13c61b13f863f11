"""Checks that need the model's vocabulary: BOS, the end-of-turn token, split markers."""

from __future__ import annotations

from app.analysis.diagnostics import Diagnostic, line_of
from app.display.prompt import template_markers
from app.sources.source import Source
from app.tokens.vocab import VocabTokenizer, tokenize

#: The special tokens at which generation stops (llama.cpp's end-of-generation set).
END_OF_GENERATION = ("eos_token", "eot_token", "eom_token")


def _ids(tok: VocabTokenizer, text: str) -> list[int]:
    return [t.id for t in tokenize(tok, text, parse_special=True)]


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


def end_marker_checks(
    marker: str, template: str, special_tokens: dict[str, str], tok: VocabTokenizer | None
) -> list[Diagnostic]:
    """The marker that ends an assistant turn must be one end-of-generation token."""
    stops = {special_tokens[name] for name in END_OF_GENERATION if special_tokens.get(name)}
    line = line_of(template, marker)
    if tok is None or not tok.support.supported:
        if stops and marker not in stops:
            names = ", ".join(sorted(stops))
            message = f"Assistant turns end with {marker!r}, which is not an end token ({names})."
            return [Diagnostic("end-marker-not-eog", "warning", message, line)]
        return []
    ids = _ids(tok, marker)
    if len(ids) != 1:
        message = (
            f"Assistant turns end with {marker!r}, which this vocabulary splits into "
            f"{len(ids)} tokens: the model cannot emit it as one stop token."
        )
        return [Diagnostic("end-marker-split", "error", message, line)]
    stop_ids = {i for text in stops for i in _ids(tok, text)[:1]}
    if tok.eos_id is not None:
        stop_ids.add(tok.eos_id)
    if ids[0] not in stop_ids:
        message = (
            f"Assistant turns end with {marker!r} (id {ids[0]}), which is not among the "
            f"vocabulary's end-of-generation tokens: generation may not stop there."
        )
        return [Diagnostic("end-marker-not-eog", "error", message, line)]
    return []


def split_markers(prompt: str, template: str, tok: VocabTokenizer) -> list[Diagnostic]:
    found = []
    for marker in template_markers(template):
        if marker not in prompt:
            continue
        count = len(_ids(tok, marker))
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
) -> list[Diagnostic]:
    """Findings that depend on the loaded source (its vocabulary and BOS flag)."""
    if prompt is None:
        return []
    tok = source.tokenizer if source else None
    usable = tok if tok is not None and tok.support.supported else None
    found = doubled_bos(
        prompt, template, special_tokens.get("bos_token"), source.add_bos_token if source else None
    )
    if end_marker:
        found += end_marker_checks(end_marker, template, special_tokens, usable)
    if usable is not None:
        found += split_markers(prompt, template, usable)
    return found
