"""Build a `tokenizers.Tokenizer` that gives llama.cpp's token ids for a GGUF vocabulary.

One builder per llama.cpp vocabulary type:

- SPM (`tokenizer.ggml.model` "llama"): llama.cpp merges the adjacent pair whose concatenation is
  the highest-scoring token, leftmost first, and spells unknown characters as `<0xXX>` byte
  tokens. That is a BPE whose merge ranks follow the scores, with byte fallback.
- BPE ("gpt2"): byte-level BPE with the given merges after llama.cpp's pre-tokenizer regexes.
- WPM ("bert"): WordPiece; the GGUF spells word starts with a leading "▁" and continuations bare,
  which is HF's bare / "##" spelling turned around.

The tokenizer returned by `build_tokenizer` also knows the special tokens, so it can be used on
its own; `VocabTokenizer` uses one without them and cuts special tokens out the llama.cpp way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from operator import add
from typing import Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

from app.tokens.gguf_vocab import Attr, GgufVocab, UnsupportedVocab, read_vocab
from app.tokens.pieces import SPACE


@dataclass(frozen=True)
class TokenizerSupport:
    """Whether a vocabulary is reproduced exactly; `reason` says why not."""

    supported: bool
    reason: str | None = None


def build_tokenizer(fields: Mapping[str, Any]) -> tuple[Tokenizer | None, TokenizerSupport]:
    """A tokenizer giving llama.cpp's ids for the GGUF metadata `fields`, or None and the reason.

    Control, unknown and user-defined tokens are registered as added tokens (control and unknown
    ones as "special"), so `encode` matches them as llama.cpp does with parse_special=True, except
    that llama.cpp tries longer special tokens first where HF takes the leftmost.
    """
    try:
        vocab = read_vocab(fields)
        tokenizer = build_from_vocab(vocab)
    except UnsupportedVocab as exc:
        return None, TokenizerSupport(False, str(exc))
    added = []
    for i in vocab.special_ids:
        attr = vocab.attrs[i]
        special = bool(attr & (Attr.CONTROL | Attr.UNKNOWN))  # these are text if not parsed
        lstrip, rstrip = bool(attr & Attr.LSTRIP), bool(attr & Attr.RSTRIP)
        added.append(
            AddedToken(
                vocab.tokens[i], special=special, normalized=False, lstrip=lstrip, rstrip=rstrip
            )
        )
    tokenizer.add_tokens(added)
    return tokenizer, TokenizerSupport(True)


def build_from_vocab(vocab: GgufVocab) -> Tokenizer:
    """The model-only tokenizer for `vocab` (no added tokens); raises UnsupportedVocab."""
    builder = {"spm": _build_spm, "bpe": _build_bpe, "wpm": _build_wpm}[vocab.kind]
    return builder(vocab)


#: Characters compared while listing an SPM vocabulary's merges: each token is split at
#: every position and both halves looked up, which costs the square of its length. Real
#: vocabularies need about 20 million (262k tokens); one hostile 400,000-character token
#: would need 160 billion, hours of CPU.
SPM_SPLIT_BUDGET = 200_000_000


def _build_spm(vocab: GgufVocab) -> Tokenizer:
    tokens, scores = vocab.tokens, vocab.scores
    cost = sum(len(text) ** 2 for text in tokens)
    if cost > SPM_SPLIT_BUDGET:
        longest = max(map(len, tokens))
        raise UnsupportedVocab(
            f"its tokens are too long to list their merges (the longest has {longest:,} "
            f"characters; splitting them all compares {cost:,} characters, over the "
            f"{SPM_SPLIT_BUDGET:,} this reader allows)"
        )
    ids = vocab.ids
    ranked = []
    for i, text in enumerate(tokens):
        for k in range(1, len(text)):
            left, right = text[:k], text[k:]
            if left in ids and right in ids:
                # Highest score first, as llama.cpp. Equal scores are settled by position in
                # llama.cpp, which merge ranks cannot express; longest left piece first makes
                # runs of equal-scored tokens (Llama's "▁▁..." tokens) grow from the left as
                # they do there.
                ranked.append((-scores[i], -k, i, left, right))
    ranked.sort()
    model = models.BPE(
        vocab=ids,
        merges=[(left, right) for *_, left, right in ranked],
        unk_token=tokens[vocab.unk] if vocab.unk is not None else None,
        byte_fallback=True,
        fuse_unk=False,
    )
    tokenizer = Tokenizer(model)
    replace = normalizers.Replace(" ", SPACE)
    # llama.cpp puts a space before every run of text that starts the input or follows a special
    # token; `Prepend` does the same per `encode` call, and we encode such runs one by one.
    tokenizer.normalizer = (
        normalizers.Sequence([normalizers.Prepend(SPACE), replace])
        if vocab.add_space_prefix
        else replace
    )
    steps = [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if vocab.add_space_prefix:
        steps.append(decoders.Strip(" ", 1, 0))
    tokenizer.decoder = decoders.Sequence(steps)
    return tokenizer


def _build_bpe(vocab: GgufVocab) -> Tokenizer:
    assert vocab.pre_tokenizer is not None
    ids = vocab.ids
    merges = _merge_pairs(vocab.merges, ids)
    model = models.BPE(vocab=ids, merges=merges, ignore_merges=vocab.pre_tokenizer.ignore_merges)
    tokenizer = Tokenizer(model)
    splits = [pre_tokenizers.Split(Regex(rx), "isolated") for rx in vocab.pre_tokenizer.regexes]
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _merge_pairs(lines: list[str], ids: Mapping[str, int]) -> list[tuple[str, str]]:
    """The merges as pairs, as llama.cpp reads them: split at the first space after the
    first character (a line without one is skipped), the first rank of a repeated merge.
    Raises UnsupportedVocab for a merge of or into a token not in the vocabulary.

    Checked with set operations, not a loop of lookups: this was a third of the build.
    """
    # The same line is the same pair and a different line a different one, so repeated
    # lines are repeated merges.
    unique = dict.fromkeys(lines)
    pairs = [(line[:cut], line[cut + 1 :]) for line in unique if (cut := line.find(" ", 1)) > 0]
    lefts, rights = [left for left, _ in pairs], [right for _, right in pairs]
    known = ids.keys()
    if not (known >= set(lefts) and known >= set(rights) and known >= set(map(add, lefts, rights))):
        line = next(
            f"{left} {right}"
            for left, right in pairs
            if left not in ids or right not in ids or left + right not in ids
        )
        raise UnsupportedVocab(f"merge {line!r} makes a token that is not in the vocabulary")
    return pairs


def _build_wpm(vocab: GgufVocab) -> Tokenizer:
    hf_vocab: dict[str, int] = {}
    for i, text in enumerate(vocab.tokens):
        if not vocab.attrs[i] & Attr.NORMAL:
            hf = text
        elif text.startswith(SPACE):
            hf = text[len(SPACE) :]
        else:
            hf = "##" + text
        if hf in hf_vocab or not hf:
            raise UnsupportedVocab(f"WordPiece token {text!r} cannot be told apart in HF spelling")
        hf_vocab[hf] = i
    if vocab.unk is None:
        raise UnsupportedVocab("WordPiece vocabulary without an unknown token")
    # Name the unknown token as spelled above: an unknown token typed NORMAL becomes
    # "##[UNK]", and the ids (what llama.cpp emits) are the same either way.
    unk_spelling = next(hf for hf, i in hf_vocab.items() if i == vocab.unk)
    model = models.WordPiece(
        vocab=hf_vocab,
        unk_token=unk_spelling,
        # llama.cpp has no per-word length limit.
        max_input_chars_per_word=1 << 30,
    )
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=vocab.strip_accents,
        lowercase=vocab.lowercase,
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer
