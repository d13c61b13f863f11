"""Normal clients beside attackers that cycle through every hardening finding.

`python -m bench.attack`.

Run from the repository root with the shared folder (`../shared`) beside the checkout.
Starts gunicorn as `bench.load` does (PLAYGROUND_WORKERS=2, PLAYGROUND_THREADS=8, a
queue with room for every closed-loop client), with the per-client write limits on
(`PLAYGROUND_WRITES_PER_MINUTE` high enough for the normal clients' small shares; the
byte allowance is the default). Phase 1: `--clients` normal clients (`bench.load`'s mix
of renders, tokenizing, analyses and shares, each answer checked) for `--seconds`.
Phase 2: the same, plus `--attackers` attackers, each from an address of its own,
each cycling through `ATTACKS`:

- a body nested 900 deep; an integer of 5,000 digits; a cross-site `text/plain` share;
  made-up HTTP methods; objects a template raises (`raise_exception` of a macro);
- a CPU bomb; the analysis of 300 messages with a 1.9 MB kwarg;
- a tokenizer.json whose regex makes the tokenizers library panic, tokenized;
  a normaliser that grows text a million times; a 24 MB tokenizer.json;
- a GGUF with a 16 MiB array; one with a 400,000-character token and a NaN;
- tokenizing 4 MB of text; opening the page of a 1.9 MB share with a vocabulary;
- unique ~1 MB shares as fast as it can (filling storage).

Every attack has its expected answers (the 4xx that names its limit, or a refusal by
admission or the write limits). Prints both phases (requests/s, p50, p99, errors per
kind), the attacks' statuses, the normal clients' p99 without and with the attack
(goal ≤ 2×), their errors (goal 0), whether the gunicorn workers are the same
processes, and the growth of the server's memory (master, workers and their sandbox
and source processes) to its peak. Exits 1 on any normal error, any unexpected attack
answer, or a replaced worker. `--quick` runs 10 s phases.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import load
from bench._server import Client, Response, Server, mib
from tests.hostile_inputs import (
    BACKTRACKING_TEXT,
    backtracking_tokenizer,
    big_tokenizer,
    deep_render_body,
    exploding_normalizer,
    gguf_with_array,
    long_token_gguf,
    multipart,
)

#: Refusals any attack may get: admission (capacity) and the per-client write limits.
REFUSALS = {429, 503}
#: An attack's name, the answers it must get, and what it sends.
Attack = tuple[str, set[int], Callable[[Client, "Arsenal"], Response]]


@dataclass
class Arsenal:
    """Bodies built once, and the sources and share the attacks point at."""

    deep_body: bytes
    big_integer_body: bytes
    panicking_source: str
    big_tokenizer_body: tuple[bytes, str]
    normalizer_body: tuple[bytes, str]
    huge_array: bytes
    long_token: bytes
    tokenize_4mb: bytes
    analyze_huge: bytes
    big_share_url: str
    run: str


def _upload(client: Client, body: tuple[bytes, str]) -> Response:
    return client.request("POST", "/api/sources/hf", body[0], body[1])


def _flood_share(client: Client, arsenal: Arsenal) -> Response:
    state = {
        "template": "{{ messages[0].content }}",
        "messages": [{"role": "user", "content": f"{uuid.uuid4()} " + "x" * 1_000_000}],
    }
    return client.post_json("/api/shares", state)


ATTACKS: tuple[Attack, ...] = (
    ("deep-json", {400}, lambda c, a: c.request("POST", "/api/render", a.deep_body)),
    ("huge-integer", {400}, lambda c, a: c.request("POST", "/api/render", a.big_integer_body)),
    (
        "cross-site-share",
        {403, 415},
        lambda c, a: c.request(
            "POST", "/api/shares", b"{}", "text/plain", {"Origin": "https://evil.example"}
        ),
    ),
    ("made-up-method", {405}, lambda c, a: c.request(f"X{random.randrange(10**6)}", "/")),
    (
        "raised-macro",
        {422},
        lambda c, a: c.post_json(
            "/api/render",
            {
                "template": "{% macro f() %}x{% endmacro %}{{ raise_exception(f) }}",
                "messages": [{"role": "user", "content": "hi"}],
            },
        ),
    ),
    (
        "cpu-bomb",
        {422},
        lambda c, a: c.post_json(
            "/api/render",
            {"template": load.HOSTILE[0][1], "messages": [{"role": "user", "content": "hi"}]},
        ),
    ),
    ("analyze-huge", {200, 422}, lambda c, a: c.request("POST", "/api/analyze", a.analyze_huge)),
    (
        "panicking-tokenizer",
        {422},
        lambda c, a: c.post_json(
            "/api/tokenize", {"source": a.panicking_source, "text": BACKTRACKING_TEXT}
        ),
    ),
    ("exploding-normalizer", {200, 413}, lambda c, a: _upload(c, a.normalizer_body)),
    ("24mb-tokenizer-json", {200, 413}, lambda c, a: _upload(c, a.big_tokenizer_body)),
    (
        "huge-gguf-array",
        {422},
        lambda c, a: c.request(
            "POST", "/api/sources/gguf", a.huge_array, "application/octet-stream"
        ),
    ),
    (
        "long-token-gguf",
        {200},
        lambda c, a: c.request(
            "POST", "/api/sources/gguf", a.long_token, "application/octet-stream"
        ),
    ),
    ("tokenize-4mb", {200, 422}, lambda c, a: c.request("POST", "/api/tokenize", a.tokenize_4mb)),
    ("big-share-page", {200}, lambda c, a: c.get(a.big_share_url)),
    ("storage-flood", {200, 201, 413}, _flood_share),
)


def build_arsenal(server: Server, source_id: str, folder: Path) -> Arsenal:
    """Upload the hostile sources the attacks use, and store the big share."""
    client = Client(server.port, 120)
    try:
        body = multipart({"tokenizer.json": backtracking_tokenizer()})
        panicking = client.request("POST", "/api/sources/hf", *body).json()["id"]
        content = "the quick brown fox jumps over the lazy dog " * 43_000
        share = client.post_json(
            "/api/shares",
            {
                "template": "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{% endfor %}",
                "messages": [{"role": "user", "content": content}],
                "source": {"id": source_id, "kind": "gguf"},
                "view": "tokens",
            },
        ).json()
    finally:
        client.close()
    messages = [
        {"role": role, "content": f"{role} {turn}"}
        for turn in range(150)
        for role in ("user", "assistant")
    ]
    analyze = {
        "template": "{{ big }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}",
        "messages": messages,
        "kwargs": {"big": "x" * 1_900_000},
        "source": source_id,
    }
    return Arsenal(
        deep_body=deep_render_body(),
        big_integer_body=b'{"template": "x", "messages": [], "n": ' + b"9" * 5000 + b"}",
        panicking_source=panicking,
        big_tokenizer_body=multipart({"tokenizer.json": big_tokenizer()}),
        normalizer_body=multipart({"tokenizer.json": exploding_normalizer()}),
        huge_array=gguf_with_array(16 << 20),
        long_token=long_token_gguf(folder),
        tokenize_4mb=json.dumps({"source": source_id, "text": "hello world " * 350_000}).encode(),
        analyze_huge=json.dumps(analyze).encode(),
        big_share_url=share["url"],
        run=uuid.uuid4().hex[:8],
    )


def attacker(arsenal: Arsenal) -> load.HostileStep:
    """A hostile step that goes through `ATTACKS` in turn, from a random start."""

    def step(client: Client, rng: random.Random, tally: load.Tally) -> None:
        index = getattr(client, "attack_index", rng.randrange(len(ATTACKS)))
        client.attack_index = index + 1  # type: ignore[attr-defined]
        name, expected, send = ATTACKS[index % len(ATTACKS)]
        answer = send(client, arsenal)
        tally.record(name, answer.status, answer.ms)
        if answer.status not in expected | REFUSALS:
            tally.error(name, f"status {answer.status} {answer.body[:200]!r}")
        elif answer.status != 405 and not _strict_json(answer):
            tally.error(name, f"answer is not strict JSON: {answer.body[:200]!r}")

    return step


def _strict_json(answer: Response) -> bool:
    """Whether a JSON answer parses without NaN or Infinity (pages are HTML: skipped)."""
    if not answer.body.lstrip().startswith((b"{", b"[")):
        return True
    try:
        json.loads(answer.body, parse_constant=lambda name: (_ for _ in ()).throw(ValueError()))
    except ValueError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    """Start the server, run both phases, report; 1 on any failure."""
    seconds = 10.0 if args.quick else args.seconds
    clients = args.clients + args.attackers
    server = Server(
        {
            "PLAYGROUND_WORKERS": str(args.workers),
            "PLAYGROUND_THREADS": str(args.threads),
            "PLAYGROUND_QUEUE": str(clients),
            "PLAYGROUND_QUEUE_SECONDS": str(load.REQUEST_TIMEOUT_S),
            # Normal clients share small states many times a minute; attackers run into
            # the byte allowance (the default) with their megabytes.
            "PLAYGROUND_WRITES_PER_MINUTE": "100000",
            "PLAYGROUND_WRITE_MB_PER_MINUTE": "16",
        }
    )
    folder = Path(tempfile.mkdtemp(prefix="playground-attack-"))
    try:
        return _phases(server, folder, args, seconds)
    except BaseException:
        print(f"gunicorn log (tail):\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        server.close()
        shutil.rmtree(server.data_dir, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)


def _phases(server: Server, folder: Path, args: argparse.Namespace, seconds: float) -> int:
    server.start()
    workers_before = server.worker_pids()
    rss_start = server.rss_bytes()
    workload = load.build_workload(server)
    arsenal = build_arsenal(server, workload.source_id, folder)
    print(
        f"server: {args.workers} workers × {args.threads} threads; {args.clients} normal "
        f"clients; then + {args.attackers} attackers cycling through {len(ATTACKS)} attacks; "
        f"{seconds:g} s per phase"
    )
    load.run_phase(server, workload, "warm-up", args.warmup, args.clients, seed=args.seed)
    calm = load.run_phase(server, workload, "phase 1: normal load", seconds, args.clients)
    load.report_phase(calm)
    stormy = load.run_phase(
        server,
        workload,
        "phase 2: normal load + attackers",
        seconds,
        args.clients,
        args.attackers,
        seed=args.seed,
        hostile_step=attacker(arsenal),
    )
    load.report_phase(stormy)
    ratio = load.report_ratio(calm, stormy)
    return _verdict(server, workers_before, rss_start, calm, stormy, ratio)


def _verdict(
    server: Server,
    workers_before: list[int],
    rss_start: int,
    calm: load.Phase,
    stormy: load.Phase,
    ratio: float,
) -> int:
    workers_after = server.worker_pids()
    trouble = server.worker_trouble()
    peak = max(calm.rss_peak, stormy.rss_peak)
    print(
        f"\ngunicorn workers {'unchanged' if workers_after == workers_before else 'CHANGED'} "
        f"({workers_before} -> {workers_after}); log: {trouble or 'no worker exit or traceback'}"
    )
    print(
        f"server memory: {mib(rss_start)} at start, peak {mib(peak)} "
        f"(growth {mib(peak - rss_start)}), {mib(server.rss_bytes())} at the end"
    )
    normal_errors = calm.normal.total_errors + stormy.normal.total_errors
    attack_errors = stormy.hostile.total_errors
    print(
        f"normal clients' errors: {normal_errors} (goal 0); unexpected attack answers: "
        f"{attack_errors} (goal 0); p99 ratio {ratio:.2f}× (goal ≤ {load.GOAL_RATIO:g}×)"
    )
    failed = normal_errors or attack_errors or workers_after != workers_before
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase")
    parser.add_argument("--quick", action="store_true", help="10 s phases")
    parser.add_argument("--clients", type=int, default=32, help="normal client threads")
    parser.add_argument("--attackers", type=int, default=8, help="attacker threads")
    parser.add_argument("--workers", type=int, default=2, help="PLAYGROUND_WORKERS")
    parser.add_argument("--threads", type=int, default=8, help="PLAYGROUND_THREADS")
    parser.add_argument("--warmup", type=float, default=5.0, help="untimed warm-up seconds")
    parser.add_argument("--seed", type=int, default=20261130)
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
