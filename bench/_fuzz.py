"""What the fuzz benches (`fuzz_gguf`, `fuzz_hf`) share: running, counting and reporting.

A bench supplies `run_case(send, index, result)`, which builds case `index` (the same
bytes for the same index and seed), sends it with `send` and records what came back in
a `FuzzResult`. `Fuzzer` runs such cases through a Flask test client (in process) or
against a gunicorn server from keep-alive client threads, with the server's health
checked around the run: the gunicorn workers must be the same processes at the end, the
log must hold no worker exit, timeout or traceback, and the resident memory of the whole
process tree is sampled throughout. `report` prints it all and says PASS or FAIL.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bench._server import Client, RssSampler, Server, mib, running

REQUEST_TIMEOUT_S = 120.0
MAX_FAILURES_SHOWN = 10
#: Slowest cases listed in the report: where a near-hang would show first.
SLOWEST_SHOWN = 5

JSON = "application/json"


class Request(NamedTuple):
    """One request of a case; `fresh`: on a new connection (through a server, that may
    reach another gunicorn worker, which has to rebuild the source from the database)."""

    method: str
    path: str
    body: bytes = b""
    content_type: str = JSON
    fresh: bool = False


#: send(request) -> (status, body)
Send = Callable[[Request], tuple[int, bytes]]


@dataclass
class FuzzResult:
    """Counts of one run: statuses overall and per mutation, tokenizing, and failures."""

    sent: int = 0
    bytes_sent: int = 0
    statuses: Counter = field(default_factory=Counter)
    by_mutation: dict[str, Counter] = field(default_factory=dict)
    tokenize: Counter = field(default_factory=Counter)
    tokenize_by_mutation: dict[str, Counter] = field(default_factory=dict)
    #: Outcomes worth counting beside the statuses ("tokenizer unsupported", a limit hit).
    outcomes: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    failed: int = 0
    slowest: list[tuple[float, str]] = field(default_factory=list)
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, label: str, status: int, size: int = 0) -> None:
        """An upload of `size` bytes by mutation `label` answered `status` (0: no answer)."""
        with self.lock:
            self.sent += 1
            self.bytes_sent += size
            self.statuses[status] += 1
            self.by_mutation.setdefault(_family(label), Counter())[status] += 1

    def record_tokenize(self, label: str, status: int) -> None:
        with self.lock:
            self.tokenize[status] += 1
            self.tokenize_by_mutation.setdefault(_family(label), Counter())[status] += 1

    def note(self, outcome: str) -> None:
        with self.lock:
            self.outcomes[outcome] += 1

    def timed(self, case: str, seconds: float) -> None:
        with self.lock:
            self.slowest.append((seconds, case))
            self.slowest.sort(reverse=True)
            del self.slowest[SLOWEST_SHOWN:]

    def fail(self, case: str, why: str) -> None:
        with self.lock:
            self.failed += 1
            if len(self.failures) < MAX_FAILURES_SHOWN:
                self.failures.append(f"{case}: {why}")


def _family(label: str) -> str:
    """`combo(flip+type)` and `vocab(sparse)` are counted as `combo` and `vocab`."""
    return label.split("(")[0]


def send_or_fail(send: Send, result: FuzzResult, case: str, request: Request) -> tuple[int, bytes]:
    """`send(request)`, timed; a transport error is status 0 and a failure of `case`."""
    started = time.perf_counter()
    try:
        status, body = send(request)
    except Exception as error:
        status, body = 0, b""
        result.fail(case, f"{request.path}: {type(error).__name__}: {error}")
    result.timed(f"{case} {request.path}", time.perf_counter() - started)
    return status, body


#: run_case(send, index, result): build case `index`, send it, record what came back.
RunCase = Callable[[Send, int, FuzzResult], None]


@dataclass
class ServerHealth:
    """The server around a run: its workers before and after, its log, its memory."""

    workers_before: list[int]
    workers_after: list[int]
    trouble: dict[str, int]
    #: Resident memory of the whole process tree, then of the web processes alone:
    #: (start, peak, end, and at each quarter of the run).
    rss: Memory
    web_rss: Memory

    @property
    def workers_unchanged(self) -> bool:
        return bool(self.workers_before) and self.workers_before == self.workers_after


@dataclass(frozen=True)
class Memory:
    """Resident memory over a run: at its start, at its peak, at its end, by quarter."""

    start: int
    peak: int
    end: int
    quartiles: list[int]

    @classmethod
    def of(cls, start: int, samples: list[int]) -> Memory:
        quarters = [samples[len(samples) * q // 4 - 1] for q in (1, 2, 3, 4)]
        return cls(start, max([start, *samples]), samples[-1], quarters)

    @property
    def growth(self) -> int:
        return self.peak - self.start

    def __str__(self) -> str:
        quarters = ", ".join(mib(rss) for rss in self.quartiles)
        return (
            f"start {mib(self.start)}, peak {mib(self.peak)}, end {mib(self.end)} (growth "
            f"{mib(self.growth)}); at 25/50/75/100% of the run: {quarters}"
        )


@dataclass(frozen=True)
class Fuzzer:
    """A bench's cases, run in process or against a server."""

    run_case: RunCase

    def in_process(self, client: Any, count: int, start: int = 0) -> FuzzResult:
        """Cases `start` .. `start + count` through a Flask test client."""

        def send(request: Request) -> tuple[int, bytes]:
            answer = client.open(
                request.path,
                method=request.method,
                data=request.body,
                content_type=request.content_type,
            )
            return answer.status_code, answer.get_data()

        return self._run(range(start, start + count), [send])

    def through_server(
        self, server: Server, count: int, clients: int, start: int = 0
    ) -> FuzzResult:
        """Cases `start` .. `start + count` against a running server from `clients` threads."""
        connections = [Client(server.port, REQUEST_TIMEOUT_S) for _ in range(clients)]

        def sender(client: Client) -> Send:
            def send(request: Request) -> tuple[int, bytes]:
                for _ in range(BUSY_RETRIES):
                    if request.fresh:
                        client.close()  # the next request opens a new connection
                    answer = client.request(*request[:4])
                    if answer.status != 503 or b'"retry_after"' not in answer.body:
                        break
                    # Busy (a queue wait ran out): a polite client asks again, as the page
                    # does. The fuzz is about what each input gets, not about capacity.
                    time.sleep(1)
                return answer.status, answer.body

            return send

        try:
            return self._run(range(start, start + count), [sender(c) for c in connections])
        finally:
            for connection in connections:
                connection.close()

    def with_health(
        self, server: Server, count: int, clients: int, start: int = 0
    ) -> tuple[FuzzResult, ServerHealth]:
        """`through_server`, with the worker pids, the log and the memory checked around it."""
        workers_before = server.worker_pids()
        rss_start, web_start = server.rss_bytes(), server.web_rss_bytes()
        with RssSampler(server, interval=0.1) as sampler:
            result = self.through_server(server, count, clients, start)
        health = ServerHealth(
            workers_before,
            server.worker_pids(),
            server.worker_trouble(),
            Memory.of(rss_start, sampler.samples),
            Memory.of(web_start, sampler.web_samples),
        )
        return result, health

    def _run(self, indices: Iterable[int], senders: list[Send]) -> FuzzResult:
        """Each index once, shared out among one thread per sender."""
        result = FuzzResult()
        todo = iter(indices)
        todo_lock = threading.Lock()

        def work(send: Send) -> None:
            while True:
                with todo_lock:
                    index = next(todo, None)
                if index is None:
                    return
                try:
                    self.run_case(send, index, result)
                except Exception as error:  # a bug of the bench: a failure, not a lost case
                    result.fail(f"case {index}", f"the bench failed: {error!r}")

        threads = [threading.Thread(target=work, args=(s,), daemon=True) for s in senders]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        result.seconds = time.perf_counter() - started
        return result


# --------------------------------------------------------------------------- report


def _counts(counter: Counter) -> str:
    return ", ".join(f"{key or 'transport error'}: {n}" for key, n in sorted(counter.items()))


def report(result: FuzzResult, health: ServerHealth | None, budget: int) -> bool:
    """Print the run's figures; True when nothing failed (and the server stayed healthy)."""
    rate = result.sent / result.seconds if result.seconds else 0.0
    sent = f"{result.bytes_sent / 2**20:.0f} MiB"
    print(f"\ncases: {result.sent} ({sent} sent) in {result.seconds:.1f} s = {rate:.1f} cases/s")
    print(f"statuses: {_counts(result.statuses)}")
    print(f"tokenize with the sources that loaded: {_counts(result.tokenize) or 'none'}")
    for label, counts in sorted(result.by_mutation.items()):
        tokenized = _counts(result.tokenize_by_mutation.get(label, Counter())) or "-"
        print(
            f"  {label:<9} {sum(counts.values()):>6}   upload {_counts(counts)}; "
            f"tokenize {tokenized}"
        )
    for outcome, n in sorted(result.outcomes.items()):
        print(f"  {n:>6}  {outcome}")
    for seconds, case in result.slowest:
        print(f"  slow: {seconds:.1f} s  {case}")
    five = sum(n for status, n in result.statuses.items() if status >= 500)
    five_tokenize = sum(n for status, n in result.tokenize.items() if status >= 500)
    print(
        f"5xx: {five} on upload, {five_tokenize} on tokenize; answers not accepted "
        f"(status, body or transport): {result.failed}"
    )
    for failure in result.failures:
        print(f"  failure: {failure}")
    ok = result.failed == 0
    if health is not None:
        ok = _report_health(health, budget) and ok
    print("result: " + ("PASS" if ok else "FAIL"))
    return ok


def _report_health(health: ServerHealth, budget: int) -> bool:
    print(
        f"workers: {health.workers_before} -> {health.workers_after} "
        f"({'unchanged' if health.workers_unchanged else 'CHANGED'}); log: "
        f"{health.trouble or 'no worker exit, timeout or traceback'}"
    )
    print(f"server RSS (master, workers and their worker processes): {health.rss}")
    print(f"  of which the web processes (master and workers): {health.web_rss}")
    print(f"  growth budget of the whole tree: {mib(budget)}")
    return health.workers_unchanged and not health.trouble and health.rss.growth <= budget


# --------------------------------------------------------------------------- main


def arguments(description: str, count: int, budget_mb: int) -> argparse.ArgumentParser:
    """The options every fuzz bench takes; a bench adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--count", type=int, default=count, help="cases to send")
    parser.add_argument("--start", type=int, default=0, help="first case index")
    parser.add_argument("--clients", type=int, default=8, help="keep-alive client threads")
    parser.add_argument("--workers", type=int, default=2, help="PLAYGROUND_WORKERS")
    parser.add_argument("--threads", type=int, default=4, help="PLAYGROUND_THREADS")
    parser.add_argument(
        "--memory-budget-mb",
        type=int,
        default=budget_mb,
        help="allowed RSS growth (MiB)" + ("" if budget_mb else "; 0: derived from the settings"),
    )
    return parser


#: Times a fuzz client asks again when the server answers that it is busy (503 with
#: `retry_after`), a second apart.
BUSY_RETRIES = 5

#: Fuzzing checks what each input gets, not who gets served first: a fuzz client that sent
#: a costly case is not made to wait for the heavy clients' slots (see Capacity).
FUZZ_SETTINGS = {"PLAYGROUND_HEAVY_SLOTS": "1000000"}


def serve_and_fuzz(
    fuzzer: Fuzzer, args: argparse.Namespace, env: dict[str, str] | None = None
) -> int:
    """Start gunicorn with `env`, run the cases, report; the exit status (1 on a failure)."""
    started = time.perf_counter()
    settings = {
        "PLAYGROUND_WORKERS": str(args.workers),
        "PLAYGROUND_THREADS": str(args.threads),
        **FUZZ_SETTINGS,
    }
    with running({**settings, **(env or {})}) as server:
        result, health = fuzzer.with_health(server, args.count, args.clients, args.start)
        if health.trouble:
            print(f"gunicorn log (tail):\n{server.tail(20_000)}", file=sys.stderr)
    ok = report(result, health, args.memory_budget_mb * 2**20)
    print(f"bench wall time {time.perf_counter() - started:.1f} s")
    return 0 if ok else 1
