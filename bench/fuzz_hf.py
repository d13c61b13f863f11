"""Fuzz POST /api/sources/hf with hostile Hugging Face files: `python -m bench.fuzz_hf`.

Needs nothing beyond the test extras: the seeds are built here with the `tokenizers`
library (`bench/_hf_seeds.py`): `tokenizer.json` files of byte-level BPE (GPT-2, Llama 3),
SentencePiece-like BPE with byte fallback (Llama 2), WordPiece (BERT), Unigram and
WordLevel; `tokenizer_config.json` files with a chat template as a string or as named
templates, special tokens as strings or AddedToken objects, BOS/EOS flags; and
`chat_template.jinja`, `tool_use.jinja`, `chat_template.json`. Case `i` under `--seed S`
is drawn from `random.Random(f"{S}:{i}")`: some of those files, then one mutation family
(or two to four for `combo`), so every case can be reproduced alone (`--only I --out DIR`
writes its files). The families:

- `seed`: the files as built, which must load and tokenize (200 and 200);
- `regex`: a catastrophically backtracking, invalid, huge (alternations, nesting) or
  empty-matching regex in a `Split` pre-tokenizer or a `Replace` normaliser, with a probe
  text that makes it backtrack;
- `grow`: normalisers that make text longer (`Replace` with huge content, `Prepend` with
  long strings, nested or very long `Sequence`s, unknown or garbage normalisers);
- `vocab`: huge vocabularies and merges (10 thousand to 4.5 million tokens, the largest
  past the upload cap), sparse, huge, negative or shared ids, broken merges, empty
  vocabularies, odd model settings, added tokens with odd ids and contents (empty, NUL,
  300 KB, a lone surrogate) or by the hundred thousand, post-processors adding ids past
  the vocabulary, padding to millions of tokens, odd truncation;
- `json`: a wrong type anywhere, nesting past the parsers' limits, NaN, Infinity and
  huge numbers, a key twice, truncation, invalid UTF-8, a BOM or trailing garbage;
- `config`: every field the reader takes from `tokenizer_config.json` with other types
  (`chat_template` a number, an object, lists of wrong shapes; special tokens as lists,
  numbers, objects without content; flags as strings), thousands of named templates,
  configs of megabytes (a special token, templates just under the template cap, added
  tokens), a config or `chat_template.json` that is not an object;
- `upload`: odd or unknown file names, a file twice, no file, thousands of parts, a cut
  multipart body;
- `combo`: two to four of the mutations above.

Every upload must answer 200 (a source with an id), 422 (an `HFFileError` naming a file
sent, or a `LimitExceeded` naming its limit), 413 or 400. A source that loads must read
back the same (`GET /api/sources/<id>` on a new connection, so perhaps from the other
gunicorn worker, which rebuilds it from the database); one with a supported tokenizer
must tokenize `PROBE_TEXT` and the case's probe texts with 200 (spans inside the text)
or 422 (`TokenizerUnavailable`), the last one on a new connection too. Against a gunicorn it starts
(source workers capped by `--source-memory-mb`, 512 by default), with the health checks
of `bench/_fuzz.py`: the same gunicorn workers, no traceback in the log, memory growth
of the process tree under `--memory-budget-mb` (by default every source worker at its
cap plus `WEB_ALLOWANCE_MB` per web process: see `memory_budget_mb`). Exits 1 on any
failure.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from bench import _hf_file_mutations as files
from bench import _hf_tokenizer_mutations as tokenizer
from bench import _hf_vocab_mutations as vocabulary
from bench._fuzz import (
    Fuzzer,
    FuzzResult,
    Request,
    Send,
    arguments,
    send_or_fail,
    serve_and_fuzz,
)
from bench._fuzz_checks import json_object, tokenize_and_check
from bench._hf_case import Case, Part, Probe, multipart
from bench._hf_seeds import config_seeds, template_file_seeds, tokenizer_seeds

DEFAULT_SEED = 20261130
#: Statuses an upload may get; anything else (5xx above all) is a failure.
ACCEPTED = {200, 400, 413, 422}
#: Mutation families: weight, and the operators one is drawn from (`seed`: none).
FAMILIES: dict[str, tuple[int, list[Any]]] = {
    "seed": (3, []),
    "regex": (14, [tokenizer.regex]),
    "grow": (10, [tokenizer.grow]),
    "vocab": (16, [vocabulary.vocab]),
    "json": (20, [files.wrong_type, files.wrong_type, files.deep, files.huge_number,
                  files.duplicate_key, files.truncate, files.truncate, files.invalid_utf8,
                  files.framing]),
    "config": (15, files.CONFIG_MUTATIONS),
    "upload": (6, files.UPLOAD_MUTATIONS),
    "combo": (12, []),
}  # fmt: skip
#: Operators that work on the written parts, after every one that works on the files.
PART_OPS = {files.truncate, files.invalid_utf8, files.framing, *files.UPLOAD_MUTATIONS}
#: What a source that loaded is always asked to tokenize.
PROBE_TEXT = "<s>Hello wörld! 你好 <|im_start|>user\n\t 123 ▁x</s> [CLS] 🍂 ﷺ <unk>"
#: Probe texts of the case's own (the backtracking text, say) sent besides `PROBE_TEXT`.
CASE_PROBES = 2
#: Source workers per web process (the default of `PLAYGROUND_SOURCE_WORKERS`).
SOURCE_WORKERS = 2
#: What a web process may hold on top of its start: it reads each upload, as bytes, as
#: text and as the canonical JSON it stores (about five copies in flight per request
#: thread), and glibc keeps each thread's high-water mark.
WEB_ALLOWANCE_MB = 1024


def memory_budget_mb(workers: int, source_memory_mb: int) -> int:
    """The growth the process tree may show: every source worker at its cap, and each web
    process its allowance."""
    return workers * (SOURCE_WORKERS * source_memory_mb + WEB_ALLOWANCE_MB)


@dataclass
class HFCase:
    """One case as it is sent: the upload's parts and body, and the texts to tokenize."""

    label: str
    seed: str
    parts: list[Part]
    body: bytes
    content_type: str
    probes: list[Probe]

    @property
    def names(self) -> set[str]:
        """The file names sent, and their last parts (what the reader names files by)."""
        names = {part.name or "unnamed" for part in self.parts}
        return names | {PurePosixPath(name).name for name in names}


def seed_case(rng: random.Random) -> tuple[str, Case]:
    """Some of the seed files: a tokenizer.json, a config, template files (at least one)."""
    docs: dict[str, Any] = {}
    names = []
    if rng.random() < 0.85:
        name, text = rng.choice(list(tokenizer_seeds().items()))
        docs["tokenizer.json"] = json.loads(text)
        names.append(name)
    if rng.random() < 0.7 or not docs:
        name, config = rng.choice(list(config_seeds().items()))
        docs["tokenizer_config.json"] = json.loads(json.dumps(config))
        names.append(name)
    if rng.random() < 0.3:
        templates = template_file_seeds()
        for name in rng.sample(list(templates), rng.randint(1, len(templates))):
            docs[name] = json.loads(json.dumps(templates[name]))
            names.append(name)
    return "+".join(names), Case(docs)


def _draw(rng: random.Random) -> tuple[str, list[Any]]:
    """A family and its operators (two to four, of any family, for `combo`)."""
    weights = {name: weight for name, (weight, _) in FAMILIES.items()}
    family = rng.choices(list(weights), list(weights.values()))[0]
    if family == "combo":
        others = [name for name in FAMILIES if FAMILIES[name][1]]
        chosen = rng.choices(others, [weights[n] for n in others], k=rng.randint(2, 4))
        return family, [rng.choice(FAMILIES[name][1]) for name in chosen]
    operators = FAMILIES[family][1]
    return family, [rng.choice(operators)] if operators else []


def mutate(index: int, seed_value: int = DEFAULT_SEED) -> HFCase:
    """Case `index`: the same files and texts for the same arguments."""
    rng = random.Random(f"{seed_value}:{index}")
    seed, case = seed_case(rng)
    family, operators = _draw(rng)
    for operator in operators:
        if operator not in PART_OPS:
            case.steps.append(operator(rng, case))
    parts = case.parts()
    for operator in operators:
        if operator in PART_OPS:
            case.steps.append(operator(rng, case, parts))
    body, content_type = multipart(parts, rng)
    if case.cut_body is not None:
        body = body[: int(len(body) * case.cut_body)]
    probes = [Probe(PROBE_TEXT, rng.random() < 0.5, rng.random() < 0.8)]
    probes += case.probes[:CASE_PROBES]
    label = f"{family}({'+'.join(case.steps)})" if case.steps else family
    return HFCase(label, seed, parts, body, content_type, probes)


# --------------------------------------------------------------------------- checking


def check_answer(status: int, body: bytes, names: set[str]) -> str | None:
    """Why an answer to an upload of files `names` is wrong, or None if it is fine."""
    if status not in ACCEPTED:
        return f"status {status}: {body[:300]!r}"
    answer = json_object(body)
    if answer is None:
        return f"status {status} with a body that is not a JSON object: {body[:200]!r}"
    if status == 200:
        return _check_source(answer)
    error = answer.get("error")
    if type(error) is not dict or type(error.get("type")) is not str:
        return f"{status} without an error object: {body[:200]!r}"
    if status == 422 and error["type"] == "HFFileError":
        if error.get("file") not in names:
            return f"an HFFileError naming {error.get('file')!r}, not a file sent ({names})"
    elif status == 422 and (
        error["type"] != "LimitExceeded" or type(error.get("limit")) is not str
    ):
        return f"a 422 that is neither an HFFileError nor a limit: {error}"
    return None


def _check_source(answer: dict[str, Any]) -> str | None:
    if type(answer.get("id")) is not str or not re.fullmatch(r"[0-9a-f]{64}", answer["id"]):
        return f"200 without a source id: {str(answer)[:200]}"
    for name in ("templates", "special_tokens"):
        values = answer.get(name)
        if type(values) is not dict or not all(type(v) is str for v in values.values()):
            return f"200 whose {name} are not texts by name: {str(values)[:200]}"
    info = answer.get("tokenizer")
    if info is not None and (type(info) is not dict or not _described(info)):
        return f"200 whose tokenizer is not described: {str(info)[:200]}"
    return None


def _described(info: dict[str, Any]) -> bool:
    """Building (the answer does not wait for it: `supported` is null), or built."""
    if info.get("state") == "building":
        return info.get("supported") is None
    return info.get("state") in ("ready", "failed") and type(info.get("supported")) is bool


def _outcome(status: int, answer: dict[str, Any]) -> str:
    """What an accepted answer says, in a few words, for the report's counts."""
    if status != 200:
        error = answer["error"]
        return f"{status} {error['type']} ({error.get('limit') or error.get('file') or '-'})"
    info = answer["tokenizer"]
    if info is None:
        return "200 without a tokenizer.json"
    if info["state"] == "building":
        return "200 tokenizer building"
    if info["supported"]:
        return "200 tokenizer supported"
    if info.get("limit"):
        return f"200 tokenizer over a limit ({info['limit']})"
    reason = re.split(r"[:(]", re.sub(r"[\d,]+", "N", info.get("reason") or ""))[0][:60]
    return f"200 tokenizer unsupported: {reason}"


def run_case(send: Send, index: int, result: FuzzResult, seed_value: int = DEFAULT_SEED) -> None:
    """Upload case `index`; when it loads with a supported tokenizer, tokenize with it."""
    hf = mutate(index, seed_value)
    case = f"case {index} ({hf.label} of {hf.seed}, {len(hf.body)} bytes)"
    request = Request("POST", "/api/sources/hf", hf.body, hf.content_type)
    status, body = send_or_fail(send, result, case, request)
    result.record(hf.label, status, len(hf.body))
    if status == 0:
        return
    why = check_answer(status, body, hf.names)
    if why is not None:
        result.fail(case, why)
        return
    answer = json.loads(body)
    result.note(_outcome(status, answer))
    if status != 200:
        return
    check_reloaded(send, result, case, answer)
    # A tokenizer still building is waited for by the tokenizing.
    if answer["tokenizer"] and answer["tokenizer"]["supported"] is not False:
        for number, probe in enumerate(hf.probes):
            ask = {"source": answer["id"], "text": probe.text, "add_special": probe.add_special,
                   "parse_special": probe.parse_special}  # fmt: skip
            fresh = number == len(hf.probes) - 1  # perhaps in the other gunicorn worker
            tokenized = tokenize_and_check(send, result, hf.label, case, ask, fresh)
            if hf.label == "seed" and (tokenized is None or "tokens" not in tokenized):
                result.fail(case, "an unmutated seed did not tokenize")


#: What a loaded source must say the same when it is read back.
SAME_WHEN_READ_BACK = ("id", "templates", "special_tokens", "add_bos_token", "add_eos_token")


def check_reloaded(send: Send, result: FuzzResult, case: str, loaded: dict[str, Any]) -> None:
    """`GET /api/sources/<id>` on a new connection (so perhaps from another gunicorn
    worker, which rebuilds it from the database) must give back the same source, or say
    which limit rebuilding it ran into."""
    request = Request("GET", f"/api/sources/{loaded['id']}", fresh=True)
    status, body = send_or_fail(send, result, case, request)
    answer = json_object(body) or {}
    error = answer.get("error") or {}
    if status == 422 and error.get("type") == "LimitExceeded" and error.get("limit"):
        result.note(f"read back: 422 LimitExceeded ({error['limit']})")
        return
    if status != 200:
        if status:
            result.fail(case, f"reading the source back answered {status}: {body[:200]!r}")
        return
    changed = [key for key in SAME_WHEN_READ_BACK if answer.get(key) != loaded[key]]
    if changed:
        result.fail(case, f"the source read back differs in {changed}")


def fuzzer(seed_value: int = DEFAULT_SEED) -> Fuzzer:
    """The Hugging Face cases of `--seed seed_value`."""
    return Fuzzer(partial(run_case, seed_value=seed_value))


# --------------------------------------------------------------------------- main


def write_case(index: int, seed_value: int, folder: Path) -> None:
    """Case `index`'s files (by part, numbered) and probe texts into `folder`."""
    hf = mutate(index, seed_value)
    folder.mkdir(parents=True, exist_ok=True)
    for number, part in enumerate(hf.parts):
        safe = re.sub(r"[^\w.-]", "_", part.name or "field")[:100]
        (folder / f"{number:04d}-{safe}").write_bytes(part.data)
    (folder / "probes.json").write_text(json.dumps([p.__dict__ for p in hf.probes]))
    (folder / "body.multipart").write_bytes(hf.body)
    print(f"case {index}: {hf.label} of {hf.seed}, {len(hf.parts)} files -> {folder}")


def main() -> int:
    parser = arguments(__doc__.splitlines()[0], count=5_000, budget_mb=0)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--source-memory-mb", type=int, default=512, help="PLAYGROUND_SOURCE_MEMORY_MB"
    )
    parser.add_argument(
        "--source-cpu-seconds", type=float, default=10.0, help="PLAYGROUND_SOURCE_CPU_SECONDS"
    )
    parser.add_argument("--only", type=int, help="write case N's files to --out instead")
    parser.add_argument("--out", type=Path, help="the folder --only writes to")
    args = parser.parse_args()
    args.memory_budget_mb = args.memory_budget_mb or memory_budget_mb(
        args.workers, args.source_memory_mb
    )
    if args.only is not None:
        if args.out is None:
            parser.error("--only needs --out")
        write_case(args.only, args.seed, args.out)
        return 0
    print(
        f"seeds: {len(tokenizer_seeds())} tokenizer.json, {len(config_seeds())} configs, "
        f"{len(template_file_seeds())} template files; seed {args.seed}; cases "
        f"{args.start}..{args.start + args.count - 1} from {args.clients} client threads "
        f"against {args.workers} workers × {args.threads} threads; source workers "
        f"{args.source_memory_mb} MiB, {args.source_cpu_seconds:g} s of CPU"
    )
    env = {
        "PLAYGROUND_SOURCE_MEMORY_MB": str(args.source_memory_mb),
        "PLAYGROUND_SOURCE_CPU_SECONDS": str(args.source_cpu_seconds),
    }
    return serve_and_fuzz(fuzzer(args.seed), args, env)


if __name__ == "__main__":
    sys.exit(main())
