"""What a token stands for: its bytes, and a printable piece."""

from __future__ import annotations

import re

from app.tokens.gguf_vocab import SPECIAL_ATTRS, Attr

SPACE = "▁"  # U+2581, SentencePiece's visible space


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's byte-to-character table, inverted: printable bytes stand for themselves, the rest
    are shifted to U+0100 and up in byte order."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + shifted)
            shifted += 1
    return {c: b for b, c in chars.items()}


BYTE_OF_CHAR = _byte_level_alphabet()
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _byte_level_decode(text: str) -> bytes:
    """Bytes of a byte-level BPE token; characters outside the alphabet stay as UTF-8."""
    out = bytearray()
    for ch in text:
        b = BYTE_OF_CHAR.get(ch)
        if b is None:
            out += ch.encode("utf-8")
        else:
            out.append(b)
    return bytes(out)


def gguf_token_bytes(kind: str, text: str, attr: int) -> bytes:
    """llama.cpp's `token_to_piece(special=True)` for a GGUF token of vocabulary type `kind`."""
    if attr & SPECIAL_ATTRS:
        return text.encode("utf-8")
    if attr & Attr.BYTE and (m := _BYTE_TOKEN.fullmatch(text)):
        return bytes([int(m.group(1), 16)])
    if kind == "bpe" and attr & Attr.NORMAL:
        return _byte_level_decode(text)
    if kind in ("spm", "wpm") and attr & Attr.NORMAL:
        return text.replace(SPACE, " ").encode("utf-8")
    return text.encode("utf-8")  # unused/undefined tokens: llama.cpp prints nothing, we the text


def hf_token_bytes(text: str, byte_level: bool, added: bool) -> bytes:
    """Bytes of an HF vocabulary entry, guessing the spelling from the tokenizer's parts."""
    if added:
        return text.encode("utf-8")
    if byte_level:
        return _byte_level_decode(text)
    if m := _BYTE_TOKEN.fullmatch(text):
        return bytes([int(m.group(1), 16)])
    return text.replace(SPACE, " ").encode("utf-8")


def bytes_to_piece(data: bytes) -> str:
    """`data` as text; bytes that are not valid UTF-8 on their own become `<0xE2>`-style escapes."""
    text = data.decode("utf-8", "surrogateescape")
    if not any("\udc80" <= ch <= "\udcff" for ch in text):
        return text
    return "".join(
        f"<0x{ord(ch) - 0xDC00:02X}>" if "\udc80" <= ch <= "\udcff" else ch for ch in text
    )
