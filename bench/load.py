"""Load test through gunicorn, then the same load beside hostile templates: `python -m bench.load`.

Run from the repository root with the shared folder (`../shared`) beside the checkout.
Starts gunicorn (`gunicorn.conf.py`; PLAYGROUND_WORKERS=2, PLAYGROUND_THREADS=8 unless the
flags say otherwise) on a free loopback port with a temporary data folder, uploads the
llama-spm vocabulary GGUF, and drives it from `--clients` keep-alive client threads, each
looping over a seeded random mix of:

- `render`: POST /api/render with real tool-calling templates (Qwen2.5, Llama-3.1,
  Hermes-3 tool_use) and the corpus' tool conversations; the prompt must equal ours;
- `tokenize`: POST /api/tokenize of those prompts with the uploaded vocabulary; the ids
  must equal the ones tokenized in this process;
- `analyze`: POST /api/analyze of the same bodies with the source; every answer for a
  body must equal the first one;
- `share` then `share.get`: POST /api/shares of a unique state, then GET /s/<id>.json,
  which must hold the template, messages, tools and `now` that were sent.

Phase 1 runs that mix for `--seconds`; phase 2 runs it again for as long while
`--hostile-clients` more threads loop over hostile templates (nested-range CPU bomb,
`'a' * 10**10` memory bomb, output flood), whose expected answer is a 422 naming the limit,
or a refusal (429 or 503 naming an admission limit: the server stops admitting clients it
has seen run bombs). Closed-loop clients keep one request each in flight, all the time,
and a kept-alive connection stays with the gunicorn worker that accepted it, so one
worker may hold more than its sandboxes and default queue: the bench gives the queue
room for every client, for as long as a client waits (`PLAYGROUND_QUEUE`,
`PLAYGROUND_QUEUE_SECONDS`). It measures latency under load, not shedding (which
`tests/test_admission*.py` cover), and normal clients must never be refused.
Prints per kind and overall requests/s, p50 and p99 (ms) and errors (any unexpected
status, wrong answer or transport error; must be 0), then the normal clients' p99 without
and with the hostile load and their ratio (goal ≤ 2×; printed, not asserted). gunicorn is
stopped whatever happens. `--quick` runs 10 s phases.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench._server import Client, RssSampler, Server, mib, percentile, running

GOAL_RATIO = 2.0
TEMPLATES = (
    "Qwen-Qwen2.5-7B-Instruct",
    "meta-llama-Llama-3.1-8B-Instruct",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use",
)
VOCAB = "ggml-vocab-llama-spm.gguf"
#: How often each kind is picked by a normal client (a share is a POST then a GET).
MIX = (("render", 40), ("tokenize", 25), ("analyze", 15), ("share", 20))
KINDS = ("render", "tokenize", "analyze", "share", "share.get")
#: The answer each kind must get; a share may be 200 if the same state was stored before.
EXPECTED = {
    "render": {200},
    "tokenize": {200},
    "analyze": {200},
    "share": {200, 201},
    "share.get": {200},
}
HOSTILE = (
    (
        "cpu-bomb",
        "{% for a in range(100000) %}{% for b in range(100000) %}{{ '' }}{% endfor %}{% endfor %}",
        "cpu_seconds",
    ),
    ("memory-bomb", "{{ 'a' * 10**10 }}", "memory"),
    (
        "output-flood",
        "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}",
        "output_chars",
    ),
)
REQUEST_TIMEOUT_S = 60.0
#: Limits under which the server refuses a request before it runs (app/web/admission.py).
ADMISSION_LIMITS = {"client_concurrency", "heavy_slots", "queue", "queue_seconds"}
MAX_ERROR_SAMPLES = 8


# --------------------------------------------------------------------------- the workload


@dataclass
class Case:
    """One template × tool conversation, with what the server must answer."""

    label: str
    body: dict[str, Any]
    render_body: bytes
    prompt: str
    tokenize_body: bytes
    token_ids: list[int]
    analyze_body: bytes


@dataclass
class Workload:
    source_id: str
    cases: list[Case]
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    analyses: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check_analysis(self, label: str, answer: Any) -> bool:
        """The first answer for a body is the reference; every later one must equal it,
        but for a portability report that ran out of a limit (on a loaded machine an
        engine's renders can pass their wall-clock backstop: the row names the limit)."""
        with self.lock:
            reference = self.analyses.setdefault(label, answer)
        if _ran_out(answer) or _ran_out(reference):
            return _without_portability(answer) == _without_portability(reference)
        return answer == reference


def _ran_out(analysis: Any) -> bool:
    engines = (analysis.get("portability") or {}).get("engines") or []
    return any((row.get("first_error") or {}).get("limit") for row in engines)


def _without_portability(analysis: Any) -> Any:
    return {key: value for key, value in analysis.items() if key != "portability"}


def build_workload(server: Server) -> Workload:
    """Upload the vocabulary, and prepare every body with its expected answer."""
    from app.problems import TemplateProblem
    from app.render import engines
    from app.sources.gguf import IncompleteHeader, read_header
    from app.tokens.vocab import VocabTokenizer, tokenize
    from tests.support.corpus import case_body, case_request, load_conversations
    from tests.support.shared_data import TEMPLATES_DIR, VOCAB_DIR

    vocab = (VOCAB_DIR / VOCAB).read_bytes()
    client = Client(server.port, REQUEST_TIMEOUT_S)
    try:
        answer = client.request(
            "POST", f"/api/sources/gguf?name={VOCAB}", vocab, "application/octet-stream"
        )
    finally:
        client.close()
    if answer.status != 200:
        raise RuntimeError(f"uploading {VOCAB} answered {answer.status}: {answer.body[:300]!r}")
    source_id = answer.json()["id"]
    # The same vocabulary, built in this process: the ids every answer must have.
    header = read_header(vocab, want_tensors=False)
    assert not isinstance(header, IncompleteHeader)
    tokenizer = VocabTokenizer.from_gguf_fields(header.fields)

    cases = []
    for name in TEMPLATES:
        source = (TEMPLATES_DIR / f"{name}.jinja").read_text(encoding="utf-8")
        for case in load_conversations():
            if not case["tools"]:
                continue
            body = case_body(case, source)
            request = case_request(case, source)
            try:  # as /api/render sends it: tool-call arguments as transformers' callers do
                prompt = engines.render(request).prompt
            except TemplateProblem:
                continue  # a template refusing a case is a 422: not what this measures
            ids = [token.id for token in tokenize(tokenizer, prompt)]
            cases.append(
                Case(
                    label=f"{name}×{case['name']}",
                    body=body,
                    render_body=json.dumps(body).encode(),
                    prompt=prompt,
                    tokenize_body=json.dumps({"source": source_id, "text": prompt}).encode(),
                    token_ids=ids,
                    analyze_body=json.dumps({**body, "source": source_id}).encode(),
                )
            )
    if not cases:
        raise SystemExit("No template × tool case renders: is ../shared beside the repo?")
    return Workload(source_id, cases)


# --------------------------------------------------------------------------- clients


@dataclass
class Tally:
    """What one or more clients saw in one phase."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    samples: list[str] = field(default_factory=list)
    reconnects: int = 0
    finished: float = 0.0  # perf_counter() when the client stopped (the latest, merged)

    def record(self, kind: str, status: int, ms: float) -> None:
        self.latencies[kind].append(ms)
        self.statuses[kind][status] += 1

    def error(self, kind: str, what: str) -> None:
        self.errors[kind] += 1
        if len(self.samples) < MAX_ERROR_SAMPLES:
            self.samples.append(f"{kind}: {what}")

    def merge(self, other: Tally) -> None:
        for kind, values in other.latencies.items():
            self.latencies[kind].extend(values)
        for kind, counts in other.statuses.items():
            self.statuses[kind].update(counts)
        for kind, count in other.errors.items():
            self.errors[kind] += count
        self.samples.extend(other.samples[: MAX_ERROR_SAMPLES - len(self.samples)])
        self.reconnects += other.reconnects
        self.finished = max(self.finished, other.finished)

    def to_plain(self) -> dict[str, Any]:
        """The tally as plain values, to send from another process."""
        return {
            "latencies": dict(self.latencies),
            "statuses": {kind: dict(counts) for kind, counts in self.statuses.items()},
            "errors": dict(self.errors),
            "samples": self.samples,
            "reconnects": self.reconnects,
            "finished": self.finished,
        }

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> Tally:
        """The tally `to_plain` described."""
        tally = cls()
        tally.latencies.update(plain["latencies"])
        for kind, counts in plain["statuses"].items():
            tally.statuses[kind].update(counts)
        tally.errors.update(plain["errors"])
        tally.samples = plain["samples"]
        tally.reconnects, tally.finished = plain["reconnects"], plain["finished"]
        return tally

    @property
    def total_errors(self) -> int:
        return sum(self.errors.values())

    def all_latencies(self) -> list[float]:
        return [ms for values in self.latencies.values() for ms in values]


def _normal_step(
    client: Client, workload: Workload, rng: random.Random, tally: Tally, tag: str, seq: int
) -> None:
    kind = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX])[0]
    case = rng.choice(workload.cases)
    if kind == "render":
        answer = client.request("POST", "/api/render", case.render_body)
        tally.record(kind, answer.status, answer.ms)
        if answer.status not in EXPECTED[kind]:
            tally.error(kind, f"{case.label}: status {answer.status} {answer.body[:200]!r}")
        elif answer.json().get("prompt") != case.prompt:
            tally.error(kind, f"{case.label}: wrong prompt")
    elif kind == "tokenize":
        answer = client.request("POST", "/api/tokenize", case.tokenize_body)
        tally.record(kind, answer.status, answer.ms)
        if answer.status not in EXPECTED[kind]:
            tally.error(kind, f"{case.label}: status {answer.status} {answer.body[:200]!r}")
        elif [t["id"] for t in answer.json()["tokens"]] != case.token_ids:
            tally.error(kind, f"{case.label}: wrong token ids")
    elif kind == "analyze":
        answer = client.request("POST", "/api/analyze", case.analyze_body)
        tally.record(kind, answer.status, answer.ms)
        if answer.status not in EXPECTED[kind]:
            tally.error(kind, f"{case.label}: status {answer.status} {answer.body[:200]!r}")
        elif not workload.check_analysis(case.label, answer.json()):
            tally.error(kind, f"{case.label}: analysis differs from the first one")
    else:
        note = f"load {workload.run} {tag} #{seq}"
        state = {
            **case.body,
            "messages": [*case.body["messages"], {"role": "user", "content": note}],
        }
        answer = client.post_json("/api/shares", state)
        tally.record("share", answer.status, answer.ms)
        if answer.status not in EXPECTED["share"]:
            tally.error("share", f"status {answer.status} {answer.body[:200]!r}")
            return
        share_id = answer.json()["id"]
        stored = client.get(f"/s/{share_id}.json")
        tally.record("share.get", stored.status, stored.ms)
        if stored.status not in EXPECTED["share.get"]:
            tally.error("share.get", f"{share_id}: status {stored.status}")
            return
        got = stored.json()
        for key in ("template", "messages", "tools", "now"):
            if got.get(key) != state[key]:
                tally.error("share.get", f"{share_id}: stored {key!r} differs from the one sent")
                return


def _hostile_step(client: Client, rng: random.Random, tally: Tally) -> None:
    name, template, limit = rng.choice(HOSTILE)
    body = {"template": template, "messages": [{"role": "user", "content": "hi"}]}
    answer = client.post_json("/api/render", body)
    tally.record(name, answer.status, answer.ms)
    if answer.status in (429, 503):
        if answer.json()["error"].get("limit") not in ADMISSION_LIMITS:
            tally.error(name, f"status {answer.status} {answer.body[:200]!r}")
    elif answer.status != 422:
        tally.error(name, f"status {answer.status} {answer.body[:200]!r}")
    elif answer.json()["error"].get("limit") != limit:
        tally.error(
            name, f"422 naming limit {answer.json()['error'].get('limit')!r}, not {limit!r}"
        )


def client_loop(port: int, deadline: float, step: Any, tally: Tally) -> None:
    client = Client(port, REQUEST_TIMEOUT_S)
    try:
        while time.perf_counter() < deadline:
            try:
                step(client)
            except Exception as error:  # transport errors, malformed answers
                tally.error("transport", f"{type(error).__name__}: {error}")
    finally:
        tally.reconnects += client.reconnects
        tally.finished = time.perf_counter()
        client.close()


@dataclass
class Phase:
    name: str
    seconds: float  # from the start until the last normal client's last answer
    hostile_seconds: float  # the same for the hostile clients (a CPU bomb ends late)
    normal: Tally
    hostile: Tally
    rss_peak: int = 0


#: One request of a hostile client: it records what it got (and any error) in the tally.
HostileStep = Callable[[Client, random.Random, Tally], None]


def run_phase(
    server: Server,
    workload: Workload,
    name: str,
    seconds: float,
    clients: int,
    hostile_clients: int = 0,
    seed: int = 0,
    hostile_step: HostileStep | None = None,
) -> Phase:
    """`clients` normal threads (and `hostile_clients` hostile ones) for `seconds`.

    Hostile clients run `hostile_step` (by default, the templates of `HOSTILE`)."""
    attack = hostile_step or _hostile_step
    deadline = time.perf_counter() + seconds
    normal_tallies = [Tally() for _ in range(clients)]
    hostile_tallies = [Tally() for _ in range(hostile_clients)]
    threads = []
    for index, tally in enumerate(normal_tallies):
        rng = random.Random(f"{seed}-{name}-normal-{index}")
        counter = iter(range(1 << 62))

        def step(client: Client, rng=rng, tally=tally, index=index, counter=counter) -> None:
            _normal_step(client, workload, rng, tally, f"{name}/{index}", next(counter))

        threads.append(
            threading.Thread(
                target=client_loop, args=(server.port, deadline, step, tally), daemon=True
            )
        )
    for index, tally in enumerate(hostile_tallies):
        rng = random.Random(f"{seed}-{name}-hostile-{index}")

        def step(client: Client, rng=rng, tally=tally) -> None:
            attack(client, rng, tally)

        threads.append(
            threading.Thread(
                target=client_loop, args=(server.port, deadline, step, tally), daemon=True
            )
        )
    started = time.perf_counter()
    give_up = deadline + REQUEST_TIMEOUT_S * 2 + 10
    with RssSampler(server) as sampler:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(0.0, give_up - time.perf_counter()))
    stuck = sum(thread.is_alive() for thread in threads)
    normal, hostile = Tally(), Tally()
    for tally in normal_tallies:
        normal.merge(tally)
    for tally in hostile_tallies:
        hostile.merge(tally)
    if stuck:
        normal.error("transport", f"{stuck} client thread(s) still waiting after the phase")
    now = time.perf_counter()
    return Phase(
        name,
        (normal.finished or now) - started,
        (hostile.finished or now) - started,
        normal,
        hostile,
        sampler.peak,
    )


# --------------------------------------------------------------------------- report


def _row(kind: str, latencies: list[float], seconds: float, errors: int, statuses: Counter) -> str:
    shown = ",".join(f"{status}:{count}" for status, count in sorted(statuses.items()))
    return (
        f"  {kind:<14} {len(latencies):>9} {len(latencies) / seconds:>9.1f} "
        f"{percentile(latencies, 0.50):>9.1f} {percentile(latencies, 0.99):>9.1f} "
        f"{errors:>6}   {shown}"
    )


def report_phase(phase: Phase) -> None:
    print(f"\n== {phase.name}: {phase.seconds:.1f} s, peak server RSS {mib(phase.rss_peak)}")
    heading = ("requests", "req/s", "p50 ms", "p99 ms")
    print(f"  {'kind':<14} " + " ".join(f"{h:>9}" for h in heading) + " errors   statuses")
    tally = phase.normal
    for kind in KINDS:
        print(
            _row(
                kind,
                tally.latencies.get(kind, []),
                phase.seconds,
                tally.errors.get(kind, 0),
                tally.statuses.get(kind, Counter()),
            )
        )
    all_statuses: Counter = Counter()
    for counts in tally.statuses.values():
        all_statuses.update(counts)
    print(_row("overall", tally.all_latencies(), phase.seconds, tally.total_errors, all_statuses))
    if tally.errors.get("transport"):
        print(f"  transport errors: {tally.errors['transport']}")
    hostile = phase.hostile
    if hostile.latencies:
        print("  hostile clients (each kind has its expected answers):")
        for name in sorted(hostile.latencies):
            print(
                _row(
                    name,
                    hostile.latencies.get(name, []),
                    phase.hostile_seconds,
                    hostile.errors.get(name, 0),
                    hostile.statuses.get(name, Counter()),
                )
            )
        if hostile.errors.get("transport"):
            print(f"  hostile transport errors: {hostile.errors['transport']}")
    print(f"  reconnects after keep-alive close: {tally.reconnects + hostile.reconnects}")
    for sample in (tally.samples + hostile.samples)[:MAX_ERROR_SAMPLES]:
        print(f"  error: {sample}")


def hostile_ratio(calm: Phase, stormy: Phase) -> dict[str, tuple[float, float, float]]:
    """Per kind and overall: normal clients' p99 without, with hostile load, and the ratio."""
    ratios = {}
    for kind in (*KINDS, "overall"):
        if kind == "overall":
            before, after = calm.normal.all_latencies(), stormy.normal.all_latencies()
        else:
            before, after = (
                calm.normal.latencies.get(kind, []),
                stormy.normal.latencies.get(kind, []),
            )
        if before and after:
            p_before, p_after = percentile(before, 0.99), percentile(after, 0.99)
            ratios[kind] = (p_before, p_after, p_after / p_before if p_before else float("inf"))
    return ratios


def report_ratio(calm: Phase, stormy: Phase) -> float:
    print("\n== Normal clients' p99 without and with hostile load")
    ratios = hostile_ratio(calm, stormy)
    for kind, (before, after, ratio) in ratios.items():
        print(f"  {kind:<14} {before:>9.1f} ms -> {after:>9.1f} ms   {ratio:5.2f}×")
    overall = ratios.get("overall", (0.0, 0.0, float("nan")))[2]
    verdict = "met" if overall <= GOAL_RATIO else "NOT met"
    print(
        f"  overall ratio {overall:.2f}× (goal ≤ {GOAL_RATIO:g}×: {verdict}; printed, not asserted)"
    )
    return overall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase")
    parser.add_argument("--quick", action="store_true", help="10 s phases")
    parser.add_argument("--clients", type=int, default=32, help="normal client threads")
    parser.add_argument("--hostile-clients", type=int, default=4, help="hostile client threads")
    parser.add_argument("--workers", type=int, default=2, help="PLAYGROUND_WORKERS")
    parser.add_argument("--threads", type=int, default=8, help="PLAYGROUND_THREADS")
    parser.add_argument("--warmup", type=float, default=5.0, help="untimed warm-up seconds")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    seconds = 10.0 if args.quick else args.seconds
    env = {
        "PLAYGROUND_WORKERS": str(args.workers),
        "PLAYGROUND_THREADS": str(args.threads),
        # Room in the queue for every client, for as long as a client waits (see above).
        "PLAYGROUND_QUEUE": str(args.clients + args.hostile_clients),
        "PLAYGROUND_QUEUE_SECONDS": str(REQUEST_TIMEOUT_S),
    }
    started = time.perf_counter()
    with running(env) as server:
        workers_before = server.worker_pids()
        workload = build_workload(server)
        print(
            f"server: {args.workers} workers × {args.threads} threads, /healthz after "
            f"{server.startup_seconds:.1f} s; {len(workload.cases)} template × tool cases "
            f"({', '.join(TEMPLATES)}); source {workload.source_id[:12]}… ({VOCAB})"
        )
        mix = ", ".join(f"{kind} {weight}%" for kind, weight in MIX)
        hostile = ", ".join(name for name, _, _ in HOSTILE)
        print(
            f"load: {args.clients} keep-alive client threads, mix {mix}; then + "
            f"{args.hostile_clients} hostile clients ({hostile}); {seconds:g} s per phase"
        )
        warm = run_phase(server, workload, "warm-up", args.warmup, args.clients, seed=args.seed)
        warm_count = len(warm.normal.all_latencies())
        print(f"warm-up: {warm_count} untimed requests, {warm.normal.total_errors} errors")
        calm = run_phase(
            server, workload, "phase 1: normal load", seconds, args.clients, seed=args.seed
        )
        report_phase(calm)
        stormy = run_phase(
            server,
            workload,
            "phase 2: normal load + hostile clients",
            seconds,
            args.clients,
            args.hostile_clients,
            seed=args.seed,
        )
        report_phase(stormy)
        report_ratio(calm, stormy)
        workers_after = server.worker_pids()
        trouble = server.worker_trouble()
        same = "unchanged" if workers_after == workers_before else "CHANGED"
        print(
            f"\ngunicorn workers {same} ({workers_before} -> {workers_after}); log: "
            f"{trouble or 'no worker exits, timeouts or tracebacks'}"
        )
        errors = (
            warm.normal.total_errors
            + calm.normal.total_errors
            + stormy.normal.total_errors
            + stormy.hostile.total_errors
        )
        print(
            f"errors: {errors} (must be 0); bench wall time {time.perf_counter() - started:.1f} s"
        )
        failed = bool(errors) or workers_after != workers_before
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
