"""Hostile inputs found by attacks on the live service, built here for tests and benches.

Each one cost the service something before it was hardened: see the hardening tests
(`tests/test_hostile_*.py`) and `bench/attack.py`.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

from gguf import GGUFWriter
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

#: Text on which the pre-tokenizer of `backtracking_tokenizer` backtracks until the regex
#: engine gives up (the tokenizers library panics).
BACKTRACKING_TEXT = "b" + "a" * 100_000 + "b"


def word_level(extra: list[str] | None = None) -> Tokenizer:
    """A tiny word-level tokenizer ("a", "b" and `extra`), split on whitespace."""
    vocab = {"<unk>": 0, "a": 1, "b": 2}
    vocab.update({token: 3 + i for i, token in enumerate(extra or [])})
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


def backtracking_tokenizer() -> str:
    """A tokenizer.json whose `Split` regex `(a+)+$` backtracks catastrophically."""
    tokenizer = word_level()
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("(a+)+$"), "isolated")
    return tokenizer.to_str()


def exploding_normalizer() -> str:
    """A tokenizer.json that turns every "a" into a million "b"s."""
    tokenizer = word_level()
    tokenizer.normalizer = normalizers.Replace("a", "b" * 10**6)
    return tokenizer.to_str()


def big_tokenizer(tokens: int = 600_000) -> str:
    """A tokenizer.json of `tokens` long tokens (about 35 bytes of JSON each)."""
    return word_level([f"token{i:07d}" + "x" * 20 for i in range(tokens)]).to_str()


def gguf_with_array(count: int) -> bytes:
    """A GGUF header whose one KV is an array of `count` uint8 values."""
    key = b"general.hostile"
    kv = struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 0, count) + bytes(count)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + kv


def spm_gguf(folder: Path, tokens: list[str]) -> bytes:
    """A SentencePiece ("llama") vocabulary GGUF with these tokens and a template."""
    path = folder / "spm.gguf"
    writer = GGUFWriter(path, arch="llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([float(-i) for i in range(len(tokens))])
    writer.add_token_types([2, 3, 3] + [1] * (len(tokens) - 3))
    writer.add_chat_template("{{ messages[0].content }}")
    writer.add_float32("general.hostile_nan", math.nan)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path.read_bytes()


def long_token_gguf(folder: Path) -> bytes:
    """An SPM vocabulary with one 400,000-character token: listing its merges the way
    llama.cpp ranks them took 16 s of the web process's CPU."""
    return spm_gguf(folder, ["<unk>", "<s>", "</s>", "a", "b", "ab", "a" * 400_000])


def deep_render_body(depth: int = 900) -> bytes:
    """A render body whose message content is a list nested `depth` deep (under 2 KB)."""
    content = "[" * depth + "]" * depth
    messages = f'[{{"role": "user", "content": {content}}}]'
    return json.dumps({"template": "{{ messages[0].content }}"})[:-1].encode() + (
        f', "messages": {messages}}}'.encode()
    )


def multipart(files: dict[str, str], boundary: str = "playground-hostile") -> tuple[bytes, str]:
    """A multipart body of `files` (field "files") and its Content-Type."""
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
        f"Content-Type: application/json\r\n\r\n{text}\r\n"
        for name, text in files.items()
    ]
    body = ("".join(parts) + f"--{boundary}--\r\n").encode()
    return body, f"multipart/form-data; boundary={boundary}"
