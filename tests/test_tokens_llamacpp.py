"""app.tokens against llama.cpp: its tokenizer test vectors, boundaries, special tokens, BOS."""

from __future__ import annotations

import heapq
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, pre_tokenizers

from app.tokens.build import build_tokenizer
from app.tokens.pretok import PRE_TOKENIZERS
from app.tokens.vocab import Token, VocabTokenizer, tokenize
from tests.support.gguf_fields import load_fields
from tests.support.shared_data import VOCAB_DIR, require_shared
from tests.support.timing import cpu_seconds

require_shared()

SEPARATOR = "\n__ggml_vocab_test__\n"
TESTED_VOCABS = sorted(
    p.name.removeprefix("ggml-vocab-").removesuffix(".gguf.inp")
    for p in VOCAB_DIR.glob("*.gguf.inp")
)
EXPECTED_VOCABS = {"bert-bge", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2", "llama-spm",
                   "mpt", "phi-3", "refact", "starcoder"}  # fmt: skip


def vocab_path(name: str) -> Path:
    return VOCAB_DIR / f"ggml-vocab-{name}.gguf"


@cache
def vocab(name: str) -> VocabTokenizer:
    return VocabTokenizer.from_gguf_fields(load_fields(vocab_path(name)))


def ids(name: str, text: str, **kwargs: bool) -> list[int]:
    return [t.id for t in tokenize(vocab(name), text, **kwargs)]


def cases(name: str) -> list[tuple[str, list[int]]]:
    """llama.cpp's test strings and the ids its test-tokenizer-0 expects for them."""
    path = vocab_path(name)
    texts = path.with_name(path.name + ".inp").read_text(encoding="utf-8").split(SEPARATOR)
    lines = path.with_name(path.name + ".out").read_text(encoding="utf-8").split("\n")
    assert texts[-1] == "" and lines[-1] == ""  # both files end with a separator / newline
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines, strict=True)][:-1]


def test_every_vocab_with_test_vectors_is_here() -> None:
    assert set(TESTED_VOCABS) >= EXPECTED_VOCABS


@pytest.mark.parametrize("name", TESTED_VOCABS)
def test_ids_match_llamacpp(name: str) -> None:
    """Every string of llama.cpp's test file, with add_special=False, parse_special=False."""
    tok = vocab(name)
    assert tok.support.supported, tok.support.reason
    results = cases(name)
    wrong = [(text, want, ids(name, text, parse_special=False)) for text, want in results]
    wrong = [w for w in wrong if w[1] != w[2]]
    print(f"{name} {len(results) - len(wrong)}/{len(results)}")
    assert not wrong, f"{name}: {len(wrong)} mismatches, first: {wrong[0]!r}"


def assert_covers(text: str, tokens: list[Token]) -> None:
    """Spans are in order, leave no gap and end where the text ends."""
    pos = 0
    for t in tokens:
        assert t.start <= pos <= t.end or t.start == t.end == pos, (t, pos)
        pos = max(pos, t.end)
    assert pos == len(text)


BOUNDARY_TEXTS = [
    "Hello world",
    "  leading spaces and trailing  ",
    "🦙🦙 llama 🚀 (normal) 😶\u200d🌫️",
    "我想在apple工作1314151天～",
    "нещо на Български",
    "Cửa Việt\n\n\tcode()",
    "កាន់តែពិសេសអាចខលចេញ",
]


@pytest.mark.parametrize("name", ["gpt-2", "llama-spm", "deepseek-llm", "falcon", "mpt"])
@pytest.mark.parametrize("text", BOUNDARY_TEXTS)
def test_boundaries_cover_the_text_and_bytes_rebuild_it(name: str, text: str) -> None:
    tok = vocab(name)
    tokens = tokenize(tok, text)
    assert_covers(text, tokens)
    rebuilt = b"".join(tok.token_bytes(t.id) for t in tokens).decode("utf-8")
    if name == "llama-spm":
        rebuilt = rebuilt.removeprefix(" ")  # the space llama.cpp puts in front
    assert rebuilt == text
    for t in tokens:
        data = tok.token_bytes(t.id)
        if t.start < t.end:
            # A token spells its span, or part of it when it splits a character into bytes
            # (SentencePiece: maybe after the space llama.cpp put in front).
            span = text[t.start : t.end].encode()
            assert data in span or data.removeprefix(b" ") in span, (t, data)
        if t.piece != data.decode("utf-8", "replace"):
            assert "<0x" in t.piece  # bytes that are not UTF-8 on their own are escaped


def test_split_characters_share_their_span_and_show_bytes() -> None:
    tokens = tokenize(vocab("llama-spm"), "🦙")
    assert [t.piece for t in tokens] == [" ", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"]
    assert [(t.start, t.end) for t in tokens] == [(0, 0)] + [(0, 1)] * 4
    gpt2 = tokenize(vocab("gpt-2"), " 🦙")
    assert [(t.piece, t.start, t.end) for t in gpt2] == [
        (" <0xF0><0x9F>", 0, 2),
        ("<0xA6>", 1, 2),
        ("<0x99>", 1, 2),
    ]


def test_lone_surrogates_become_replacement_characters() -> None:
    tokens = tokenize(vocab("gpt-2"), "a\ud800b")
    assert "".join(t.piece for t in tokens) == "a\ufffdb"
    assert_covers("a\ud800b", tokens)


def test_special_tokens_match_only_when_parsing_special() -> None:
    text = "<s>Hello</s> world"
    on = tokenize(vocab("llama-spm"), text, parse_special=True)
    assert [(t.id, t.start, t.end, t.special) for t in on if t.special] == [
        (1, 0, 3, True),
        (2, 8, 12, True),
    ]
    assert [t.id for t in on] == [1, 15043, 2, 29871, 3186]  # "▁Hello": a space after <s>
    off = ids("llama-spm", text, parse_special=False)
    assert 1 not in off and 2 not in off
    assert ids("gpt-2", "a<|endoftext|>b") == [64, 50256, 65]
    assert 50256 not in ids("gpt-2", "a<|endoftext|>b", parse_special=False)


def test_user_defined_tokens_match_even_without_parse_special() -> None:
    """llama.cpp (like HF) cuts user-defined tokens out before anything else."""
    run = "    "  # MPT/NeoX have user-defined tokens for runs of spaces
    tokens = tokenize(vocab("mpt"), f"a{run}b", parse_special=False)
    assert [t.piece for t in tokens] == ["a", run, "b"]
    assert tokens[1].special


def test_phi3_special_tokens_swallow_following_whitespace() -> None:
    """llama.cpp gives Phi-3's special tokens rstrip (by model name)."""
    tokens = tokenize(vocab("phi-3"), "<|user|>\n hi<|end|>\n")
    assert [(t.id, t.start, t.end) for t in tokens] == [
        (32010, 0, 10),
        (7251, 10, 12),
        (32007, 12, 20),
    ]


def test_add_special() -> None:
    assert ids("llama-spm", "Hello", add_special=True) == [1, 15043]
    assert ids("llama-spm", "", add_special=True) == [1]
    assert ids("llama-spm", "Hello") == [15043]
    assert ids("gpt-2", "Hello", add_special=True) == ids("gpt-2", "Hello")  # no add_bos
    assert ids("deepseek-coder", "Hello", add_special=True)[0] == 32013  # add_bos_token true
    bert = tokenize(vocab("bert-bge"), "Hello", add_special=True)
    assert [t.id for t in bert] == [101, 7592, 102]
    assert [(t.start, t.end, t.special) for t in (bert[0], bert[-1])] == [
        (0, 0, True),
        (5, 5, True),
    ]


def test_a_merge_into_a_token_not_in_the_vocabulary_is_named() -> None:
    fields = {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "gpt-2",
        "tokenizer.ggml.tokens": ["a", "b", "ab"],
        "tokenizer.ggml.merges": ["a b", "a b", "b a"],  # repeated: the first rank is kept
    }
    tokenizer, support = build_tokenizer(fields)
    assert tokenizer is None and support.reason == (
        "merge 'b a' makes a token that is not in the vocabulary"
    )
    fields["tokenizer.ggml.merges"] = ["a b", "a b"]
    tokenizer, support = build_tokenizer(fields)
    assert tokenizer is not None and support.supported
    assert tokenizer.encode("ab").ids == [2]


def test_unknown_pre_tokenizer_is_reported_not_guessed() -> None:
    fields = dict(load_fields(vocab_path("gpt-2")))
    fields["tokenizer.ggml.pre"] = "made-up"
    tokenizer, support = build_tokenizer(fields)
    assert tokenizer is None and not support.supported
    assert support.reason and "made-up" in support.reason
    tok = VocabTokenizer.from_gguf_fields(fields)
    assert not tok.support.supported
    with pytest.raises(ValueError, match="made-up"):
        tokenize(tok, "Hello")
    fields["tokenizer.ggml.model"] = "t5"
    assert "Unigram" in (build_tokenizer(fields)[1].reason or "")


@pytest.mark.parametrize("pre", sorted(PRE_TOKENIZERS))
def test_every_known_pre_tokenizer_compiles(pre: str) -> None:
    for regex in PRE_TOKENIZERS[pre].regexes:
        split = pre_tokenizers.Split(Regex(regex), "isolated")
        text = "Hello, y'all! 123456 中文\n\n  x\u3000"
        assert "".join(p for p, _ in split.pre_tokenize_str(text)) == text


@pytest.mark.parametrize("name", ["baichuan", "gpt-neox"])
def test_vocabs_without_test_vectors_build(name: str) -> None:
    tok = vocab(name)
    assert tok.support.supported, tok.support.reason
    text = "Hello world!\n  def f(x):\n\treturn 'ok' # 🦙 中文"
    tokens = tokenize(tok, text, add_special=True)
    assert tokens and all(0 <= t.id < tok.vocab_size for t in tokens)


def test_gpt_neox_uses_llamacpp_default_pre_tokenizer() -> None:
    """Same vocabulary as MPT, but no `pre`, which llama.cpp reads as its "default" regexes:
    punctuation runs first (so no "'s"), then digits in threes."""
    text = "Hello world 123456 ... it's"
    pieces = [t.piece for t in tokenize(vocab("gpt-neox"), text)]
    assert pieces == ["Hello", " world", " ", "123", "456", " ", "...", " it", "'", "s"]
    pieces = [t.piece for t in tokenize(vocab("mpt"), text)]
    assert pieces == ["Hello", " world", " 12", "34", "56", " ...", " it", "'s"]


@pytest.mark.parametrize("name", ["gpt-2", "llama-spm", "bert-bge", "mpt"])
def test_standalone_tokenizer_agrees(name: str) -> None:
    tokenizer, support = build_tokenizer(load_fields(vocab_path(name)))
    assert tokenizer is not None and support.supported
    text = "Hello world, it's 2024!  🦙"
    assert tokenizer.encode(text, add_special_tokens=False).ids == ids(name, text)
    tokenizer.encode_special_tokens = True
    for text, want in cases(name)[:20]:
        assert tokenizer.encode(text, add_special_tokens=False).ids == want


def test_tokenizer_json_round_trip() -> None:
    tokenizer, _ = build_tokenizer(load_fields(vocab_path("gpt-2")))
    assert tokenizer is not None
    tok = VocabTokenizer.from_tokenizer_json(tokenizer.to_str(), {"bos_token": "<|endoftext|>"})
    assert tok.support.supported and tok.bos_id == 50256
    text = "Hello world<|endoftext|> 🦙"
    assert [t.id for t in tokenize(tok, text)] == ids("gpt-2", text)
    assert 50256 not in [t.id for t in tokenize(tok, text, parse_special=False)]
    assert "".join(t.piece for t in tokenize(tok, "Hello world")) == "Hello world"
    assert not VocabTokenizer.from_tokenizer_json("{not json").support.supported


def test_builds_fast() -> None:
    """A 100k vocabulary with 100k merges builds well within the 2 s budget."""
    fields = load_fields(vocab_path("deepseek-llm"))
    # CPU time: the build's own work, whatever else the machine runs.
    assert cpu_seconds(lambda: VocabTokenizer.from_gguf_fields(fields), repeat=1) < 2.0


# --- SentencePiece merges: HF ranks vs llama.cpp's score-then-leftmost queue ----------------


def llamacpp_spm(text: str, token_ids: dict[str, int], scores: list[float]) -> list[int]:
    """A slow re-statement of llama.cpp's SPM loop: merge the adjacent pair forming the
    highest-scoring token, leftmost on ties; leftovers become <0xXX> byte tokens."""
    sym = list(("▁" + text).replace(" ", "▁"))
    nxt = [*range(1, len(sym)), -1]
    prv = list(range(-1, len(sym) - 1))
    queue: list[tuple[float, int, int, int]] = []

    def push(left: int, right: int) -> None:
        if left >= 0 and right >= 0 and (merged := sym[left] + sym[right]) in token_ids:
            heapq.heappush(queue, (-scores[token_ids[merged]], left, right, len(merged)))

    for i in range(1, len(sym)):
        push(i - 1, i)
    while queue:
        _, left, right, size = heapq.heappop(queue)
        if not sym[left] or not sym[right] or len(sym[left]) + len(sym[right]) != size:
            continue
        sym[left], sym[right] = sym[left] + sym[right], ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        push(prv[left], left)
        push(left, nxt[left])
    out: list[int] = []
    for s in sym:
        if s in token_ids:
            out.append(token_ids[s])
        elif s:
            out.extend(token_ids[f"<0x{b:02X}>"] for b in s.encode())
    return out


@cache
def spm_tables(name: str) -> tuple[dict[str, int], list[float], list[str]]:
    fields = load_fields(vocab_path(name))
    tokens = fields["tokenizer.ggml.tokens"]
    normal = [
        t.replace("▁", " ")
        for t, kind in zip(tokens, fields["tokenizer.ggml.token_type"], strict=True)
        if kind == 1
    ]
    extra = [" ", "  ", "\n", "\t", "🦙", "é", "中", "<0x0A>"]
    return {t: i for i, t in enumerate(tokens)}, fields["tokenizer.ggml.scores"], normal + extra


@pytest.mark.parametrize("name", ["llama-spm", "baichuan"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_spm_ranks_agree_with_llamacpp_queue(name: str, data: st.DataObject) -> None:
    """Equal scores (Llama's "▁▁…" tokens, Baichuan's zero-scored ones) are the risky part."""
    token_ids, scores, pieces = spm_tables(name)
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=8)))
    assert ids(name, text, parse_special=False) == llamacpp_spm(text, token_ids, scores)
