"""Mutations of a `tokenizer.json`'s parts: hostile regexes, growing normalisers, vocabularies.

Each takes the case's random generator and the `Case`, changes its `tokenizer.json`
value (adding one from the seeds when the case has none), may add probe texts that make
the change bite (a text the regex backtracks on, a run of the character a normaliser
grows), and returns a short name of what it did.
"""

from __future__ import annotations

import base64
import itertools
import json
import random
from typing import Any

from bench._hf_case import TOKENIZER, Case, Probe
from bench._hf_seeds import tokenizer_seeds

# --------------------------------------------------------------------------- regexes

#: Patterns that backtrack exponentially, with the unit a probe text repeats to make them.
CATASTROPHIC = [
    ("(a+)+$", "a"), ("(a|a)+$", "a"), ("(a|aa)+$", "a"), ("(.*a){25}", "a"),
    ("((a+)+)+$", "a"), ("(x+x+)+y", "x"), ("^(\\w+\\s?)*$", "word "), ("(\\d+)*\\.", "1"),
    ("(a*)*b", "a"), ("(?:(?:a|b)*a){20}c", "ab"), ("(\\s*\\S*)*$", "a "),
]  # fmt: skip
#: Patterns Oniguruma refuses (or that no Rust regex would accept).
INVALID = [
    "(", ")", "[", "[z-a]", "a{2,1}", "(?<name", "\\", "*a", "a**", "(?P<x>a)(?P<x>b)",
    "\\k<nope>", "\\p{NotAProperty}", "a{99999999}", "(?<=a+)b", "\\x{110000}", "(?", "(?#",
    "[[:alpha:]", "(?i", "\\g<1>", "(?<a>x)\\g<a>", "[\\d-z]",
]  # fmt: skip
#: Patterns that match the empty string somewhere (a split at every position).
EMPTY_MATCHES = ["", "a*", "(?=a)", "\\b", "(?:)", "$", "^", "\\B", "x?"]
BEHAVIORS = ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]


def ensure_tokenizer(rng: random.Random, case: Case) -> dict[str, Any]:
    """The case's `tokenizer.json` value; a seed's when it has none that is an object."""
    if not isinstance(case.docs.get(TOKENIZER), dict):
        case.docs[TOKENIZER] = json.loads(rng.choice(list(tokenizer_seeds().values())))
    return case.docs[TOKENIZER]


def _heavy_pattern(rng: random.Random, case: Case) -> str:
    """A valid pattern that costs a lot to compile or to run."""
    kind = rng.randrange(5)
    if kind == 0:  # a huge alternation
        words = [f"w{rng.getrandbits(40):x}" for _ in range(rng.choice([1000, 20_000, 80_000]))]
        case.probes.append(Probe(" ".join(rng.sample(words, 50))))
        return "|".join(words)
    if kind == 1:  # deep nesting of groups
        depth = rng.choice([100, 1000, 5000, 50_000])
        return "(" * depth + "a" + ")" * depth
    if kind == 2:  # repetition of repetition
        return rng.choice(["(?:a{0,1000}){0,1000}", "a{1000}{1000}", "(?:a{100000})*"])
    if kind == 3:  # a long sequence of classes
        return "\\p{L}" * rng.choice([1000, 20_000])
    case.probes.append(Probe("x" * rng.choice([1000, 100_000]) + "y"))
    return "[\\s\\S]*[\\s\\S]*[\\s\\S]*y"


def hostile_pattern(rng: random.Random, case: Case) -> tuple[str, str]:
    """(kind, pattern); a catastrophic one comes with its probe text."""
    kind = rng.choices(["catastrophic", "invalid", "heavy", "empty"], [5, 3, 2, 2])[0]
    if kind == "catastrophic":
        pattern, unit = rng.choice(CATASTROPHIC)
        count = rng.choice([24, 30, 1000, 30_000]) // len(unit)
        case.probes.append(Probe(unit * count + "!"))
        return kind, pattern
    if kind == "invalid":
        return kind, rng.choice(INVALID)
    if kind == "heavy":
        return kind, _heavy_pattern(rng, case)
    return kind, rng.choice(EMPTY_MATCHES)


def regex(rng: random.Random, case: Case) -> str:
    """A hostile regex in a Split pre-tokenizer or a Replace normaliser."""
    tokenizer = ensure_tokenizer(rng, case)
    kind, pattern = hostile_pattern(rng, case)
    spec = {"Regex": pattern} if rng.random() < 0.9 else {"String": pattern}
    where = rng.randrange(3)
    if where == 0:
        split = {"type": "Split", "pattern": spec, "behavior": rng.choice(BEHAVIORS),
                 "invert": rng.random() < 0.3}  # fmt: skip
        original = tokenizer.get("pre_tokenizer")
        steps = [split, original] if original and rng.random() < 0.5 else [split]
        tokenizer["pre_tokenizer"] = (
            {"type": "Sequence", "pretokenizers": steps} if len(steps) > 1 else split
        )
        return f"split-{kind}"
    replace = {"type": "Replace", "pattern": spec, "content": rng.choice(["", " ", "▁", "ab"])}
    original = tokenizer.get("normalizer")
    steps = [replace, original] if original else [replace]
    tokenizer["normalizer"] = {"type": "Sequence", "normalizers": steps}
    return f"replace-{kind}"


# --------------------------------------------------------------------------- growing


def _growing_step(rng: random.Random, case: Case) -> tuple[str, dict[str, Any]]:
    kind = rng.randrange(5)
    size = rng.choice([1, 15, 16, 17, 64, 10_000, 1_000_000])
    if kind == 0:
        target = rng.choice(["a", " ", "e", "ﷺ"])
        case.probes.append(Probe(target * rng.choice([10, 1000, 100_000])))
        return "replace", {"type": "Replace", "pattern": {"String": target}, "content": "b" * size}
    if kind == 1:
        pattern = {"Regex": rng.choice(EMPTY_MATCHES)}
        return "replace-empty", {"type": "Replace", "pattern": pattern, "content": "xy" * size}
    if kind == 2:
        return "prepend", {"type": "Prepend", "prepend": "▁" * size}
    if kind == 3:
        return "append", {"type": "Append", "append": "x" * size}  # not a normaliser
    charsmap = rng.randbytes(rng.choice([0, 7, 64, 4096]))
    return "precompiled", {
        "type": "Precompiled",
        "precompiled_charsmap": base64.b64encode(charsmap).decode(),
    }


_FLAT = [{"type": "NFC"}, {"type": "Lowercase"}, {"type": "NFKC"},
         {"type": "Replace", "pattern": {"String": "a"}, "content": "a"},
         {"type": "Prepend", "prepend": "x"}, {"type": "Strip", "strip_left": True,
                                               "strip_right": True}]  # fmt: skip


def grow(rng: random.Random, case: Case) -> str:
    """A normaliser that makes text longer: a big Replace or Prepend, a deep or long Sequence."""
    tokenizer = ensure_tokenizer(rng, case)
    shape = rng.randrange(3)
    name, step = _growing_step(rng, case)
    if shape == 1:  # nested Sequences around it
        depth = rng.choice([2, 10, 60, 120, 127, 128, 129, 200, 1000])
        opening = '{"type": "Sequence", "normalizers": ['
        step = case.fragment(opening * depth + json.dumps(step) + "]}" * depth)
        name = f"nested{depth}-{name}"
    elif shape == 2:  # one long Sequence
        count = rng.choice([16, 1000, 100_000])
        step = {"type": "Sequence", "normalizers": [rng.choice(_FLAT) for _ in range(count)]}
        name = f"sequence{count}"
    original = tokenizer.get("normalizer")
    if original and rng.random() < 0.5:
        step = {"type": "Sequence", "normalizers": [original, step]}
    tokenizer["normalizer"] = step
    case.probes.append(Probe("ﷺ" * rng.choice([10, 10_000])))  # NFKC makes it 18 characters
    return name


# --------------------------------------------------------------------------- vocabularies

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
