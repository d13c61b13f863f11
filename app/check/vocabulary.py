"""The source's vocabulary for the check's special-token checks: built and run by the
source worker's own functions, in this process (the publisher's own files: no visitor
to guard against; the `PLAYGROUND_*` source limits still bound the build)."""

from __future__ import annotations

from dataclasses import replace

from app.analysis.vocab_checks import TokenIds
from app.check.target import Target
from app.sources.limits import SourceLimits
from app.sources.source import TokenizerInfo
from app.sources.worker import Tokenized, build_tokenizer, tokenize_texts

#: Every token of a text (the window the source worker cuts).
ALL_TOKENS = (0, 1 << 62)
#: As the Analysis view tokenizes: no BOS/EOS added, special tokens parsed.
FLAGS = (False, True)


def with_vocabulary(target: Target, limits: SourceLimits) -> tuple[Target, TokenIds | None]:
    """The target with its tokenizer built (its `TokenizerInfo` says ready or failed,
    and why), and how to tokenize with it; None when it has no usable vocabulary."""
    source = target.source
    if source is None or source.tokenizer is None:
        return target, None
    info = build_tokenizer(source.id, None, limits).value
    if not isinstance(info, TokenizerInfo):
        return target, None
    target = replace(target, source=replace(source, tokenizer=info))
    if not info.supported:
        return target, None

    def token_ids(texts: list[str]) -> list[list[int]] | None:
        """Each text's ids, as `SourceStore.token_ids` gives them to the analysis."""
        answer = tokenize_texts(source.id, texts, FLAGS, ALL_TOKENS, None, limits).value
        if not isinstance(answer, Tokenized):
            return None
        return [list(run.ids) for run in answer.runs]

    return target, token_ids
