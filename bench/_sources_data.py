"""Real-size synthetic sources for `bench/sources.py`: a 150k-token byte-level BPE GGUF
vocabulary with 75k merges, and a `tokenizer.json` of 262k tokens as Gemma 3's.

Both are made of merges that really build their tokens (each merge joins two tokens of
the vocabulary into a third), so the tokenizers built from them tokenize text as real
ones do; `text_of_tokens` makes a text of about N tokens for them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from gguf import GGUFWriter
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

#: Sizes as the issue states them (a Qwen-like GGUF; Gemma 3's tokenizer.json).
GGUF_TOKENS = 150_000
GGUF_MERGES = 75_000
JSON_TOKENS = 262_144
#: What a client sends of a model file: its first 16 MiB.
PREFIX_BYTES = 16 << 20
#: The size of the sparse "model file" the prefix is cut from.
MODEL_FILE_BYTES = 40 * 10**9

_PROSE = (
    "the of and to in is that for it as with was on be by at this from or have an they "
    "which one you were her all she there would their we him been has when who will more "
    "no if out so said what up its about into than them can only other new some could "
    "time these two may then do first any my now such like our over man me even most"
)
_WORDS = _PROSE.split()


def _byte_alphabet() -> list[str]:
    """GPT-2's printable stand-in for each byte (byte-level BPE's alphabet)."""
    keep = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in keep:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def _grown(
    alphabet: list[str], space: str, merges: int, seed: int, longest: int = 12
) -> tuple[list[str], list[tuple[str, str]]]:
    """New tokens of at most `longest` characters, each made by one merge of two earlier
    ones (words first, as real vocabularies' first merges are), and those merges in order."""
    rng = random.Random(seed)
    known = set(alphabet)
    tokens: list[str] = []
    pairs: list[tuple[str, str]] = []

    def add(left: str, right: str) -> None:
        if left in known and right in known and left + right not in known:
            known.add(left + right)
            tokens.append(left + right)
            pairs.append((left, right))

    for word in _WORDS:  # every common word, with and without its leading space
        for start in ("", space):
            text = start + word
            for cut in range(1, len(text)):
                add(text[:cut], text[cut])
                if len(pairs) >= merges:
                    return tokens, pairs
    pool = list(alphabet) + tokens
    while len(pairs) < merges:
        left, right = rng.choice(pool), rng.choice(pool)
        if len(left) + len(right) <= longest:
            before = len(pairs)
            add(left, right)
            if len(pairs) > before:
                pool.append(tokens[-1])
    return tokens, pairs


def gguf_vocabulary() -> tuple[list[str], list[str], list[int]]:
    """Tokens, merges ("a b") and token types of a byte-level BPE vocabulary."""
    alphabet = _byte_alphabet()
    grown, pairs = _grown(alphabet, alphabet[ord(" ")], GGUF_MERGES, seed=1)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens = [*alphabet, *grown]
    filler = GGUF_TOKENS - len(tokens) - len(specials)
    # The rest of a real vocabulary is reached by merges too; unreached tokens cost the
    # same to build, and keep this file quick to make.
    tokens += [f"Ġfill{i:06d}" for i in range(filler)] + specials
    types = [1] * (len(tokens) - len(specials)) + [3] * len(specials)
    return tokens, [f"{a} {b}" for a, b in pairs], types


def write_gguf(path: Path) -> None:
    """The header of a Qwen-like model (gpt2/qwen2 vocabulary, a chat template), then one
    small tensor: what gguf-py's `GGUFReader` reads whole."""
    tokens, merges, types = gguf_vocabulary()
    writer = GGUFWriter(path, arch="qwen2")
    writer.add_name("bench")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_merges(merges)
    writer.add_token_types(types)
    writer.add_bos_token_id(len(tokens) - 3)
    writer.add_eos_token_id(len(tokens) - 1)
    writer.add_add_bos_token(False)
    writer.add_chat_template(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    writer.add_tensor("token_embd.weight", np.zeros(16, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def model_prefix(header: Path, model: Path) -> bytes:
    """The first `PREFIX_BYTES` of a sparse `MODEL_FILE_BYTES` file starting with `header`."""
    model.write_bytes(header.read_bytes())
    with model.open("r+b") as file:
        file.truncate(MODEL_FILE_BYTES)
    with model.open("rb") as file:
        return file.read(PREFIX_BYTES)


def tokenizer_json(small: bool = False) -> str:
    """A Gemma-3-like `tokenizer.json`: BPE over "▁"-spelt words with byte fallback,
    262,144 tokens (control tokens first, 256 byte tokens), as `tokenizers` writes it;
    `small`: a tenth of that, for the suite's fast variant."""
    size = JSON_TOKENS // 10 if small else JSON_TOKENS
    controls = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
    bytes_ = [f"<0x{b:02X}>" for b in range(256)]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    letters += [chr(c) for c in range(ord("A"), ord("Z") + 1)] + list("0123456789.,;:!?'\"()-")
    letters += [chr(c) for c in range(0x430, 0x450)] + [chr(c) for c in range(0x4E00, 0x4F00)]
    alphabet = ["▁", *letters]
    grown, pairs = _grown(alphabet, "▁", size - len(controls) - len(bytes_) - len(alphabet), seed=2)
    vocab = {text: i for i, text in enumerate([*controls, *bytes_, *alphabet, *grown])}
    model = models.BPE(vocab=vocab, merges=pairs, unk_token="<unk>", byte_fallback=True)
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_next")
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in controls])
    return tokenizer.to_str()


def tokenizer_config() -> str:
    """The `tokenizer_config.json` beside it: a Gemma-like template and special tokens."""
    template = (
        "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m.role }}\n"
        "{{ m.content }}<end_of_turn>\n{% endfor %}"
    )
    config = {"bos_token": "<bos>", "eos_token": "<eos>", "chat_template": template}
    return json.dumps(config)


def text_of_tokens(count: int) -> str:
    """Prose of common words, about `count` tokens long for both vocabularies."""
    rng = random.Random(3)
    words = [rng.choice(_WORDS) for _ in range(count)]
    lines = [" ".join(words[i : i + 12]) + "." for i in range(0, count, 12)]
    return "\n".join(lines)
