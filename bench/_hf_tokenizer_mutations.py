"""Mutations of a `tokenizer.json`'s text handling: hostile regexes, growing normalisers.

Each takes the case's random generator and the `Case`, changes its `tokenizer.json`
value (adding one from the seeds when the case has none), may add probe texts that make
the change bite (a text the regex backtracks on, a run of the character a normaliser
grows), and returns a short name of what it did. Vocabularies: `_hf_vocab_mutations`.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from bench._hf_case import TOKENIZER, Case, Probe, pick
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
        step = {"type": "Sequence", "normalizers": [pick(rng, _FLAT) for _ in range(count)]}
        name = f"sequence{count}"
    original = tokenizer.get("normalizer")
    if original and rng.random() < 0.5:
        step = {"type": "Sequence", "normalizers": [original, step]}
    tokenizer["normalizer"] = step
    case.probes.append(Probe("ﷺ" * rng.choice([10, 10_000])))  # NFKC makes it 18 characters
    return name
