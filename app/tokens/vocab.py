"""Tokenize text exactly as llama.cpp would, keeping each token's place in the text.

`VocabTokenizer.from_gguf_fields` follows llama.cpp (`llama_vocab::impl::tokenize`): special
tokens are cut out first (see `special`), every remaining run of text goes through the model-only
HF tokenizer from `build`, and BOS/EOS/SEP are added per the vocabulary's flags.
`VocabTokenizer.from_tokenizer_json` wraps an HF tokenizer.json and follows HF's own rules.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from tokenizers import Encoding, Tokenizer

from app.tokens.build import TokenizerSupport, build_from_vocab
from app.tokens.gguf_vocab import Attr, UnsupportedVocab, read_vocab
from app.tokens.pieces import bytes_to_piece, gguf_token_bytes, hf_token_bytes
from app.tokens.special import SpecialMatcher

_SURROGATE = re.compile("[\ud800-\udfff]")
#: How the reason begins when the tokenizers library cannot read a tokenizer.json.
NOT_A_TOKENIZER_JSON = "not a tokenizer.json"


@dataclass(frozen=True, slots=True)
class Token:
    """One token: `start`/`end` are str indices into the text (empty for added BOS/EOS).

    Tokens that spell parts of one character (byte tokens) all carry that character's span.
    `special` is True for tokens cut out as special tokens and for added BOS/EOS/SEP.
    """

    id: int
    piece: str
    start: int
    end: int
    special: bool


class VocabTokenizer:
    """A tokenizer plus what llama.cpp needs around it (special tokens, BOS/EOS rules)."""

    def __init__(self) -> None:
        """Use `from_gguf_fields` or `from_tokenizer_json`."""
        self.tokenizer: Tokenizer | None = None
        #: "gguf" (llama.cpp's rules around a model-only tokenizer) or "tokenizer.json" (HF's).
        self.source = ""
        self.support = TokenizerSupport(False, "not built")
        self.model: str = ""
        self.pre: str | None = None
        self.vocab_size = 0
        self.bos_id: int | None = None
        self.eos_id: int | None = None
        self.sep_id: int | None = None
        self.add_bos = False
        self.add_eos = False
        self.add_sep = False
        #: Ids that are matched as whole special tokens (control, unknown, user-defined).
        self.special_ids: frozenset[int] = frozenset()
        self._token_bytes: list[bytes | None] = []
        self._kind = ""  # GGUF: its vocabulary type (spm, bpe, wpm)
        self._texts: list[str] = []
        self._attrs: list[int] = []
        self._pieces: list[str | None] = []
        # tokenizer.json: bytes and pieces by id, worked out on first use.
        self._sparse_bytes: dict[int, bytes] = {}
        self._sparse_pieces: dict[int, str] = {}
        self._byte_level = False
        self._raw_text: frozenset[int] = frozenset()
        self._matcher: SpecialMatcher | None = None
        self._phantom_space = False  # SPM: llama.cpp puts a space before each run of text
        self._lock = threading.Lock()

    @classmethod
    def from_gguf_fields(cls, fields: Mapping[str, Any]) -> VocabTokenizer:
        """Build from GGUF metadata; check `.support` before tokenizing."""
        self = cls()
        self.source = "gguf"
        self.model = str(fields.get("tokenizer.ggml.model", "") or "")
        self.pre = str(fields.get("tokenizer.ggml.pre", "") or "") or None
        try:
            vocab = read_vocab(fields)
            self.tokenizer = build_from_vocab(vocab)
        except UnsupportedVocab as exc:
            self.support = TokenizerSupport(False, str(exc))
            return self
        self.support = TokenizerSupport(True)
        self.vocab_size = len(vocab.tokens)
        self.bos_id, self.eos_id, self.sep_id = vocab.bos, vocab.eos, vocab.sep
        self.add_bos, self.add_eos, self.add_sep = vocab.add_bos, vocab.add_eos, vocab.add_sep
        if vocab.kind == "wpm":  # llama.cpp always wraps BERT input in [CLS] ... [SEP]
            self.add_bos, self.add_eos, self.add_sep = True, False, True
        elif vocab.kind == "bpe":
            self.add_sep = False  # llama.cpp's BPE path adds only BOS/EOS
        self._phantom_space = vocab.kind == "spm" and vocab.add_space_prefix
        self.special_ids = frozenset(vocab.special_ids)
        # Each token's bytes are worked out when first used: all of them up front took
        # more than the rest of the build (150k tokens, byte-level decoding each).
        self._kind, self._texts, self._attrs = vocab.kind, vocab.tokens, vocab.attrs
        self._token_bytes = [None] * self.vocab_size
        self._pieces = [None] * self.vocab_size
        attrs = [vocab.attrs[i] for i in vocab.special_ids]
        self._matcher = SpecialMatcher(
            texts=[vocab.tokens[i] for i in vocab.special_ids],
            ids=vocab.special_ids,
            plain_ok=[not a & (Attr.CONTROL | Attr.UNKNOWN) for a in attrs],
            lstrip=[bool(a & Attr.LSTRIP) for a in attrs],
            rstrip=[bool(a & Attr.RSTRIP) for a in attrs],
        )
        return self

    @classmethod
    def from_tokenizer_json(
        cls, text: str, tokenizer_config: dict[str, Any] | None = None
    ) -> VocabTokenizer:
        """Wrap an HF tokenizer.json; HF's own rules apply (its post-processor adds BOS/EOS)."""
        self = cls()
        self.source = "tokenizer.json"
        try:
            self.tokenizer = Tokenizer.from_str(text)
        except Exception as exc:  # the text is user input: any parse failure is "unsupported"
            self.support = TokenizerSupport(False, f"{NOT_A_TOKENIZER_JSON}: {exc}")
            return self
        # What else is needed is read back from the built tokenizer, component by
        # component: parsing the whole file again in Python would cost ten times its size.
        growth = normalizer_growth(_component(self.tokenizer.normalizer))
        if growth > MAX_NORMALIZER_GROWTH:
            self.support = TokenizerSupport(
                False,
                f"its normalizer can make text {growth:,} times longer (this reader allows "
                f"{MAX_NORMALIZER_GROWTH}: a few characters would take gigabytes)",
            )
            return self
        self.support = TokenizerSupport(True)
        self.model = type(self.tokenizer.model).__name__
        self.vocab_size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        added = self.tokenizer.get_added_tokens_decoder()
        self.special_ids = frozenset(i for i, token in added.items() if token.special)
        raw_text = set(added)  # added tokens are stored as plain text
        config = tokenizer_config or {}

        def config_id(name: str) -> int | None:
            value = config.get(name)
            if isinstance(value, dict):
                value = value.get("content")
            return self.tokenizer.token_to_id(value) if isinstance(value, str) else None

        self.bos_id, self.eos_id = config_id("bos_token"), config_id("eos_token")
        self.add_bos = bool(config.get("add_bos_token", False))
        self.add_eos = bool(config.get("add_eos_token", False))
        parts = (self.tokenizer.pre_tokenizer, self.tokenizer.decoder)
        self._byte_level = any('"ByteLevel"' in json.dumps(_component(part)) for part in parts)
        self._raw_text = frozenset(raw_text)
        return self

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for (llama.cpp's `token_to_piece` with special=True)."""
        if self.source == "gguf":
            found_gguf = self._token_bytes[token_id]
            if found_gguf is None:
                found_gguf = gguf_token_bytes(
                    self._kind, self._texts[token_id], self._attrs[token_id]
                )
                self._token_bytes[token_id] = found_gguf
            return found_gguf
        # A tokenizer.json may number its tokens sparsely (ids far above its size), so its
        # tokens' bytes are worked out on first use, by id, not listed up front.
        found = self._sparse_bytes.get(token_id)
        if found is None:
            assert self.tokenizer is not None
            text = self.tokenizer.id_to_token(token_id) or ""
            found = hf_token_bytes(text, self._byte_level, token_id in self._raw_text)
            self._sparse_bytes[token_id] = found
        return found

    def piece(self, token_id: int) -> str:
        """The token's text; bytes that are not UTF-8 on their own are shown as `<0xE2>`."""
        if self.source != "gguf":
            found = self._sparse_pieces.get(token_id)
            if found is None:
                found = self._sparse_pieces[token_id] = bytes_to_piece(self.token_bytes(token_id))
            return found
        piece = self._pieces[token_id]
        if piece is None:
            piece = self._pieces[token_id] = bytes_to_piece(self.token_bytes(token_id))
        return piece

    def _encode(self, texts: list[str]) -> list[Encoding]:
        assert self.tokenizer is not None
        if len(texts) == 1:
            return [self.tokenizer.encode(texts[0], add_special_tokens=False)]
        return self.tokenizer.encode_batch(texts, add_special_tokens=False)

    def tokenize_gguf(self, text: str, add_special: bool, parse_special: bool) -> TokenArrays:
        """llama.cpp's tokenization of `text` with boundaries (see module docstring)."""
        assert self._matcher is not None
        parts = self._matcher.partition(text, parse_special) if text else []
        runs = [(s, e) for s, e, token in parts if token is None]
        encodings = iter(self._encode([text[s:e] for s, e in runs]) if runs else [])
        out = TokenArrays()
        if add_special and self.add_bos and self.bos_id is not None:
            out.add(self.bos_id, 0, 0, True)
        for start, end, token in parts:
            if token is not None:
                out.add(token, start, end, True)
                continue
            enc = next(encodings)
            first = len(out.ids)
            out.extend(enc.ids, enc.offsets, start)
            if (
                self._phantom_space
                and len(out.ids) > first
                and self.token_bytes(out.ids[first]) == b" "
            ):
                # A lone leading "▁" is the space llama.cpp put in front: it covers no text.
                out.starts[first] = out.ends[first] = start
        n = len(text)
        if add_special and self.add_eos and self.eos_id is not None:
            out.add(self.eos_id, n, n, True)
        if add_special and self.add_sep and self.sep_id is not None:
            out.add(self.sep_id, n, n, True)
        return out

    def tokenize_hf(self, text: str, add_special: bool, parse_special: bool) -> TokenArrays:
        """HF's tokenization of `text` (tokenizer.json mode)."""
        assert self.tokenizer is not None
        with self._lock:  # `encode_special_tokens` is tokenizer-wide state
            self.tokenizer.encode_special_tokens = not parse_special
            enc = self.tokenizer.encode(text, add_special_tokens=add_special)
        out = TokenArrays()
        out.extend(enc.ids, enc.offsets, 0)
        special = self.special_ids
        out.special = [i in special for i in out.ids]
        # Spans end in the text: the library places tokens it adds after a word (a BPE
        # `end_of_word_suffix` spelt in byte-fallback tokens) past its end.
        n = len(text)
        if out.ends and max(out.ends) > n:
            out.starts = [min(s, n) for s in out.starts]
            out.ends = [min(e, n) for e in out.ends]
        return out


@dataclass(slots=True)
class TokenArrays:
    """Tokens as parallel lists (ids, character spans, special flags): what tokenizing a
    long text makes, a hundred times cheaper than one `Token` object per token."""

    ids: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    special: list[bool] = field(default_factory=list)

    def add(self, token_id: int, start: int, end: int, special: bool) -> None:
        """One token."""
        self.ids.append(token_id)
        self.starts.append(start)
        self.ends.append(end)
        self.special.append(special)

    def extend(self, ids: list[int], offsets: list[tuple[int, int]], shift: int) -> None:
        """An encoding's tokens (not special), their offsets moved by `shift`."""
        if not ids:
            return
        # Flattened then sliced: `zip(*offsets)` took longer than the encode it follows.
        flat = list(chain.from_iterable(offsets))
        starts, ends = flat[0::2], flat[1::2]
        if shift:
            starts, ends = [s + shift for s in starts], [e + shift for e in ends]
        self.ids += ids
        self.starts += starts
        self.ends += ends
        self.special += [False] * len(ids)

    def tokens(self, piece: Callable[[int], str], window: slice = slice(None)) -> list[Token]:
        """The tokens in `window` as `Token` objects, with their pieces."""
        rows = zip(
            self.ids[window],
            self.starts[window],
            self.ends[window],
            self.special[window],
            strict=True,
        )
        return [Token(i, piece(i), s, e, special) for i, s, e, special in rows]


def _component(part: Any) -> dict[str, Any]:
    """A tokenizer component (normalizer, pre-tokenizer, decoder) as its JSON spec."""
    if part is None:
        return {}
    spec = json.loads(part.__getstate__())
    return spec if isinstance(spec, dict) else {}


#: How many times longer a tokenizer.json's normalizer may make a text: real ones turn a
#: space into "▁" and prepend one "▁"; `Replace("a", "b" * 10**6)` makes 40 characters
#: take over a gigabyte.
MAX_NORMALIZER_GROWTH = 16


def normalizer_growth(spec: Any) -> int:
    """The most a normalizer spec multiplies a text's length by (an upper bound).

    `Replace` can turn each character into its content; `Prepend` and `Append` add
    their text to each run; a `Sequence` multiplies its steps' factors.
    """
    if not isinstance(spec, dict):
        return 1
    kind = spec.get("type")
    if kind == "Sequence":
        growth = 1
        for step in spec.get("normalizers") or []:
            growth *= normalizer_growth(step)
            if growth > MAX_NORMALIZER_GROWTH:
                break  # enough to refuse; do not multiply on without bound
        return growth
    added = {"Replace": spec.get("content"), "Prepend": spec.get("prepend")}.get(kind)
    if kind == "Append":
        added = spec.get("append")
    return 1 + len(added) if isinstance(added, str) else 1


def tokenize(
    tok: VocabTokenizer, text: str, *, add_special: bool = False, parse_special: bool = True
) -> list[Token]:
    """Tokenize `text` with `tok`; raise ValueError if its vocabulary is unsupported.

    add_special: add BOS/EOS (BERT: [CLS]/[SEP]) as the vocabulary asks.
    parse_special: match control tokens written in the text (user-defined tokens always match,
    as in llama.cpp).
    """
    arrays = tokenize_arrays(tok, text, add_special=add_special, parse_special=parse_special)
    return arrays.tokens(tok.piece)


def _has_surrogates(text: str) -> bool:
    """Whether `text` holds a lone surrogate (UTF-8 encoding is ten times faster to ask
    than a regex search of a long prompt)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.search(text) is not None
    return False


def tokenize_arrays(
    tok: VocabTokenizer, text: str, *, add_special: bool = False, parse_special: bool = True
) -> TokenArrays:
    """`tokenize`, as parallel lists."""
    if not tok.support.supported or tok.tokenizer is None:
        raise ValueError(f"unsupported vocabulary: {tok.support.reason}")
    if _has_surrogates(text):
        # Lone surrogates cannot become UTF-8, for llama.cpp or for `tokenizers`; one U+FFFD
        # each keeps every offset where it was.
        text = _SURROGATE.sub("\ufffd", text)
    if tok.source == "gguf":
        return tok.tokenize_gguf(text, add_special, parse_special)
    return tok.tokenize_hf(text, add_special, parse_special)


__all__ = ["Token", "TokenArrays", "TokenizerSupport", "VocabTokenizer", "tokenize"]
