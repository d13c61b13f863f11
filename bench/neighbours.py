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
is a matter for a rate limit in front of the service). Prints, per phase, the normal
visitor's p50 and p99 and their ratio to the idle phase (goal: p99 within 2x), its
errors, and what the attacks got. `--repo OTHER_CHECKOUT` serves another checkout (the
figures before a change). Needs the shared folder beside the checkout (Qwen3's
template); about 20 s a phase.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import threading
import time
from collections import Counter
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
            seen[f"{path} {answer.status}"] += 1
            if answer.status in (429, 503):
                stop.wait(refused_pause)
    finally:
        client.close()


def _attackers_main(port: int, addresses: int, per_address: int, seconds: float,
                    refused_pause: float, results: Any) -> None:  # fmt: skip
    """The attackers' process, at the lowest priority: what they spend building and
    reading bodies is theirs, not the server's."""
    os.nice(19)
    mix = attack_mix()
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


def normal_visitor(port: int, seconds: float, pause: float) -> tuple[list[float], Counter]:
    """Renders every `pause` seconds: their latencies (ms) and statuses."""
    client = Client(port, REQUEST_TIMEOUT_S)
    client.address = "203.0.113.77"
    body = json.dumps(NORMAL_RENDER).encode()
    latencies, statuses = [], Counter()
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline:
            answer = client.request("POST", "/api/render", body)
            statuses[answer.status] += 1
            if answer.status == 200:
                latencies.append(answer.ms)
            time.sleep(pause)
    finally:
        client.close()
    return latencies, statuses


def phase(server: Server, addresses: int, args: argparse.Namespace) -> dict[str, Any]:
    """One phase: the normal visitor beside `addresses` attacking addresses (0: alone)."""
    process, results = None, None
    if addresses:
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        process = context.Process(
            target=_attackers_main,
            args=(server.port, addresses, args.per_address, args.seconds + 2,
                  args.refused_pause, results),
            daemon=True,
        )  # fmt: skip
        process.start()
        assert results.get(timeout=300) == "ready"
        time.sleep(2)  # the attack under way before the first measured render
    latencies, statuses = normal_visitor(server.port, args.seconds, args.pause)
    attacks = {}
    if process is not None:
        attacks = results.get(timeout=args.seconds + 2 * REQUEST_TIMEOUT_S)
        process.join(timeout=10)
    return {"latencies": latencies, "statuses": statuses, "attacks": attacks}


def report(name: str, result: dict[str, Any], idle_p99: float | None) -> float:
    latencies = result["latencies"]
    p50, p99 = statistics.median(latencies), percentile(latencies, 0.99)
    ratio = "" if idle_p99 is None else f", p99 {p99 / idle_p99:.1f}x idle"
    others = {s: n for s, n in result["statuses"].items() if s != 200}
    print(
        f"{name}: {len(latencies)} renders, p50 {p50:.1f} ms, p99 {p99:.1f} ms{ratio}"
        f"; not 200: {others or 'none'}"
    )
    if result["attacks"]:
        print(f"  attacks answered: {dict(sorted(result['attacks'].items()))}")
    return p99


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--pause", type=float, default=0.02, help="between normal renders")
    parser.add_argument("--addresses", type=int, nargs="*", default=[4, 12])
    parser.add_argument("--per-address", type=int, default=2, help="attacking connections")
    parser.add_argument("--refused-pause", type=float, default=0.1)
    parser.add_argument("--repo", type=Path, help="serve another checkout (figures before)")
    args = parser.parse_args()
    server = Server({**BENCH_ENV, "PLAYGROUND_TRUSTED_PROXIES": "1"}, repo=args.repo)
    with running(server):
        phase(server, 0, argparse.Namespace(**{**vars(args), "seconds": 3}))  # warm up
        idle = report("idle", phase(server, 0, args), None)
        worst = 1.0
        for addresses in args.addresses:
            p99 = report(f"{addresses} attacking addresses", phase(server, addresses, args), idle)
            worst = max(worst, p99 / idle)
        trouble = server.worker_trouble()
        print(f"gunicorn log: {trouble or 'no worker exit or traceback'}")
    verdict = "met" if worst <= GOAL_RATIO else "NOT met"
    print(f"worst p99 ratio {worst:.1f}x (goal ≤ {GOAL_RATIO:g}x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
