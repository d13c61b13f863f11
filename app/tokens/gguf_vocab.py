"""A GGUF vocabulary read the way llama.cpp reads it (src/llama-vocab.cpp, `llama_vocab::load`).

Only what tokenizing needs: token texts, scores and attributes (including the attribute fix-ups
llama.cpp applies by token text), BOS/EOS/UNK/SEP ids, the add_* flags, and the list of tokens
matched before the model runs, in llama.cpp's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntFlag
from typing import Any

from app.tokens import gguf_keys as keys
from app.tokens.gguf_keys import UnsupportedVocab
from app.tokens.pretok import PreTokenizer, pre_tokenizer_for

__all__ = ["SPECIAL_ATTRS", "Attr", "GgufVocab", "UnsupportedVocab", "read_vocab"]


class Attr(IntFlag):
    """llama.cpp's `llama_token_attr` bits."""

    UNKNOWN = 1 << 0
    UNUSED = 1 << 1
    NORMAL = 1 << 2
    CONTROL = 1 << 3
    USER_DEFINED = 1 << 4
    BYTE = 1 << 5
    LSTRIP = 1 << 7
    RSTRIP = 1 << 8


# GGUF `tokenizer.ggml.token_type` -> attribute; anything else is "undefined" (no bits).
_TYPE_ATTR = {1: Attr.NORMAL, 2: Attr.UNKNOWN, 3: Attr.CONTROL, 4: Attr.USER_DEFINED,
              5: Attr.UNUSED, 6: Attr.BYTE}  # fmt: skip
#: Attributes of the tokens llama.cpp cuts out of the text before running the model.
SPECIAL_ATTRS = Attr.CONTROL | Attr.USER_DEFINED | Attr.UNKNOWN

# Texts llama.cpp marks as control tokens whatever the file says: its end-of-generation list...
_EOG_TEXTS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
})  # fmt: skip
# ...and, when the matching id is not in the metadata, the first FIM token it recognises.
_FIM_TEXTS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                "▁<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                "▁<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                "▁<MID>", "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}  # fmt: skip
# gpt-oss: llama.cpp always renders these, so it makes them user-defined.
_FORCED_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")

_KIND = {"llama": "spm", "gpt2": "bpe", "bert": "wpm"}
_UNSUPPORTED_MODELS = {
    "t5": "Unigram (T5) vocabularies are not supported",
    "rwkv": "RWKV vocabularies are not supported",
    "plamo2": "PLaMo-2 vocabularies are not supported",
    "gemma4": "Gemma 4 vocabularies are not supported",
    "no_vocab": "the file has no vocabulary",
    "none": "the file has no vocabulary",
}
# Default special ids per vocabulary type, as llama.cpp sets them before reading the metadata.
_DEFAULT_IDS = {
    "spm": {"bos": 1, "eos": 2, "unk": 0},
    "wpm": {"bos": 101, "unk": 100, "sep": 102},
    "bpe": {"bos": 11, "eos": 11},
}


@dataclass
class GgufVocab:
    """What tokenizing with a GGUF vocabulary needs, with llama.cpp's defaults applied."""

    model: str
    kind: str  # "spm", "bpe" or "wpm"
    pre: str
    tokens: list[str]
    scores: list[float]
    attrs: list[int]
    merges: list[str]
    pre_tokenizer: PreTokenizer | None
    bos: int | None
    eos: int | None
    unk: int | None
    sep: int | None
    add_bos: bool
    add_eos: bool
    add_sep: bool
    add_space_prefix: bool
    lowercase: bool
    strip_accents: bool
    #: Ids matched in the text before the model runs, longest text first (llama.cpp's order).
    special_ids: list[int]
    #: Token text -> id (texts are unique): made once, as every step needs it.
    ids: dict[str, int]


#: The largest real vocabularies have about 260k tokens; a hostile header could claim
#: millions, and building a tokenizer for it would stall the web process.
MAX_VOCAB_TOKENS = 1 << 20


def read_vocab(fields: Mapping[str, Any]) -> GgufVocab:
    """Read `fields` (GGUF metadata, key -> decoded value); raise UnsupportedVocab if unusable.

    Every key is type-checked first (see `gguf_keys`): llama.cpp refuses a file whose
    tokenizer keys have the wrong type, so such a vocabulary is unsupported, naming the key.
    """
    model = keys.get(fields, "model", str, "a string") or ""
    if model in _UNSUPPORTED_MODELS:
        raise UnsupportedVocab(_UNSUPPORTED_MODELS[model])
    kind = _KIND.get(model)
    if kind is None:
        raise UnsupportedVocab(f"unknown tokenizer model {keys.quoted(model)}")
    tokens = _read_tokens(fields)
    ids_of = _index(tokens)
    n = len(tokens)
    scores = keys.scores(fields, n)
    types = keys.per_token(fields, "token_type", int, "integer", n)
    # Plain ints: an `IntFlag` operation per token costs a microsecond, 0.3 s a vocabulary.
    type_attrs = {kind: int(attr) for kind, attr in _TYPE_ATTR.items()}
    attrs = [type_attrs.get(t, 0) for t in types] if types else [int(Attr.NORMAL)] * n

    pre = keys.get(fields, "pre", str, "a string") or ""
    pre_tok = None
    merges: list[str] = []
    ids: dict[str, int | None] = {k: None for k in ("bos", "eos", "unk", "sep")}
    ids.update({k: v if v < n else None for k, v in _DEFAULT_IDS[kind].items()})
    add_bos, add_eos, add_sep, add_space_prefix = False, False, False, False
    if kind == "bpe":
        pre_tok = pre_tokenizer_for(pre)
        if pre_tok is None:
            raise UnsupportedVocab(f"pre-tokenizer {keys.quoted(pre)} is not supported")
        add_bos = pre_tok.add_bos
        add_sep = pre in ("jina-v1-en", "jina-v2-code", "roberta-bpe")
        if pre_tok.no_bos:
            ids["bos"] = None
        merges = keys.items(fields, "merges", str, "string") or []
        if not merges:
            raise UnsupportedVocab("BPE vocabulary without merges")
    elif kind == "spm":
        add_bos, add_space_prefix = True, True
    else:
        add_bos, add_sep = True, True
    add_space_prefix = keys.flag(fields, "add_space_prefix", add_space_prefix)

    key_names = {"bos": "bos", "eos": "eos", "unk": "unknown", "sep": "seperator"}
    for name, key in key_names.items():
        if (value := keys.token_id(fields, key, n)) is not None:
            ids[name] = value
    add_bos = keys.flag(fields, "add_bos_token", add_bos)
    add_eos = keys.flag(fields, "add_eos_token", add_eos)
    add_sep = keys.flag(fields, "add_sep_token", add_sep)
    for flag, name in ((add_bos, "bos"), (add_eos, "eos"), (add_sep, "sep")):
        if flag and ids[name] is None:
            raise UnsupportedVocab(f"add_{name}_token is set but the vocabulary has no {name} id")

    lowercase = keys.flag(fields, "normalizer.lowercase", True)
    strip_accents = keys.flag(fields, "normalizer.strip_accents", lowercase)
    _fix_attrs(fields, ids_of, attrs, n)
    return GgufVocab(
        model=model,
        kind=kind,
        pre=pre,
        tokens=tokens,
        scores=scores,
        attrs=attrs,
        merges=merges,
        pre_tokenizer=pre_tok,
        bos=ids["bos"],
        eos=ids["eos"],
        unk=ids["unk"],
        sep=ids["sep"],
        add_bos=add_bos,
        add_eos=add_eos,
        add_sep=add_sep,
        add_space_prefix=add_space_prefix,
        lowercase=lowercase,
        strip_accents=strip_accents,
        special_ids=_special_ids(fields, tokens, ids_of, attrs, pre),
        ids=ids_of,
    )


def _read_tokens(fields: Mapping[str, Any]) -> list[str]:
    """The token texts: strings, not too many, none repeated; empty ones named as llama.cpp."""
    tokens = keys.items(fields, "tokens", str, "string")
    if not tokens:
        raise UnsupportedVocab("the vocabulary has no tokens")
    n = len(tokens)
    if n > MAX_VOCAB_TOKENS:
        raise UnsupportedVocab(
            f"{n:,} tokens, over the {MAX_VOCAB_TOKENS:,} the playground builds tokenizers for"
        )
    tokens = [text or f"[EMPTY_{i}]" for i, text in enumerate(tokens)]
    return tokens


def _index(tokens: list[str]) -> dict[str, int]:
    """Token text -> id; raises for a text given twice, which llama.cpp refuses."""
    ids = {text: i for i, text in enumerate(tokens)}
    if len(ids) != len(tokens):
        raise UnsupportedVocab("duplicate token texts (llama.cpp refuses such a vocabulary)")
    return ids


def _fix_attrs(fields: Mapping[str, Any], index: dict[str, int], attrs: list[int], n: int) -> None:
    """Apply llama.cpp's attribute fix-ups that depend on token texts, in its order."""
    for name, texts in _FIM_TEXTS.items():
        if keys.token_id(fields, name, n) is not None:
            continue
        legacy = {"fim_pre": "prefix", "fim_suf": "suffix", "fim_mid": "middle"}.get(name)
        if legacy and keys.token_id(fields, legacy, n) is not None:
            continue
        found = sorted(index[t] for t in texts if t in index)
        if found:  # llama.cpp takes whichever its hash map yields first; they rarely coexist
            attrs[found[0]] |= Attr.CONTROL
    for text in _EOG_TEXTS:
        if text in index:
            attrs[index[text]] |= Attr.CONTROL
    for text in _FORCED_USER_DEFINED:
        if text in index:
            attrs[index[text]] = Attr.USER_DEFINED
    # o200k_harmony / solar-open: "<|end|>" is not end-of-generation there, just user-defined.
    has = index.__contains__
    if has("<|end|>") and (
        (has("<|return|>") and has("<|call|>")) or (has("<|calls|>") and has("<|flush|>"))
    ):
        attrs[index["<|end|>"]] = Attr.USER_DEFINED
    if has("<|tool_response>") and has("</s>"):  # Gemma 4 / PaddleOCR: "</s>" is plain text
        attrs[index["</s>"]] = Attr.NORMAL


def _special_ids(
    fields: Mapping[str, Any], tokens: list[str], index: dict[str, int], attrs: list[int], pre: str
) -> list[int]:
    """llama.cpp's special-token cache: longest first, plus per-model strip flags."""
    special_attrs = int(SPECIAL_ATTRS)
    special = [i for i, a in enumerate(attrs) if a & special_attrs]
    # llama.cpp sorts by byte length with an unstable sort; ties keep id order here.
    special.sort(key=lambda i: -len(tokens[i].encode("utf-8")))
    name = _text(fields, "general.name").lower()
    arch = _text(fields, "general.architecture")

    def set_flag(text: str, flag: Attr, on: bool) -> None:
        if text in index:
            i = index[text]
            attrs[i] = attrs[i] | flag if on else attrs[i] & ~flag

    if any(p in pre for p in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
        a in arch for a in ("nomic-bert-moe", "jina-bert-v3")
    ):
        set_flag("<mask>", Attr.LSTRIP, True)
    elif "phi-3" in name or "phi3" in name:
        for i in special:
            attrs[i] |= Attr.RSTRIP
        set_flag("</s>", Attr.RSTRIP, True)
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            set_flag(text, Attr.RSTRIP, False)
    elif "modern-bert" in name:
        set_flag("[MASK]", Attr.LSTRIP, True)
    return special


def _text(fields: Mapping[str, Any], key: str) -> str:
    """A string key that only tunes special tokens; any other type counts as absent."""
    value = fields.get(key)
    return value if isinstance(value, str) else ""
