"""A normal visitor's renders while other addresses send bombs: `python -m bench.neighbours`.

Starts gunicorn with the default settings (2 workers, 4 sandboxes each, the default
per-client rules), believing one proxy so that each client names its own address. One
normal visitor renders a short conversation (`/api/render`) every `--pause` seconds
from an address of its own, for `--seconds` per phase: alone, then beside attackers
from 4 addresses, then from 12. Each attacking address runs as many connections as
`PLAYGROUND_CLIENT_CONCURRENCY` lets it (2), each sending, back to back, a mix that
spends every budget there is:

- renders that hit a limit (CPU, memory, output) with every engine;
- 250 kB pathological completions (repeated openers, an unclosed object, function
  openers, call lines) to `/api/parse` and `/api/roundtrip` with Qwen3's template;
- uploads of a `tokenizer_config.json` whose response template holds two million
  empty objects (the round-3 review's upload).

An attacker that is refused (429, 503) waits `--refused-pause` before its next request,
as a client that reads its answers does (a flood of requests that are refused at once
is a matter for a rate limit in front of the service). `--only PATH ...` sends only
the attacks on those paths.

The visitor is known to every gunicorn worker before the phases (each worker has its
own admission), and runs at a higher priority than the server when the bench may set
one (root): it shares this machine's cores with the server, which a visitor elsewhere
does not. The attackers run in a session of their own at the lowest priority (Linux
shares the CPU between sessions first). Prints, per phase, the visitor's p50 and p99
as it saw them and as the access log says the web process took them, each as a ratio
to the idle phase (goal: p99 within 2x), its refusals, and what the attacks got.
`--repo OTHER_CHECKOUT` serves another checkout (the figures before a change);
`--server-log FILE` keeps gunicorn's log. Needs the shared folder beside the checkout
(Qwen3's template); about 20 s a phase.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import statistics
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._server import BENCH_ENV, Client, percentile
from bench.answers import cases as completions
from bench.load import HOSTILE
from tests.support.hostile_inputs import multipart
from tests.support.server import NORMAL_RENDER, Server, running
from tests.support.shared_data import TEMPLATES_DIR

ENGINES = ("transformers", "llama.cpp", "vllm", "tgi", "transformers.js", "edge-llm")
QWEN3 = "Qwen-Qwen3-0.6B.jinja"
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
GOAL_RATIO = 2.0
#: The normal visitor's address (the attackers' are 198.18.N.1).
VISITOR = "203.0.113.77"
REQUEST_TIMEOUT_S = 60.0


def attack_mix() -> list[tuple[str, str, bytes, str]]:
    """(name, path, body, content type) of every attack, built once."""
    mix = []
    hello = [{"role": "user", "content": "hi"}]
    for engine in ENGINES:
        for name, template, _ in HOSTILE:
            body = {"template": template, "messages": hello, "engine": engine}
            mix.append((f"{name} {engine}", "/api/render", json.dumps(body).encode(), "json"))
    qwen3 = (TEMPLATES_DIR / QWEN3).read_text(encoding="utf-8")
    weather = [{"role": "user", "content": "The weather in Paris?"}]
    for name, text in completions(250_000).items():
        if name in ("plain answer", "reasoning + answer", "tool call"):
            continue
        body = {
            "template": qwen3,
            "messages": weather,
            "tools": WEATHER,
            "add_generation_prompt": True,
            "completion": text,
        }
        for path in ("/api/parse", "/api/roundtrip"):
            mix.append((f"{name} {path}", path, json.dumps(body).encode(), "json"))
    template = {"start_anchor": "x", "fields": {"content": {}}, "defaults": {"d": [{}] * 2_000_000}}
    config = json.dumps({"chat_template": "{{ messages }}", "response_template": template})
    data, content_type = multipart({"tokenizer_config.json": config})
    mix.append(("response-template upload", "/api/sources/hf", data, content_type))
    return mix


def _attacker(port: int, address: str, mix: list, stop: threading.Event, refused_pause: float,
              seen: Counter, offset: int) -> None:  # fmt: skip
    client = Client(port, REQUEST_TIMEOUT_S)
    client.address = address
    index = offset
    try:
        while not stop.is_set():
            _, path, body, kind = mix[index % len(mix)]
            index += 1
            content_type = "application/json" if kind == "json" else kind
            try:
                answer = client.request("POST", path, body, content_type)
            except OSError:
                seen["transport error"] += 1
                continue
            seen[f"{path} {_status(answer)}"] += 1
            if answer.status in (429, 503):
                stop.wait(refused_pause)
    finally:
        client.close()


def _attackers_main(port: int, addresses: int, per_address: int, seconds: float,
                    refused_pause: float, only: list[str], results: Any) -> None:  # fmt: skip
    """The attackers' process, at the lowest priority: what they spend building and
    reading bodies is theirs, not the server's. Linux shares the CPU between sessions
    first (autogroups) and only then by nice value, so the process leaves the bench's
    session and puts its own at the lowest priority: on the bench's, it took up to
    half of the server's CPU time."""
    os.setsid()
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as autogroup:
        autogroup.write("19")
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    mix = [attack for attack in attack_mix() if not only or attack[1] in only]
    stop = threading.Event()
    seen: Counter = Counter()
    threads = [
        threading.Thread(
            target=_attacker,
            args=(port, f"198.18.{a}.1", mix, stop, refused_pause, seen, a * 7 + c * 3),
            daemon=True,
        )
        for a in range(addresses)
        for c in range(per_address)
    ]
    results.put("ready")
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(timeout=REQUEST_TIMEOUT_S)
    results.put(dict(seen))


def _status(answer: Any) -> str:
    """The status, and the limit a refusal names."""
    if answer.status < 400:
        return str(answer.status)
    try:
        limit = answer.json()["error"].get("limit")
    except (ValueError, KeyError, TypeError, AttributeError):
        limit = None
    return f"{answer.status} {limit}" if limit else str(answer.status)


def normal_visitor(port: int, seconds: float, pause: float) -> tuple[list[float], Counter]:
    """Renders every `pause` seconds: their latencies (ms) and statuses."""
    client = Client(port, REQUEST_TIMEOUT_S)
    client.address = VISITOR
    body = json.dumps(NORMAL_RENDER).encode()
    latencies, statuses = [], Counter()
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline:
            answer = client.request("POST", "/api/render", body)
            statuses[_status(answer)] += 1
            if answer.status == 200:
                latencies.append(answer.ms)
            time.sleep(pause)
    finally:
        client.close()
    return latencies, statuses


def server_side(server: Server, started: datetime, ended: datetime) -> list[float]:
    """What the access log says the visitor's renders took in the web process, from the
    first line of the view to its answer (the attacks never render with a 200)."""
    durations = []
    for line in server.log_text().splitlines():
        if '"path": "/api/render", "status": 200' not in line:
            continue
        entry = json.loads(line[line.index("{") :])
        if started <= datetime.fromisoformat(entry["time"]) <= ended:
            durations.append(entry["duration_ms"])
    return durations


def phase(server: Server, addresses: int, args: argparse.Namespace) -> dict[str, Any]:
    """One phase: the normal visitor beside `addresses` attacking addresses (0: alone)."""
    process, results = None, None
    if addresses:
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        process = context.Process(
            target=_attackers_main,
            args=(server.port, addresses, args.per_address, args.seconds + 2,
                  args.refused_pause, args.only, results),
            daemon=True,
        )  # fmt: skip
        process.start()
        assert results.get(timeout=300) == "ready"
        time.sleep(2)  # the attack under way before the first measured render
    started = datetime.now(UTC)
    latencies, statuses = normal_visitor(server.port, args.seconds, args.pause)
    inside = server_side(server, started, datetime.now(UTC))
    attacks = {}
    if process is not None:
        attacks = results.get(timeout=args.seconds + 2 * REQUEST_TIMEOUT_S)
        process.join(timeout=10)
    return {"latencies": latencies, "server": inside, "statuses": statuses, "attacks": attacks}


def _figures(latencies: list[float]) -> tuple[float, float]:
    return statistics.median(latencies), percentile(latencies, 0.99)


def report(name: str, result: dict[str, Any], idle: dict[str, Any] | None) -> float:
    """Print a phase; its client-side p99 over the idle phase's (1.0 for idle)."""
    (p50, p99), (in50, in99) = _figures(result["latencies"]), _figures(result["server"])
    ratio = in_ratio = 1.0
    if idle is not None:
        ratio = p99 / _figures(idle["latencies"])[1]
        in_ratio = in99 / _figures(idle["server"])[1]
    others = {s: n for s, n in result["statuses"].items() if s != "200"}
    print(
        f"{name}: {len(result['latencies'])} renders; seen by the visitor p50 {p50:.1f} ms,"
        f" p99 {p99:.1f} ms ({ratio:.1f}x idle); in the web process p50 {in50:.1f} ms,"
        f" p99 {in99:.1f} ms ({in_ratio:.1f}x idle); slowest {max(result['latencies']):.0f}"
        f" ms; not 200: {others or 'none'}"
    )
    if result["attacks"]:
        print(f"  attacks answered: {dict(sorted(result['attacks'].items()))}")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--pause", type=float, default=0.02, help="between normal renders")
    parser.add_argument("--addresses", type=int, nargs="*", default=[4, 12])
    parser.add_argument("--per-address", type=int, default=2, help="attacking connections")
    parser.add_argument("--refused-pause", type=float, default=0.1)
    parser.add_argument(
        "--only", nargs="*", default=[], help="attack only these paths (/api/render, ...)"
    )
    parser.add_argument("--server-log", type=Path, help="write gunicorn's log there")
    parser.add_argument("--repo", type=Path, help="serve another checkout (figures before)")
    args = parser.parse_args()
    server = Server({**BENCH_ENV, "PLAYGROUND_TRUSTED_PROXIES": "1"}, repo=args.repo)
    with running(server):
        # The visitor's own process before the server's (started at this process's
        # priority): it shares this machine's two cores with the server, which a visitor
        # elsewhere does not. Raising its priority needs root; the attackers go lowest.
        with contextlib.suppress(PermissionError):
            os.setpriority(os.PRIO_PROCESS, 0, -5)
        # The visitor, known to every gunicorn worker (each has its own admission, and a
        # connection may land on any of them): renders from a few connections, then 3 s.
        for _ in range(4 * int(server.env.get("PLAYGROUND_WORKERS", "2"))):
            normal_visitor(server.port, 0.1, args.pause)
        phase(server, 0, argparse.Namespace(**{**vars(args), "seconds": 3}))
        idle = phase(server, 0, args)
        report("idle", idle, None)
        worst = max(
            report(f"{count} attacking addresses", phase(server, count, args), idle)
            for count in args.addresses
        )
        if args.server_log:
            args.server_log.write_text(server.log_text())
        trouble = server.worker_trouble()
        print(f"gunicorn log: {trouble or 'no worker exit or traceback'}")
    verdict = "met" if worst <= GOAL_RATIO else "NOT met"
    print(f"worst p99 seen by the visitor: {worst:.1f}x idle (goal ≤ {GOAL_RATIO:g}x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
