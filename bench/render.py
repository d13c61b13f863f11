"""Benchmark chat-template rendering, in process and over HTTP: `python -m bench.render [--quick]`.

Run from the repository root, with the shared folder (`../shared`) beside the checkout and
transformers installed (the `test` extra). Two measurements:

1. In process: every upstream llama.cpp template × every corpus conversation, rendered by our
   transformers engine (`render_exactly`) and by transformers'
   `tokenizer.apply_chat_template(..., tokenize=False)`, the clock pinned for both. One
   untimed pass warms both compile caches and records each side's outcome; only the pairs
   that render on *both* sides are timed (pairs where either side raises are left out and
   counted). Each timed repetition walks the pairs in a fresh shuffled
   order and times our render and transformers' back to back, alternating which goes first.
   Prints totals, the mean per render (µs) and the ratio ours/transformers (goal ≤ 1.5×), plus
   the same ratio over each pair's fastest repetition, which scheduling spikes barely move.
2. HTTP: starts gunicorn (`gunicorn.conf.py`; PLAYGROUND_* settings or defaults) on a free port,
   warms it up, then sends POST /api/render requests with real tool-calling templates and the
   corpus' tool cases from a few keep-alive client threads. Prints p50/p95 round-trip latency,
   requests/s, and the number of answers that were not 200 or not the expected prompt. gunicorn
   is stopped with SIGTERM whatever happens.

Nothing is asserted about absolute times: they depend on the machine. `--quick` does fewer
repetitions and requests (under ~40 s; the full run stays under ~3 minutes).
"""

import argparse
import gc
import http.client
import json
import os
import random
import shutil
import statistics
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from app.config import load_settings
from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from app.render.engines import render_exactly
from bench._server import Server, visitor_address
from oracles.transformers.reference import pinned_transformers_clock, reference_tokenizer
from tests.support.corpus import case_body, case_request, load_conversations
from tests.support.shared_data import TEMPLATES_DIR, template_files

GOAL_RATIO = 1.5
#: Real templates that take tools, sent over HTTP with the corpus' tool cases.
HTTP_TEMPLATES = (
    "Qwen-Qwen2.5-7B-Instruct",
    "meta-llama-Llama-3.1-8B-Instruct",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
)
CLIENT_THREADS = 4
REQUEST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Mode:
    """How much work one run does."""

    repetitions: int
    requests: int
    warmup_requests: int


FULL = Mode(repetitions=15, requests=500, warmup_requests=200)
QUICK = Mode(repetitions=3, requests=100, warmup_requests=100)


# --------------------------------------------------------------------------- in process


@dataclass
class Pair:
    """One template × conversation, with both sides' call ready to go."""

    template: str
    case: str
    ours: RenderRequest
    theirs: tuple[Any, dict[str, Any]]  # tokenizer, apply_chat_template keyword arguments


def _their_call(case: dict[str, Any], source: str) -> tuple[Any, dict[str, Any]]:
    """The call `oracles.transformers.reference.reference_render` makes, minus its
    defensive deepcopy."""
    tokenizer = reference_tokenizer(case.get("special_tokens") or {})
    kwargs = dict(
        tools=case.get("tools"),
        documents=case.get("documents"),
        chat_template=source,
        tokenize=False,
        add_generation_prompt=case.get("add_generation_prompt", False),
        continue_final_message=case.get("continue_final_message", False),
        **(case.get("kwargs") or {}),
    )
    return tokenizer, {"conversation": case["messages"], **kwargs}


def run_ours(pair: Pair) -> str:
    return render_exactly(pair.ours).prompt


def run_theirs(pair: Pair) -> str:
    tokenizer, kwargs = pair.theirs
    return tokenizer.apply_chat_template(**kwargs)


def _outcome(function: Any, pair: Pair) -> tuple[bool, str]:
    try:
        return True, function(pair)
    except Exception as error:
        return False, type(error).__name__


@dataclass
class InProcessResult:
    pairs_total: int
    pairs_timed: int
    excluded: dict[str, int]
    differing: int
    repetitions: int
    ours_ns: int = 0
    theirs_ns: int = 0
    rep_ratios: list[float] = field(default_factory=list)
    #: Per pair (by id), the fastest of its repetitions: [ours, transformers] in ns.
    best: dict[int, list[int]] = field(default_factory=dict)
    #: Per template, the sum of its pairs' fastest times: [ours, transformers] in ns.
    by_template: dict[str, list[int]] = field(default_factory=dict)

    @property
    def renders(self) -> int:
        return self.pairs_timed * self.repetitions

    @property
    def ratio(self) -> float:
        return self.ours_ns / self.theirs_ns

    @property
    def best_ratio(self) -> float:
        """Ratio of the summed per-pair fastest times: less sensitive to scheduling spikes."""
        return sum(b[0] for b in self.best.values()) / sum(b[1] for b in self.best.values())


def bench_in_process(mode: Mode) -> InProcessResult:
    cases = load_conversations()
    templates = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
    if not templates:
        raise SystemExit(f"No templates found in {TEMPLATES_DIR}: is ../shared beside the repo?")
    all_pairs = [
        Pair(name, case["name"], case_request(case, source), _their_call(case, source))
        for name, source in templates.items()
        for case in cases
    ]
    pristine = json.dumps(cases, sort_keys=True, default=str)

    # Untimed warm-up: fills both compile caches (and transformers' other lru caches) and
    # finds the pairs that render on both sides.
    excluded: dict[str, int] = defaultdict(int)
    timed: list[Pair] = []
    differing = 0
    with pinned_transformers_clock():
        for pair in all_pairs:
            ok_ours, ours = _outcome(run_ours, pair)
            ok_theirs, theirs = _outcome(run_theirs, pair)
            if ok_ours and ok_theirs:
                timed.append(pair)
                differing += ours != theirs
            else:
                side = {(False, True): "ours", (True, False): "transformers"}.get(
                    (ok_ours, ok_theirs), "both"
                )
                excluded[f"error on {side}"] += 1
    if json.dumps(cases, sort_keys=True, default=str) != pristine:
        raise SystemExit("A render mutated the corpus: the timed passes would not be comparable.")

    result = InProcessResult(len(all_pairs), len(timed), dict(excluded), differing, 0)
    result.best = {id(pair): [sys.maxsize, sys.maxsize] for pair in timed}
    rng = random.Random(20261129)
    clock = time.perf_counter_ns
    with pinned_transformers_clock():
        for rep in range(mode.repetitions):
            order = timed[:]
            rng.shuffle(order)
            rep_ours = rep_theirs = 0
            gc.collect()
            for index, pair in enumerate(order):
                # Alternate who goes first so neither side always runs on a warmer cache.
                if (index + rep) % 2:
                    t0 = clock()
                    run_ours(pair)
                    t1 = clock()
                    run_theirs(pair)
                    t2 = clock()
                    ours, theirs = t1 - t0, t2 - t1
                else:
                    t0 = clock()
                    run_theirs(pair)
                    t1 = clock()
                    run_ours(pair)
                    t2 = clock()
                    theirs, ours = t1 - t0, t2 - t1
                rep_ours += ours
                rep_theirs += theirs
                best = result.best[id(pair)]
                best[0] = min(best[0], ours)
                best[1] = min(best[1], theirs)
            result.ours_ns += rep_ours
            result.theirs_ns += rep_theirs
            result.rep_ratios.append(rep_ours / rep_theirs)
            result.repetitions += 1
    for pair in timed:
        best = result.best[id(pair)]
        totals = result.by_template.setdefault(pair.template, [0, 0])
        totals[0] += best[0]
        totals[1] += best[1]
    return result


def report_in_process(result: InProcessResult) -> None:
    print(
        "\n== In process: our transformers engine vs transformers "
        "apply_chat_template(tokenize=False)"
    )
    excluded = ", ".join(f"{n} {why}" for why, n in sorted(result.excluded.items())) or "none"
    print(
        f"pairs: {result.pairs_total} (templates × conversations); timed: {result.pairs_timed} "
        f"that render on both sides; excluded: {excluded}"
    )
    print(
        "counting: only pairs that render on both sides; 1 untimed warm-up pass, then "
        f"{result.repetitions} shuffled, interleaved repetition(s) = {result.renders} renders "
        "per side"
    )
    if result.differing:
        print(f"note: {result.differing} timed pair(s) gave different prompts on the two sides")
    mean_ours = result.ours_ns / result.renders / 1e3
    mean_theirs = result.theirs_ns / result.renders / 1e3
    print(f"ours:         total {result.ours_ns / 1e9:8.3f} s   mean {mean_ours:8.1f} µs/render")
    print(
        f"transformers: total {result.theirs_ns / 1e9:8.3f} s   mean {mean_theirs:8.1f} µs/render"
    )
    spread = ", ".join(f"{r:.2f}" for r in result.rep_ratios)
    verdict = "met" if result.ratio <= GOAL_RATIO else "NOT met"
    print(
        f"ratio ours/transformers: {result.ratio:.2f}× (per repetition: {spread}); "
        f"goal ≤ {GOAL_RATIO}×: {verdict}"
    )
    print(
        f"ratio of per-pair fastest times (min over repetitions): {result.best_ratio:.2f}×"
        + ("" if result.repetitions > 1 else " (one repetition: same samples)")
    )
    worst = sorted(result.by_template.items(), key=lambda kv: kv[1][0] / kv[1][1], reverse=True)
    shown = ", ".join(f"{name} {ours / theirs:.2f}×" for name, (ours, theirs) in worst[:3])
    print(f"highest per-template ratios (fastest times): {shown}")


# --------------------------------------------------------------------------- HTTP


def http_payloads() -> list[tuple[str, bytes, str]]:
    """(label, JSON body, expected prompt) for each tool template × tool case we can render."""
    cases = [case for case in load_conversations() if case["tools"]]
    payloads = []
    for name in HTTP_TEMPLATES:
        path = TEMPLATES_DIR / f"{name}.jinja"
        if not path.exists():
            print(f"note: {path.name} is missing; HTTP bench goes on without it")
            continue
        source = path.read_text(encoding="utf-8")
        for case in cases:
            try:  # as /api/render sends it: tool-call arguments as transformers' callers do
                expected = engines.render(case_request(case, source)).prompt
            except TemplateProblem:
                continue  # a template refusing a case is a 422, not what this measures
            body = case_body(case, source)
            payloads.append((f"{name}×{case['name']}", json.dumps(body).encode(), expected))
    if not payloads:
        raise SystemExit("No tool template × tool case renders: nothing to send over HTTP.")
    return payloads


@dataclass
class HttpResult:
    requests: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    non_200: dict[int, int] = field(default_factory=dict)
    wrong_prompt: int = 0
    failures: list[str] = field(default_factory=list)
    reconnects: int = 0
    wall_s: float = 0.0
    cold_first_ms: float = 0.0
    health_s: float = 0.0
    warmup_requests: int = 0


class Client:
    """One keep-alive connection; reconnects once if the server closed it."""

    def __init__(self, port: int, result: HttpResult, lock: threading.Lock) -> None:
        self.port = port
        self.result = result
        self.lock = lock
        self.address = visitor_address()  # each client thread is a visitor of its own
        self.connection = self._connect()

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT_S)

    def post(self, body: bytes) -> tuple[int, bytes, float]:
        headers = {"Content-Type": "application/json", "X-Forwarded-For": self.address}
        for attempt in range(2):
            started = time.perf_counter()
            try:
                self.connection.request("POST", "/api/render", body=body, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                elapsed_ms = (time.perf_counter() - started) * 1000
                if response.will_close:
                    self.connection.close()
                    self.connection = self._connect()
                return response.status, data, elapsed_ms
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.connection.close()
                self.connection = self._connect()
                if attempt:
                    raise
                with self.lock:
                    self.result.reconnects += 1
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.connection.close()


def _send_all(
    port: int,
    jobs: list[tuple[str, bytes, str]],
    result: HttpResult,
    record: bool,
) -> float:
    """Send `jobs` from CLIENT_THREADS threads; returns the wall time in seconds."""
    lock = threading.Lock()

    def worker(share: list[tuple[str, bytes, str]]) -> None:
        client = Client(port, result, lock)
        try:
            for label, body, expected in share:
                try:
                    status, data, elapsed_ms = client.post(body)
                except Exception as error:
                    with lock:
                        result.failures.append(f"{label}: {type(error).__name__}: {error}")
                    continue
                if not record:
                    continue
                wrong = status == 200 and json.loads(data).get("prompt") != expected
                with lock:
                    result.requests += 1
                    result.latencies_ms.append(elapsed_ms)
                    if status != 200:
                        result.non_200[status] = result.non_200.get(status, 0) + 1
                    result.wrong_prompt += wrong
        finally:
            client.close()

    threads = [
        threading.Thread(target=worker, args=(jobs[i::CLIENT_THREADS],), daemon=True)
        for i in range(CLIENT_THREADS)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def bench_http(mode: Mode) -> tuple[HttpResult, list[tuple[str, bytes, str]]]:
    payloads = http_payloads()
    result = HttpResult()
    _run_server_bench(Server(), payloads, mode, result)
    return result, payloads


def _run_server_bench(
    server: Server, payloads: list[tuple[str, bytes, str]], mode: Mode, result: HttpResult
) -> None:
    try:
        result.health_s = server.start()
        # The very first render starts the sandbox pool of one worker: report it apart.
        label, body, _ = payloads[0]
        client = Client(server.port, result, threading.Lock())
        try:
            status, _, result.cold_first_ms = client.post(body)
        finally:
            client.close()
        if status != 200:
            raise RuntimeError(f"first request ({label}) answered {status}:\n{server.tail()}")
        # Warm up every gunicorn worker's sandbox processes and their compile caches.
        warmup = [payloads[i % len(payloads)] for i in range(mode.warmup_requests)]
        _send_all(server.port, warmup, result, record=False)
        result.warmup_requests = len(warmup)
        jobs = [payloads[i % len(payloads)] for i in range(mode.requests)]
        result.wall_s = _send_all(server.port, jobs, result, record=True)
    except BaseException:
        print(f"gunicorn log (tail):\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        code = server.stop()
        server.close()
        shutil.rmtree(server.data_dir, ignore_errors=True)
        if code not in (0, None):
            print(f"note: gunicorn exited with code {code}")


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def report_http(result: HttpResult, payloads: list[tuple[str, bytes, str]]) -> None:
    settings = load_settings()
    statuses = f" {dict(sorted(result.non_200.items()))}" if result.non_200 else ""
    warmup = result.warmup_requests
    print("\n== HTTP: POST /api/render through gunicorn")
    print(
        f"server: gunicorn.conf.py, {settings['WORKERS']} workers × {settings['THREADS']} "
        f"threads (each with {settings['THREADS']} sandbox processes); /healthz after "
        f"{result.health_s:.1f} s; first render (cold pool) {result.cold_first_ms:.0f} ms"
    )
    templates = sorted({label.split("×")[0] for label, _, _ in payloads})
    print(
        f"payloads: {len(payloads)} tool-template × tool-case bodies "
        f"({len(templates)} templates: {', '.join(templates)}), sent round-robin from "
        f"{CLIENT_THREADS} keep-alive client threads"
    )
    print(
        f"requests: {result.requests} timed (after {warmup} untimed warm-up), non-200: "
        f"{sum(result.non_200.values())}{statuses}, wrong prompt: "
        f"{result.wrong_prompt}, transport failures: {len(result.failures)}, "
        f"reconnects: {result.reconnects}"
    )
    for failure in result.failures[:5]:
        print(f"  failure: {failure}")
    if result.latencies_ms:
        print(
            f"latency: p50 {_percentile(result.latencies_ms, 0.50):.1f} ms, "
            f"p95 {_percentile(result.latencies_ms, 0.95):.1f} ms, "
            f"mean {statistics.fmean(result.latencies_ms):.1f} ms; "
            f"throughput {result.requests / result.wall_s:.0f} requests/s"
        )


# --------------------------------------------------------------------------- summary


def summary(
    mode_name: str, local: InProcessResult, remote: HttpResult | None, elapsed_s: float
) -> None:
    rows = [
        ("in-process pairs timed", f"{local.pairs_timed}/{local.pairs_total}"),
        ("renders per side", f"{local.renders}"),
        ("ours mean", f"{local.ours_ns / local.renders / 1e3:.1f} µs"),
        ("transformers mean", f"{local.theirs_ns / local.renders / 1e3:.1f} µs"),
        (
            "ratio ours/transformers",
            f"{local.ratio:.2f}× ({'≤' if local.ratio <= GOAL_RATIO else '>'} {GOAL_RATIO}× goal)",
        ),
        ("ratio, per-pair fastest", f"{local.best_ratio:.2f}×"),
    ]
    if remote is not None and remote.latencies_ms:
        bad = sum(remote.non_200.values()) + remote.wrong_prompt + len(remote.failures)
        rows += [
            ("HTTP requests", f"{remote.requests} ({bad} not 200 / wrong / failed)"),
            ("HTTP p50", f"{_percentile(remote.latencies_ms, 0.50):.1f} ms"),
            ("HTTP p95", f"{_percentile(remote.latencies_ms, 0.95):.1f} ms"),
            ("HTTP throughput", f"{remote.requests / remote.wall_s:.0f} req/s"),
        ]
    rows.append(("bench wall time", f"{elapsed_s:.1f} s ({mode_name})"))
    width = max(len(name) for name, _ in rows)
    print("\n== Summary")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and requests")
    parser.add_argument("--no-http", action="store_true", help="skip the gunicorn benchmark")
    args = parser.parse_args()
    mode, mode_name = (QUICK, "quick") if args.quick else (FULL, "full")
    started = time.perf_counter()

    local = bench_in_process(mode)
    report_in_process(local)
    remote = None
    if not args.no_http:
        remote, payloads = bench_http(mode)
        report_http(remote, payloads)
    summary(mode_name, local, remote, time.perf_counter() - started)
    if remote is not None and (remote.non_200 or remote.wrong_prompt or remote.failures):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
