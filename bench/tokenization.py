"""Time `app.tokens.vocab.tokenize` (ids + boundaries) on a ~100k-token prompt.

    python -m bench.tokenization [--vocab path/to/ggml-vocab-*.gguf] [--tokens 100000]

Defaults to llama.cpp's llama-spm test vocabulary in the shared folder beside the checkout.
Prints the build time, the time of `tokenize` and, beside it, a bare `Tokenizer.encode` of the
same text (the floor: no special-token partition, no Token objects).
"""

import argparse
import sys
import time
from pathlib import Path

from gguf import GGUFReader

from app.tokens.vocab import VocabTokenizer, tokenize

SHARED_VOCAB = Path(__file__).resolve().parents[2] / "shared" / "upstream" / "llama.cpp" / "vocab"
DEFAULT_VOCAB = SHARED_VOCAB / "ggml-vocab-llama-spm.gguf"
# A chat turn with the kinds of text prompts carry: prose, code, numbers, non-Latin scripts, emoji.
TURN = (
    "<|user|>\nCan you explain what this function does? It's from our 2024 codebase:\n"
    "```python\ndef mean(xs: list[float]) -> float:\n    return sum(xs) / len(xs)  # 🦙\n```\n"
    "Also translate 'hello' into Русский, 中文 and Tiếng Việt.</s>\n"
    "<|assistant|>\nThe function returns the arithmetic mean of `xs`; it raises "
    "ZeroDivisionError for an empty list. Привет, 你好, xin chào! 🚀✅</s>\n"
)


def main() -> None:
    """Build the vocabulary, make a prompt of about --tokens tokens and time both paths."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=Path, default=DEFAULT_VOCAB, help="a vocab GGUF file")
    parser.add_argument("--tokens", type=int, default=100_000, help="prompt size in tokens")
    args = parser.parse_args()

    reader = GGUFReader(args.vocab)
    fields = {name: field.contents() for name, field in reader.fields.items()}
    start = time.perf_counter()
    tok = VocabTokenizer.from_gguf_fields(fields)
    built = time.perf_counter() - start
    if not tok.support.supported or tok.tokenizer is None:
        sys.exit(f"{args.vocab.name}: unsupported: {tok.support.reason}")

    per_turn = len(tokenize(tok, TURN))
    text = TURN * max(1, round(args.tokens / per_turn))

    start = time.perf_counter()
    tokens = tokenize(tok, text, add_special=True)
    full = time.perf_counter() - start
    start = time.perf_counter()
    bare = tok.tokenizer.encode(text, add_special_tokens=False)
    floor = time.perf_counter() - start

    print(f"vocab     {args.vocab.name} ({tok.vocab_size} tokens, built in {built:.2f} s)")
    print(f"prompt    {len(text):,} characters, {len(tokens):,} tokens")
    print(f"tokenize  {full:.3f} s  (ids, boundaries, special tokens)")
    print(f"encode    {floor:.3f} s  (bare Tokenizer.encode, {len(bare.ids):,} ids)")


if __name__ == "__main__":
    main()
