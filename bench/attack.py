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
import itertools
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench import load
from bench._server import Client, Response, Server, mib, running
from tests.support.hostile_inputs import (
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


@dataclass(frozen=True)
class Targets:
    """What the attacks point at, uploaded and stored by the bench before they start."""

    source_id: str  # the vocabulary the normal clients use
    panicking_source: str
    big_share_url: str


def prepare_targets(server: Server, source_id: str) -> Targets:
    """Upload the panicking tokenizer and store the 1.9 MB share the attacks use."""
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
    return Targets(source_id, panicking, share["url"])


def build_arsenal(targets: Targets, folder: Path) -> Arsenal:
    """Every body the attacks send, built once."""
    messages = [
        {"role": role, "content": f"{role} {turn}"}
        for turn in range(150)
        for role in ("user", "assistant")
    ]
    analyze = {
        "template": "{{ big }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}",
        "messages": messages,
        "kwargs": {"big": "x" * 1_900_000},
        "source": targets.source_id,
    }
    text = "hello world " * 350_000
    return Arsenal(
        deep_body=deep_render_body(),
        big_integer_body=b'{"template": "x", "messages": [], "n": ' + b"9" * 5000 + b"}",
        panicking_source=targets.panicking_source,
        big_tokenizer_body=multipart({"tokenizer.json": big_tokenizer()}),
        normalizer_body=multipart({"tokenizer.json": exploding_normalizer()}),
        huge_array=gguf_with_array(16 << 20),
        long_token=long_token_gguf(folder),
        tokenize_4mb=json.dumps({"source": targets.source_id, "text": text}).encode(),
        analyze_huge=json.dumps(analyze).encode(),
        big_share_url=targets.big_share_url,
        run=uuid.uuid4().hex[:8],
    )


def _attackers_main(
    port: int, targets: Targets, folder: str, count: int, go: Any, results: Any
) -> None:
    """The attackers' process: build the bodies, wait for the start, attack, report.

    A process of its own, at the lowest priority: what attackers spend on their side
    (building megabyte bodies, reading megabyte answers) is not the server's cost, and
    in the normal clients' process it would hold their GIL and count as server latency.
    """
    os.nice(19)
    arsenal = build_arsenal(targets, Path(folder))
    results.put("ready")
    seconds = go.get()
    deadline = time.perf_counter() + seconds
    tallies = [load.Tally() for _ in range(count)]
    step = attacker(arsenal)
    threads = [
        threading.Thread(
            target=load.client_loop,
            args=(port, deadline, partial(step, rng=random.Random(index), tally=tally), tally),
            daemon=True,
        )
        for index, tally in enumerate(tallies)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 2 * load.REQUEST_TIMEOUT_S + 10)
    merged = load.Tally()
    for tally in tallies:
        merged.merge(tally)
    results.put(merged.to_plain())


def attack_phase(
    server: Server,
    workload: load.Workload,
    targets: Targets,
    folder: Path,
    seconds: float,
    clients: int,
    attackers: int,
) -> load.Phase:
    """Normal clients in this process beside `attackers` in a process of their own."""
    context = multiprocessing.get_context("spawn")
    go, results = context.Queue(), context.Queue()
    process = context.Process(
        target=_attackers_main,
        args=(server.port, targets, str(folder), attackers, go, results),
        daemon=True,
    )
    process.start()
    try:
        if results.get(timeout=300) != "ready":
            raise RuntimeError("the attackers' process did not get ready")
        started = time.perf_counter()
        go.put(seconds)
        phase = load.run_phase(
            server, workload, "phase 2: normal load + attackers", seconds, clients
        )
        hostile = load.Tally.from_plain(results.get(timeout=seconds + 3 * load.REQUEST_TIMEOUT_S))
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
    phase.hostile = hostile
    phase.hostile_seconds = (hostile.finished or time.perf_counter()) - started
    return phase


def attacker(arsenal: Arsenal) -> load.HostileStep:
    """A hostile step that goes through `ATTACKS` in turn, each attacker from a start of
    its own: N attackers have tried N kinds once each has been answered once (random
    starts collided, and a busy machine's short run then tried too few kinds)."""
    starts = itertools.count()  # the attackers are threads of this process

    def step(client: Client, rng: random.Random, tally: load.Tally) -> None:
        if not hasattr(client, "attack_index"):
            client.attack_index = next(starts)  # type: ignore[attr-defined]
        index = client.attack_index  # type: ignore[attr-defined]
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


def server_env(workers: int, threads: int, clients: int) -> dict[str, str]:
    """The bench server's settings: a queue with room for every closed-loop client, and
    write limits that normal clients' small shares never reach but attackers' megabytes do."""
    return {
        "PLAYGROUND_WORKERS": str(workers),
        "PLAYGROUND_THREADS": str(threads),
        "PLAYGROUND_QUEUE": str(clients),
        "PLAYGROUND_QUEUE_SECONDS": str(load.REQUEST_TIMEOUT_S),
        "PLAYGROUND_WRITES_PER_MINUTE": "100000",
        "PLAYGROUND_WRITE_MB_PER_MINUTE": "16",
    }


@dataclass
class AttackRun:
    """Both phases of a run, and what the server looked like around them."""

    calm: load.Phase
    stormy: load.Phase
    workers_before: list[int]
    rss_start: int


def attack_run(
    server: Server, folder: Path, clients: int, attackers: int, seconds: float, warmup: float
) -> AttackRun:
    """Normal clients alone, then beside the attackers, on a started server."""
    workers_before = server.worker_pids()
    rss_start = server.rss_bytes()
    workload = load.build_workload(server)
    targets = prepare_targets(server, workload.source_id)
    load.run_phase(server, workload, "warm-up", warmup, clients)
    calm = load.run_phase(server, workload, "phase 1: normal load", seconds, clients)
    stormy = attack_phase(server, workload, targets, folder, seconds, clients, attackers)
    return AttackRun(calm, stormy, workers_before, rss_start)


def run(args: argparse.Namespace) -> int:
    """Start the server, run both phases, report; 1 on any failure."""
    seconds = 10.0 if args.quick else args.seconds
    env = server_env(args.workers, args.threads, args.clients + args.attackers)
    folder = Path(tempfile.mkdtemp(prefix="playground-attack-"))
    try:
        with running(env) as server:
            print(
                f"server: {args.workers} workers × {args.threads} threads; {args.clients} "
                f"normal clients; then + {args.attackers} attackers cycling through "
                f"{len(ATTACKS)} attacks; {seconds:g} s per phase"
            )
            result = attack_run(server, folder, args.clients, args.attackers, seconds, args.warmup)
            load.report_phase(result.calm)
            load.report_phase(result.stormy)
            ratio = load.report_ratio(result.calm, result.stormy)
            return report(server, result, ratio)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def report(server: Server, result: AttackRun, ratio: float) -> int:
    """Print the verdict: 1 on any normal error, unexpected attack answer or new worker."""
    workers_after = server.worker_pids()
    trouble = server.worker_trouble()
    peak = max(result.calm.rss_peak, result.stormy.rss_peak)
    same = "unchanged" if workers_after == result.workers_before else "CHANGED"
    print(
        f"\ngunicorn workers {same} ({result.workers_before} -> {workers_after}); log: "
        f"{trouble or 'no worker exit or traceback'}"
    )
    print(
        f"server memory: {mib(result.rss_start)} at start, peak {mib(peak)} "
        f"(growth {mib(peak - result.rss_start)}), {mib(server.rss_bytes())} at the end"
    )
    normal_errors = result.calm.normal.total_errors + result.stormy.normal.total_errors
    attack_errors = result.stormy.hostile.total_errors
    print(
        f"normal clients' errors: {normal_errors} (goal 0); unexpected attack answers: "
        f"{attack_errors} (goal 0); p99 ratio {ratio:.2f}× (goal ≤ {load.GOAL_RATIO:g}×)"
    )
    failed = normal_errors or attack_errors or workers_after != result.workers_before
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
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
