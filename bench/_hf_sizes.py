"""`tokenizer.json` files of the real sizes for `bench/hf_ready.py`: synthetic, since no real
one is at hand offline (the suite keeps none), each of the vocabulary size and byte size of
the model it stands for, laid out as that model's file is:

- Qwen3: byte-level BPE, 151,643 tokens and 26 added ones (151,669), 11.4 MB;
- Gemma 3: BPE over "▁"-spelt words with byte fallback, 262,144 tokens, 33.4 MB.

Both pretty-printed, merges written as `["a", "b"]` pairs. Every merge joins two tokens of
the vocabulary into a third, so the library builds them as it builds the real ones; the
byte size is reached through the tokens' length (`Shape.longest`, within 5%: the real
Gemma 3 has about twice as many merges as tokens, shorter ones). Made once (a minute) and
kept in the temporary folder.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench._sources_data import _byte_alphabet, _grown


@dataclass(frozen=True)
class Shape:
    """What a real tokenizer.json measures: its tokens (with added ones) and its bytes."""

    name: str
    tokens: int
    added: int
    bytes: int
    #: The longest token made, in characters: what brings the file to `bytes`.
    longest: int


QWEN3 = Shape("qwen3", tokens=151_643, added=26, bytes=11_422_654, longest=8)
GEMMA3 = Shape("gemma3", tokens=262_144, added=0, bytes=33_384_568, longest=22)
SHAPES = (QWEN3, GEMMA3)
#: Part of the kept files' names: changed with what the files are made of.
_MADE_AS = "v1"

#: Qwen2/3's pre-tokenizer regex (a fact of its tokenizer.json).
_QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_ADDED = {"id": 0, "content": "", "single_word": False, "lstrip": False, "rstrip": False}


def _added(token_id: int, content: str) -> dict:
    return {**_ADDED, "id": token_id, "content": content, "normalized": False, "special": True}


def _bpe(vocab: dict[str, int], pairs: list[tuple[str, str]], **options: object) -> dict:
    """A BPE model as `tokenizers` writes it, merges as pairs."""
    merges = [list(pair) for pair in pairs]
    return {"type": "BPE", "dropout": None, **options, "ignore_merges": False,
            "vocab": vocab, "merges": merges}  # fmt: skip


def _qwen3() -> dict:
    alphabet = _byte_alphabet()
    grown, pairs = _grown(alphabet, "Ġ", QWEN3.tokens - len(alphabet), 4, QWEN3.longest)
    vocab = {text: i for i, text in enumerate([*alphabet, *grown])}
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    specials += [f"<|extra_{i}|>" for i in range(QWEN3.added - len(specials))]
    spec = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(len(vocab) + i, t) for i, t in enumerate(specials)],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": _QWEN_SPLIT},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": False,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": False,
            "use_regex": False,
        },
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": False,
            "use_regex": False,
        },
        "model": _bpe(
            vocab,
            pairs,
            unk_token=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
            byte_fallback=False,
        ),
    }
    return spec


def _gemma3() -> dict:
    controls = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[multimodal]"]
    controls += [f"<unused{i}>" for i in range(99)] + ["<start_of_turn>", "<end_of_turn>"]
    bytes_ = [f"<0x{b:02X}>" for b in range(256)]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    letters += [chr(c) for c in range(ord("A"), ord("Z") + 1)] + list("0123456789.,;:!?'\"()-")
    letters += [chr(c) for c in range(0x430, 0x450)] + [chr(c) for c in range(0x4E00, 0x4F00)]
    alphabet = ["▁", *letters]
    fixed = [*controls, *bytes_, *alphabet]
    grown, pairs = _grown(alphabet, "▁", GEMMA3.tokens - len(fixed), 5, GEMMA3.longest)
    vocab = {text: i for i, text in enumerate([*fixed, *grown])}
    spec = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(i, t) for i, t in enumerate(controls)],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        "pre_tokenizer": {
            "type": "Split",
            "pattern": {"String": " "},
            "behavior": "MergedWithPrevious",
            "invert": False,
        },
        "post_processor": None,
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
            ],
        },
        "model": _bpe(
            vocab,
            pairs,
            unk_token="<unk>",
            continuing_subword_prefix=None,
            end_of_word_suffix=None,
            fuse_unk=True,
            byte_fallback=True,
        ),
    }
    return spec


def _text(shape: Shape) -> str:
    """The file, as `tokenizers` writes it pretty."""
    spec = _qwen3() if shape is QWEN3 else _gemma3()
    return json.dumps(spec, indent=2, ensure_ascii=False)


def tokenizer_json(shape: Shape) -> str:
    """The synthetic tokenizer.json of `shape`, made once and kept (as `_MADE_AS`)."""
    kept = Path(tempfile.gettempdir()) / f"playground-bench-{shape.name}-{_MADE_AS}.json"
    if kept.exists():
        return kept.read_text(encoding="utf-8")
    text = _text(shape)
    kept.write_text(text, encoding="utf-8")
    return text
