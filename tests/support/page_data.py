"""Inputs for `bench.page` and the browser tests of the output views: a synthetic
150k-token vocabulary, long prompts, and the in-page probe that times keystroke to
updated output."""

from __future__ import annotations

import random
import string
from itertools import product
from pathlib import Path

from gguf import GGUFWriter

#: Tokens in the synthetic SentencePiece vocabulary (as Qwen's and Llama 3's: about 150k).
VOCAB_SIZE = 150_000
#: GGUF token types: normal, control, byte.
NORMAL, CONTROL, BYTE = 1, 3, 6


def _pieces(count: int) -> list[str]:
    """Letters, then "▁"-words of 1 to 5 letters, in order of length: `count` pieces."""
    pieces = ["▁", *string.ascii_letters, *string.digits, *string.punctuation]
    for length in range(1, 6):
        for letters in product(string.ascii_lowercase, repeat=length):
            word = "".join(letters)
            pieces.extend(("▁" + word, word) if length > 1 else ("▁" + word,))
            if len(pieces) >= count:
                return pieces[:count]
    return pieces


def synthetic_vocab(path: Path, size: int = VOCAB_SIZE, *, add_bos: bool | None = None) -> Path:
    """A SentencePiece ("llama") GGUF vocabulary of `size` tokens with byte fallback: a
    word of up to five lower-case letters after a space is one token, a newline one byte
    token. Scores grow with length, so words merge whole. `add_bos`: the header's
    `tokenizer.ggml.add_bos_token` (None: no such key)."""
    control = ["<unk>", "<s>", "</s>"]
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    words = _pieces(size - len(control) - len(byte_tokens))
    writer = GGUFWriter(path, arch="llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(control + byte_tokens + words)
    writer.add_token_scores(
        [0.0] * (len(control) + len(byte_tokens)) + [float(len(w)) for w in words]
    )
    writer.add_token_types([CONTROL] * 3 + [BYTE] * 256 + [NORMAL] * len(words))
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    if add_bos is not None:
        writer.add_add_bos_token(add_bos)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def prose(words: int, seed: int = 13) -> str:
    """`words` short lower-case words (one token each in the synthetic vocabulary), a
    newline after every 12th: about 4 characters per word."""
    rng = random.Random(seed)
    out = []
    for index in range(words):
        word = "".join(rng.choices(string.ascii_lowercase, k=rng.choice((2, 3, 3, 4))))
        out.append(word + ("\n" if index % 12 == 11 else " "))
    return "".join(out)


def long_conversation(tokens: int, turns: int = 20, seed: int = 0) -> list[dict[str, str]]:
    """`turns` alternating user and assistant messages of about `tokens` tokens in all
    (another `seed`, other words)."""
    roles = ("user", "assistant")
    per_turn = tokens // turns
    return [
        {"role": roles[k % 2], "content": prose(per_turn, seed=seed * turns + k).strip()}
        for k in range(turns)
    ]


def many_messages(count: int = 200) -> list[dict[str, str]]:
    """`count` short alternating messages, as a long chat has."""
    roles = ("user", "assistant")
    return [{"role": roles[k % 2], "content": prose(30, seed=k).strip()} for k in range(count)]


#: Installed in the page before an edit: records when a key goes down (or a tab is
#: clicked), and the phases of the output's update after it: the request sent (after the
#: debounce), its answer read, the answer swapped in, and drawn (two frames after the
#: swap, so that layout, paint and anything drawn right after the swap are included).
PROBE = """() => {
    const probe = window.__probe = {start: 0, end: 0, sent: 0, received: 0, swapped: 0, bytes: 0};
    const holder = document.getElementById("output").parentElement;
    let last = document.getElementById("output").dataset.seq;
    const begin = () => {
        Object.assign(probe, {start: performance.now(), end: 0, sent: 0, received: 0, swapped: 0});
    };
    document.addEventListener("keydown", begin, true);
    document.addEventListener("click", (event) => {
        if (event.target.closest(".tab")) begin();
    }, true);
    const isOutput = (event) => event.detail.target && event.detail.target.id === "output";
    document.body.addEventListener("htmx:beforeRequest", (event) => {
        if (isOutput(event)) probe.sent = performance.now();
    });
    document.body.addEventListener("htmx:beforeOnLoad", (event) => {
        if (!isOutput(event)) return;
        probe.received = performance.now();
        probe.bytes = (event.detail.xhr.responseText || "").length;
    });
    new MutationObserver(() => {
        const output = document.getElementById("output");
        if (!output || output.dataset.seq === last) return;
        last = output.dataset.seq;
        probe.swapped = performance.now();
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
            probe.end = performance.now();
        })));
    }).observe(holder, {childList: true});
}"""


#: After a page load: milliseconds from navigation start to two frames after the load event.
FIRST_PAINT = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(
    () => setTimeout(() => done(performance.now())))))"""
