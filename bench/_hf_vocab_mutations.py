"""Mutations of a `tokenizer.json`'s vocabulary: huge, sparse, shared, empty, odd.

Like `_hf_tokenizer_mutations`: each takes the case's random generator and the `Case`,
changes its `tokenizer.json` value (a seed's when it has none), may add probe texts, and
returns a short name of what it did; `vocab` picks one.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from bench._hf_case import Case, Probe
from bench._hf_tokenizer_mutations import ensure_tokenizer

#: Characters of generated tokens (every string over it, shortest first); one outside the
#: BMP, as real vocabularies have, makes Python spend four bytes on each character.
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789▁.,!😀"
#: Vocabulary sizes of `huge`: most within the 64 MiB upload cap; 3 million tokens
#: are 50 MB as WordLevel and 90 MB as BPE (with merges) or Unigram (with scores).
HUGE_SIZES = ([10_000, 100_000, 500_000, 1_000_000, 2_000_000, 3_000_000],
              [40, 30, 12, 9, 6, 3])  # fmt: skip
#: Merges of a file at most (repeating its merges), to keep cases within about 60 MB.
MAX_MERGES = 2_000_000


def generated_tokens(count: int) -> list[str]:
    """`count` distinct strings: every one-character string, then two, then three..."""
    found: list[str] = []
    for length in itertools.count(1):
        for letters in itertools.product(ALPHABET, repeat=length):
            found.append("".join(letters))
            if len(found) == count:
                return found
    raise AssertionError("unreachable")


def huge_model(kind: str, count: int) -> dict[str, Any]:
    """A `kind` model of `count` generated tokens; BPE merges build each token from its
    prefix and its last character."""
    tokens = generated_tokens(count)
    if kind == "Unigram":
        return {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                "vocab": [[t, -len(t) - i / count] for i, t in enumerate(tokens)]}  # fmt: skip
    vocab = {t: i for i, t in enumerate(tokens)}
    if kind == "WordPiece":
        return {"type": "WordPiece", "unk_token": "a", "continuing_subword_prefix": "##",
                "max_input_chars_per_word": 100, "vocab": vocab}  # fmt: skip
    if kind == "WordLevel":
        return {"type": "WordLevel", "unk_token": "a", "vocab": vocab}
    merges = [[t[:-1], t[-1]] for t in tokens if len(t) > 1]
    return {"type": "BPE", "dropout": None, "unk_token": None, "fuse_unk": False,
            "byte_fallback": False, "vocab": vocab, "merges": merges}  # fmt: skip


#: Ids no vocabulary should hold: past u32, past i64, negative, not whole, not numbers.
ODD_IDS = [2**31 - 1, 2**32 - 1, 2**32, 2**53, 2**63 - 1, 2**64, -1, 1.5, "7", None, 10**6]


def _model(rng: random.Random, case: Case) -> dict[str, Any]:
    model = ensure_tokenizer(rng, case).get("model")
    if not isinstance(model, dict):
        model = ensure_tokenizer(rng, case)["model"] = huge_model("WordLevel", 100)
    return model


def _vocab_keys(model: dict[str, Any]) -> list[Any]:
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        return list(vocab)
    return list(range(len(vocab))) if isinstance(vocab, list) else []


def _huge(rng: random.Random, case: Case) -> str:
    count = rng.choices(*HUGE_SIZES)[0]
    kind = rng.choice(["BPE", "BPE", "WordLevel", "WordPiece", "Unigram"])
    ensure_tokenizer(rng, case)["model"] = huge_model(kind, count)
    case.probes.append(Probe(" ".join(generated_tokens(200)[::7]) + " zz9!"))
    return f"huge-{kind}-{count}"


def _odd_ids(rng: random.Random, case: Case) -> str:
    """Some tokens get odd ids (sparse, huge, negative), or ids they share."""
    model = _model(rng, case)
    vocab, keys = model.get("vocab"), _vocab_keys(model)
    if not keys:
        return "ids-none"
    shared = rng.random() < 0.4
    for key in rng.sample(keys, min(len(keys), rng.randint(1, 8))):
        new = rng.choice([0, 1, 2]) if shared else rng.choice(ODD_IDS)
        if isinstance(vocab, dict):
            vocab[key] = new
        else:  # Unigram: [piece, score]; give the score instead
            score = rng.choice([float("nan"), float("inf"), 1e308, -1e308])
            piece = vocab[key][0] if isinstance(vocab[key], list) and vocab[key] else "x"
            vocab[key] = [piece, score]
    if "unk_id" in model and rng.random() < 0.5:
        model["unk_id"] = rng.choice(ODD_IDS)
    return "ids-shared" if shared else "ids-odd"


def _merges(rng: random.Random, case: Case) -> str:
    """Merges that name missing tokens, have the wrong shape, or are very many."""
    model = _model(rng, case)
    merges = model.get("merges")
    if not isinstance(merges, list) or not merges:
        model["merges"] = merges = [["a", "b"]]
    shape = rng.randrange(4)
    if shape == 0:
        merges.append(["nothere", f"x{rng.getrandbits(20)}"])
    elif shape == 1:
        merges.insert(0, rng.choice(["a b", "a b c", "", " ", ["a"], ["a", "b", "c"], [], [1, 2]]))
    elif shape == 2:
        times = min(rng.choice([10, 1000]), MAX_MERGES // len(merges))
        merges.extend(merges * times)  # each merge many times
    else:
        model["merges"] = {"a": "b"}
    return f"merges-{shape}"


def _empty(rng: random.Random, case: Case) -> str:
    model = _model(rng, case)
    model["vocab"] = [] if model.get("type") == "Unigram" else {}
    if "merges" in model:
        model["merges"] = []
    if rng.random() < 0.5:
        ensure_tokenizer(rng, case)["added_tokens"] = []
    return "empty"


def _parameters(rng: random.Random, case: Case) -> str:
    """The model's own settings given odd values."""
    model = _model(rng, case)
    name = rng.choice(
        ["unk_token", "unk_id", "continuing_subword_prefix", "end_of_word_suffix",
         "max_input_chars_per_word", "dropout", "byte_fallback", "fuse_unk", "type"]
    )  # fmt: skip
    model[name] = rng.choice(
        [None, "", "nothere", "x" * 100_000, 0, -1, 1.5, 2**64 - 1, 2**64, True, "BPE", "Nope",
         float("nan"), 1.0, 0.0]
    )  # fmt: skip
    return f"param-{name}"


#: Contents of added tokens: empty, blank, a NUL, long, regex-like, markers, huge.
ADDED_CONTENTS = ["", " ", "\x00", "a" * 1000, "(a+)+$", "<s>", "▁", "ﷺ", "x" * 300_000]


def _added(rng: random.Random, case: Case) -> str:
    """Added tokens with odd ids or contents, or very many of them."""
    tokenizer = ensure_tokenizer(rng, case)
    added = tokenizer.get("added_tokens")
    if not isinstance(added, list):
        tokenizer["added_tokens"] = added = []
    count = rng.choice([1, 1, 3, 10_000, 100_000])
    content = rng.choice(ADDED_CONTENTS)
    for index in range(count):
        text = content if count < 10 else f"{content[:20]}{index}"
        if count < 10 and rng.random() < 0.1:
            text = case.fragment('"\\ud800"')  # a lone surrogate, escaped as JSON allows
        added.append(
            {"id": rng.choice([*ODD_IDS, len(added), 0]), "content": text,
             "single_word": rng.random() < 0.5, "lstrip": rng.random() < 0.5,
             "rstrip": rng.random() < 0.5, "normalized": rng.random() < 0.5,
             "special": rng.random() < 0.5}
        )  # fmt: skip
    case.probes.append(Probe((content or "a") * 3 + " " + (content[:50] + " ") * 1000))
    return f"added-{count}"


def _post_processor(rng: random.Random, case: Case) -> str:
    """A post-processor that adds ids the vocabulary does not have."""
    token_id = rng.choice(ODD_IDS)
    ensure_tokenizer(rng, case)["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "<x>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<x>": {"id": "<x>", "ids": [token_id], "tokens": ["<x>"]}},
    }
    return "post-processor"


def _padding(rng: random.Random, case: Case) -> str:
    """Padding to a fixed length (every text becomes that many tokens), or truncation."""
    tokenizer = ensure_tokenizer(rng, case)
    if rng.random() < 0.3:
        tokenizer["truncation"] = {
            "direction": rng.choice(["Right", "Left", "Up"]), "max_length": rng.choice(ODD_IDS),
            "strategy": rng.choice(["LongestFirst", "OnlySecond", "Nope"]),
            "stride": rng.choice([0, 5, 2**64 - 1]),
        }  # fmt: skip
        return "truncation"
    length = rng.choice([100_000, 1_000_000, 10_000_000, 100_000_000, 2**32])
    tokenizer["padding"] = {
        "strategy": {"Fixed": length} if rng.random() < 0.7 else "BatchLongest",
        "direction": rng.choice(["Right", "Left"]), "pad_id": rng.choice(ODD_IDS),
        "pad_to_multiple_of": rng.choice([None, None, 0, length]), "pad_type_id": 0,
        "pad_token": rng.choice(["<pad>", "", "x" * 10_000]),
    }  # fmt: skip
    return f"padding-{length}"


VOCAB_MUTATIONS = [_huge, _odd_ids, _merges, _empty, _parameters, _added, _added, _post_processor,
                   _padding]  # fmt: skip


def vocab(rng: random.Random, case: Case) -> str:
    """Huge, sparse, duplicated, empty or odd vocabularies, merges and added tokens."""
    return rng.choice(VOCAB_MUTATIONS)(rng, case)
