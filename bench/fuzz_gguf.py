"""Fuzz POST /api/sources/gguf with mutated GGUF headers: `python -m bench.fuzz_gguf`.

Run from the repository root with the shared folder (`../shared`) beside the checkout.
The seeds are llama.cpp's vocabulary GGUF files (`../shared/upstream/llama.cpp/vocab`),
each whole and shrunk (every array cut to its first `SHRUNK_ITEMS` items, so that a
mutation that still parses builds a small tokenizer instead of a 30k-150k one). A walk
of each seed records where its structure is: the tensor and KV counts, every key length,
value type, string length and array element type and count, and sampled token lengths.
Case `i` under `--seed S` is drawn from `random.Random(f"{S}:{i}")`, so every case can be
reproduced alone (`--only I --out FILE` writes its bytes). The mutations:

- `truncate`: cut anywhere, in the first 64 bytes, or a few bytes around a KV boundary;
- `flip`: one to eight bit flips, anywhere or next to a structural field;
- `length`: a length or count field overwritten with a huge (2**64-1, 2**63, 2**40, ...),
  off-by-some or random value;
- `type`: a value type or array element type overwritten with a random code;
- `value`: a number (special token id, score, flag, token type) or a string's bytes
  (token text, key, pre-tokenizer name) replaced with edge values or invalid UTF-8;
- `splice`: a chunk copied over another place (duplicate keys, shifted fields);
- `combo`: two to four of the above (not truncate), sometimes truncated after.

Against a gunicorn it starts (2 workers × 4 threads, temporary data folder), from
`--clients` keep-alive threads. Every answer must be 200 (with an id), 409 (with
`need_bytes` beyond the bytes sent), 422 (a GGUFError with an offset) or 413; no 5xx, no
transport error. A source that loads with a usable vocabulary is then asked to tokenize
`PROBE_TEXT` (specials on), which must answer 200 (every token's span inside the text)
or 422 (`TokenizerUnavailable`). Running the cases, the health checks around the run
(the same gunicorn workers, no trouble in the log, memory growth under
`--memory-budget-mb`) and the report are shared with `fuzz_hf` (`bench/_fuzz.py`).
`--count` cases (default 10,000) from `--start`; exits 1 on any failure.
"""

from __future__ import annotations

import json
import random
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path

from bench._fuzz import (
    Fuzzer,
    FuzzResult,
    Request,
    Send,
    arguments,
    send_or_fail,
    serve_and_fuzz,
)
from bench._fuzz_checks import tokenize_and_check

DEFAULT_SEED = 20261129
#: Arrays of a shrunk seed keep this many items.
SHRUNK_ITEMS = 1024
#: Statuses a GGUF upload may get; anything else (5xx above all) is a failure.
ACCEPTED = {200, 409, 413, 422}
#: How often a case starts from a whole seed rather than a shrunk one. Whole seeds that
#: still parse build a full tokenizer (a quarter of a second each), so they are rarer,
#: except for truncations, which mostly stop early.
WHOLE_SEED_SHARE = {"truncate": 0.3}
WHOLE_SEED_DEFAULT = 0.02
MUTATIONS = (
    ("truncate", 22),
    ("flip", 20),
    ("length", 20),
    ("type", 12),
    ("value", 12),
    ("splice", 4),
)
COMBO_WEIGHT = 10

# GGUF value types (gguf-py's GGUFValueType), for the walk.
_STRING, _ARRAY = 8, 9
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


# --------------------------------------------------------------------------- seeds


@dataclass
class Seed:
    """A GGUF file and where its structural fields are."""

    name: str
    data: bytes
    lengths: list[int] = field(default_factory=list)  # offsets of u64 lengths and counts
    types: list[int] = field(default_factory=list)  # offsets of u32 type codes
    boundaries: list[int] = field(default_factory=list)  # where each KV starts, and the end
    scalars: list[tuple[int, int]] = field(default_factory=list)  # (offset, size) of numbers
    texts: list[tuple[int, int]] = field(default_factory=list)  # (offset, size) of strings

    @property
    def structure(self) -> list[int]:
        return self.lengths + self.types


class _Walk:
    """A little-endian GGUF v2/v3 walk that records field offsets, or shrinks the arrays."""

    def __init__(self, data: bytes, rng: random.Random) -> None:
        self.data, self.pos, self.rng = data, 0, rng
        self.seed = Seed("", data)

    def u32(self) -> int:
        (value,) = struct.unpack_from("<I", self.data, self.pos)
        self.pos += 4
        return value

    def u64(self) -> int:
        (value,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return value

    def string(self, sample: bool = True) -> bytes:
        at = self.pos
        size = self.u64()
        self.pos += size
        if sample:
            self.seed.lengths.append(at)
            if size:
                self.seed.texts.append((at + 8, size))
        return self.data[at + 8 : self.pos]

    def value(self, vtype: int) -> None:
        if vtype == _STRING:
            self.string()
        elif vtype == _ARRAY:
            self.array()
        else:
            self.seed.scalars.append((self.pos, _FIXED[vtype]))
            self.pos += _FIXED[vtype]

    def array(self) -> None:
        self.seed.types.append(self.pos)
        etype = self.u32()
        self.seed.lengths.append(self.pos)
        count = self.u64()
        # Token and merge lists are long: record the fields of a sample of the items.
        picked = set(range(min(count, 8))) | set(self.rng.sample(range(count), min(count, 8)))
        if etype == _STRING:
            for index in range(count):
                self.string(sample=index in picked)
        elif etype == _ARRAY:
            for _ in range(count):
                self.array()
        else:
            size = _FIXED[etype]
            self.seed.scalars += [(self.pos + index * size, size) for index in sorted(picked)]
            self.pos += size * count

    def walk(self) -> Seed:
        if self.data[:4] != b"GGUF":
            raise ValueError("not a GGUF file")
        self.pos = 8
        self.seed.lengths += [8, 16]  # tensor count, KV count
        self.seed.types.append(4)  # the version is a u32 code too
        self.u64()
        kv_count = self.u64()
        for _ in range(kv_count):
            self.seed.boundaries.append(self.pos)
            self.string()  # the key
            self.seed.types.append(self.pos)
            self.value(self.u32())
        self.seed.boundaries.append(self.pos)
        return self.seed

    def shrunk(self, limit: int) -> bytes:
        """The same file with every array cut to its first `limit` items.

        Merges are kept only when both halves and the merged token are among the kept
        tokens, so that a BPE vocabulary still builds a working tokenizer.
        """
        data, out = self.data, bytearray(self.data[:24])
        self.pos = 16
        kv_count = self.u64()
        kept_tokens: set[bytes] = set()
        for _ in range(kv_count):
            start = self.pos
            key = self.string(sample=False)
            vtype = self.u32()
            if vtype != _ARRAY:
                self.value(vtype)
                out += data[start : self.pos]
                continue
            array_at = self.pos
            etype = self.u32()
            count = self.u64()
            if etype not in _FIXED and etype != _STRING:
                self.pos = array_at
                self.array()
                out += data[start : self.pos]
                continue
            items: list[bytes] = []
            for _ in range(count):
                if etype == _STRING:
                    items.append(self.string(sample=False))
                else:
                    items.append(data[self.pos : self.pos + _FIXED[etype]])
                    self.pos += _FIXED[etype]
            if key == b"tokenizer.ggml.merges":
                items = [
                    item
                    for item in items
                    if len(parts := item.split(b" ")) == 2
                    and {parts[0], parts[1], parts[0] + parts[1]} <= kept_tokens
                ]
            items = items[:limit]
            if key == b"tokenizer.ggml.tokens":
                kept_tokens = set(items)
            out += data[start:array_at] + struct.pack("<IQ", etype, len(items))
            for item in items:
                out += struct.pack("<Q", len(item)) + item if etype == _STRING else item
        out += data[self.pos :]  # tensor infos and data, if any
        return bytes(out)


@cache
def load_seeds() -> tuple[Seed, ...]:
    """Every vocabulary GGUF, whole and shrunk, with its structure mapped."""
    from tests.support.shared_data import VOCAB_DIR

    seeds = []
    for path in sorted(VOCAB_DIR.glob("*.gguf")):
        data = path.read_bytes()
        rng = random.Random(path.name)
        whole = _Walk(data, rng).walk()
        whole.name = path.name
        small = _Walk(_Walk(data, rng).shrunk(SHRUNK_ITEMS), rng).walk()
        small.name = f"{path.name}[:{SHRUNK_ITEMS}]"
        seeds += [whole, small]
    if not seeds:
        raise SystemExit(f"No GGUF files in {VOCAB_DIR}: is ../shared beside the repo?")
    return tuple(seeds)


# --------------------------------------------------------------------------- mutations


def _huge(rng: random.Random, original: int, size: int) -> int:
    choices = [
        2**64 - 1,
        2**63,
        2**63 - 1,
        2**62,
        2**48,
        2**40,
        2**40 - 1,
        2**40 + 1,
        2**32,
        2**32 - 1,
        2**31,
        2**24 + 1,
        size,
        size + 1,
        original + rng.randint(1, 16),
        max(0, original - rng.randint(1, 16)),
        0,
        rng.getrandbits(64),
        rng.getrandbits(32),
    ]
    return rng.choice(choices)


def _near(rng: random.Random, seed: Seed, size: int) -> int:
    """A position on or just around a structural field."""
    return min(size - 1, max(0, rng.choice(seed.structure) + rng.randint(-4, 11)))


def _truncate(rng: random.Random, seed: Seed, data: bytearray) -> bytearray:
    where = rng.random()
    if where < 0.3:
        cut = rng.randrange(0, min(64, len(data)))
    elif where < 0.6:
        cut = rng.choice(seed.boundaries) + rng.randint(-16, 16)
    else:
        cut = rng.randrange(0, len(data))
    return data[: max(0, min(cut, len(data) - 1))]


def _flip(rng: random.Random, seed: Seed, data: bytearray) -> bytearray:
    if not data:
        return data
    near = rng.random() < 0.5
    for _ in range(rng.randint(1, 8)):
        at = _near(rng, seed, len(data)) if near else rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
    return data


def _length(rng: random.Random, seed: Seed, data: bytearray) -> bytearray:
    at = rng.choice(seed.lengths)
    if at + 8 > len(data):
        return data
    (original,) = struct.unpack_from("<Q", data, at)
    struct.pack_into("<Q", data, at, _huge(rng, original, len(data)))
    return data


def _type(rng: random.Random, seed: Seed, data: bytearray) -> bytearray:
    at = rng.choice(seed.types)
    if at + 4 > len(data):
        return data
    code = rng.choice([rng.randrange(16), rng.randrange(16), 2**31, 2**32 - 1, rng.getrandbits(32)])
    struct.pack_into("<I", data, at, code)
    return data


_SCALARS = {
    1: [0, 1, 2, 0x7F, 0x80, 0xFF],
    2: [0, 0xFFFF, 0x8000, 0x7FFF],
    4: [0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x7FC00000, 0x7F800000, 0xFF800000],
    8: [0, 2**64 - 1, 2**63, 2**63 - 1, 0x7FF8000000000000, 0x7FF0000000000000],
}
_TEXTS = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\x00", b"<s>", b"{{", b"\xe2\x96"]


def _value(rng: random.Random, seed: Seed, data: bytearray) -> bytearray:
    """A number (special token id, score, flag, token type) or a string's bytes replaced."""
    if rng.random() < 0.5 and seed.scalars:
        at, size = rng.choice(seed.scalars)
        if at + size <= len(data):
            value = rng.choice([*_SCALARS[size], rng.getrandbits(8 * size)])
            data[at : at + size] = value.to_bytes(size, "little")
    elif seed.texts:
        at, size = rng.choice(seed.texts)
        if at + size <= len(data):
            junk = b"".join(rng.choice(_TEXTS) for _ in range(size))[:size]
            data[at : at + size] = junk if rng.random() < 0.7 else rng.randbytes(size)
    return data


def _splice(rng: random.Random, seed: Seed, data: bytearray) -> bytearray:
    if len(data) < 32:
        return data
    source = rng.choice(seed.boundaries[:-1]) if rng.random() < 0.5 else rng.randrange(len(data))
    target = rng.choice(seed.boundaries) if rng.random() < 0.5 else rng.randrange(len(data))
    chunk = data[source : source + rng.randint(1, 256)]
    if rng.random() < 0.5:
        data[target : target + len(chunk)] = chunk  # overwrite
    else:
        data[target:target] = chunk  # insert
    return data


_OPERATORS: dict[str, Callable[[random.Random, Seed, bytearray], bytearray]] = {
    "truncate": _truncate,
    "flip": _flip,
    "length": _length,
    "type": _type,
    "value": _value,
    "splice": _splice,
}


def mutate(index: int, seed_value: int = DEFAULT_SEED) -> tuple[str, str, bytes]:
    """Case `index`: (mutation label, seed name, bytes); the same for the same arguments."""
    rng = random.Random(f"{seed_value}:{index}")
    names = [name for name, _ in MUTATIONS] + ["combo"]
    weights = [weight for _, weight in MUTATIONS] + [COMBO_WEIGHT]
    kind = rng.choices(names, weights)[0]
    whole = rng.random() < WHOLE_SEED_SHARE.get(kind, WHOLE_SEED_DEFAULT)
    seeds = load_seeds()
    seed = rng.choice(seeds[0::2] if whole else seeds[1::2])
    data = bytearray(seed.data)
    if kind == "combo":
        steps = rng.choices(
            [name for name, _ in MUTATIONS if name != "truncate"], k=rng.randint(2, 4)
        )
        for step in steps:
            data = _OPERATORS[step](rng, seed, data)
        if rng.random() < 0.3:
            data = _truncate(rng, seed, data)
        label = "combo(" + "+".join(steps) + ")"
    else:
        data = _OPERATORS[kind](rng, seed, data)
        label = kind
    return label, seed.name, bytes(data)


def cases(count: int, seed_value: int = DEFAULT_SEED) -> Iterator[tuple[int, str, str, bytes]]:
    for index in range(count):
        yield (index, *mutate(index, seed_value))


# --------------------------------------------------------------------------- checking


def check_answer(status: int, body: bytes, sent: int) -> str | None:
    """Why an answer to a GGUF upload of `sent` bytes is wrong, or None if it is fine."""
    if status not in ACCEPTED:
        return f"status {status}: {body[:200]!r}"
    try:
        answer = json.loads(body)
    except ValueError:
        return f"status {status} with a body that is not JSON: {body[:200]!r}"
    if status == 200 and type(answer.get("id")) is not str:
        return "200 without a source id"
    if status in (409, 422, 413) and type(answer.get("error")) is not dict:
        return f"{status} without an error object"
    error = answer.get("error") or {}
    if status == 409:
        need = error.get("need_bytes")
        if error.get("type") != "IncompleteHeader" or type(need) is not int or need <= sent:
            return f"409 asking for need_bytes={need!r} after {sent} bytes were sent"
    if status == 422 and (error.get("type") != "GGUFError" or type(error.get("offset")) is not int):
        return f"422 that is not a GGUFError with an offset: {error}"
    return None


#: What a source that loaded is asked to tokenize (specials on, so ids like BOS are used).
PROBE_TEXT = "<s>Hello wörld! 你好 <|im_start|>user\n\t 123 \u2581x</s>"


def run_case(send: Send, index: int, result: FuzzResult, seed_value: int = DEFAULT_SEED) -> None:
    """Upload case `index`; when it loads with a usable vocabulary, tokenize with it too."""
    label, seed, data = mutate(index, seed_value)
    case = f"case {index} ({label} of {seed}, {len(data)} bytes)"
    request = Request("POST", "/api/sources/gguf?name=fuzz.gguf", data, "application/octet-stream")
    status, body = send_or_fail(send, result, case, request)
    result.record(label, status, len(data))
    if status == 0:
        return
    why = check_answer(status, body, len(data))
    if why is not None:
        result.fail(case, why)
        return
    answer = json.loads(body) if status == 200 else {}
    # A tokenizer still building (`supported` null) is waited for by the tokenizing.
    if answer.get("tokenizer") and answer["tokenizer"].get("supported") is not False:
        probe = {"source": answer["id"], "text": PROBE_TEXT, "add_special": True}
        tokenize_and_check(send, result, label, case, probe)


def fuzzer(seed_value: int = DEFAULT_SEED) -> Fuzzer:
    """The GGUF cases of `--seed seed_value`."""
    return Fuzzer(partial(run_case, seed_value=seed_value))


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = arguments(__doc__.splitlines()[0], count=10_000, budget_mb=512)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--only", type=int, help="write case N to --out instead of fuzzing")
    parser.add_argument("--out", type=Path, help="where --only writes the case's bytes")
    args = parser.parse_args()

    if args.only is not None:
        label, seed, data = mutate(args.only, args.seed)
        if args.out is None:
            parser.error("--only needs --out")
        args.out.write_bytes(data)
        print(f"case {args.only}: {label} of {seed}, {len(data)} bytes -> {args.out}")
        return 0

    seeds = load_seeds()
    print(
        f"seeds: {len(seeds) // 2} vocabulary GGUF files, whole and shrunk to "
        f"{SHRUNK_ITEMS} items per array; seed {args.seed}; {args.count} cases from "
        f"{args.clients} client threads against {args.workers} workers × {args.threads} threads"
    )
    return serve_and_fuzz(fuzzer(args.seed), args)


if __name__ == "__main__":
    sys.exit(main())
