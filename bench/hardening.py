"""The figures of the second hardening round, before and after: `python -m bench.hardening`.

Starts gunicorn (1 worker, 4 sandboxes, believing one proxy so that each client names
its own address) and measures each finding of that round:

1. renders from a third address while 4 slow URL reads from 2 addresses run (a server
   that trickles one header byte every 0.5 s): their statuses and slowest answer;
2. once those reads answered, how long the trickling server's connections stay open, and
   what a new remote load gets right then (`503 fetches` while fetch threads are busy);
3. `raise_exception('x' * 10**8)` with the vllm and tgi engines: the 422's size, and how
   much the gunicorn worker grew;
4. `/api/analyze` of templates that raise with a sandbox object (a cycler, `loop`,
   `self`, `lipsum`): the statuses;
5. `http://[::ffff:0:7f00:1]/` (SIIT, toward 127.0.0.1): the answer;
6. shares: bytes stored per share of a 60-message conversation, and distinct 100 kB
   shares stored with `PLAYGROUND_SHARE_STORAGE_MB=1` until refused;
7. a GGUF URL on the configured `PLAYGROUND_HF_ENDPOINT` (a private mirror on loopback).

`--repo OTHER_CHECKOUT` serves another checkout's code (read only), for the figures before
a change: `git worktree add /tmp/before fbe4da8`, then `--repo /tmp/before`. Needs the
test extras only for the fixture files (gguf-py, tokenizers); takes about a minute.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench._server import BENCH_ENV
from tests.support.fake_hub import RangeHost
from tests.support.remote_fixtures import gguf_file
from tests.support.server import NORMAL_RENDER, Server, running
from tests.support.trickle_host import TrickleHost

HELLO = [{"role": "user", "content": "Hello!"}]
FETCH_SECONDS = 6.0


def post(server: Server, path: str, body: dict, address: str = "203.0.113.9"):
    """status, JSON (or None), body bytes, seconds."""
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    started = time.monotonic()
    status, _, data = server.send("POST", path, json.dumps(body).encode(), headers, timeout=120)
    seconds = time.monotonic() - started
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    return status, answer, len(data), seconds


def limit_of(answer: dict | None) -> str:
    error = (answer or {}).get("error") or {}
    return error.get("limit") or error.get("type") or "-"


def slow_reads(server: Server, trickle: TrickleHost) -> None:
    url = {"url": f"{trickle.url}/model.gguf"}
    readers = ["198.51.100.1", "198.51.100.1", "198.51.100.2", "198.51.100.2"]
    with ThreadPoolExecutor(len(readers)) as pool:
        reads = [pool.submit(post, server, "/api/sources/url", url, a) for a in readers]
        time.sleep(0.5)
        renders = []
        while not all(read.done() for read in reads):
            renders.append(post(server, "/api/render", NORMAL_RENDER))
            time.sleep(0.1)
        answers = [read.result() for read in reads]
    statuses = Counter(f"{status} {limit_of(answer)}" for status, answer, _, _ in renders)
    seconds = [s for *_, s in renders]
    print(
        f"1. renders from a third address during 4 slow reads: {dict(statuses)};"
        f" p50 {statistics.median(seconds) * 1000:.0f} ms, slowest {max(seconds):.2f} s"
    )
    reads_seen = Counter(f"{status} {limit_of(answer)}" for status, answer, _, _ in answers)
    print(f"   the slow reads: {dict(reads_seen)}")
    answered = time.monotonic()
    status, answer, _, _ = post(server, "/api/sources/url", url, "198.51.100.3")
    print(f"2. a new remote load right after: {status} {limit_of(answer)}")
    opened = trickle.accepted
    closed = trickle.wait_closed(opened, timeout=20.0)
    print(
        f"   trickling connections closed by the server: {len(closed)} of {opened} within"
        f" {time.monotonic() - answered:.1f} s of the answers; each lived"
        f" {', '.join(f'{s:.1f}' for s in sorted(closed)) or '-'} s"
    )


def long_messages(server: Server) -> None:
    template = "{{ raise_exception('x' * 10**8) }}"
    for engine in ("vllm", "tgi"):
        body = {"template": template, "messages": HELLO, "engine": engine}
        before = server.web_rss()
        result: list = []
        peak = server.peak_web_rss(
            lambda b=body, r=result: r.append(post(server, "/api/render", b))
        )
        status, _, size, _ = result[0]
        print(
            f"3. {engine}: raise_exception of 100 MB: {status}, {size:,} bytes; the web"
            f" processes grew {(peak - before) / 2**20:.0f} MiB at the peak"
        )


def raised_objects(server: Server) -> None:
    templates = {
        "cycler": "{{ raise_exception(cycler(1, 2)) }}",
        "loop": "{% for m in messages %}{{ raise_exception(loop) }}{% endfor %}",
        "self": "{{ raise_exception(self) }}",
        "lipsum": "{{ raise_exception(lipsum) }}",
    }
    statuses = {
        name: post(server, "/api/analyze", {"template": t, "messages": HELLO})[0]
        for name, t in templates.items()
    }
    print(f"4. /api/analyze of templates raising sandbox objects: {statuses}")


def siit(server: Server) -> None:
    status, answer, _, _ = post(server, "/api/sources/url", {"url": "http://[::ffff:0:7f00:1]/x"})
    message = ((answer or {}).get("error") or {}).get("message", "")[:70]
    print(f"5. http://[::ffff:0:7f00:1]/: {status} {limit_of(answer)} ({message})")


def shares(server: Server, data_dir: Path) -> None:
    turns = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"Turn {n}: " + "word " * 60}
        for n in range(60)
    ]
    body = {"template": "{% for m in messages %}{{ m.content }}{% endfor %}", "messages": turns}
    text_bytes = len(json.dumps(body).encode())
    stored_before = stored_share_bytes(data_dir)
    assert post(server, "/api/shares", body)[0] == 201
    per_share = stored_share_bytes(data_dir) - stored_before
    print(
        f"6. a share of a 60-message conversation (~{text_bytes:,} bytes of JSON):"
        f" {per_share:,} bytes stored"
    )
    made, refused = 0, "-"
    for seed in range(40):
        text = hashlib.shake_256(str(seed).encode()).hexdigest(50_000)  # 100 kB, ~2:1
        status, answer, _, _ = post(server, "/api/shares", {"template": text, "messages": []})
        if status != 201:
            refused = f"{status} {limit_of(answer)}"
            break
        made += 1
    print(
        f"   distinct 100 kB shares with PLAYGROUND_SHARE_STORAGE_MB=1: {made} stored, then"
        f" {refused}; {stored_share_bytes(data_dir):,} bytes of shares in the database"
    )


def stored_share_bytes(data_dir: Path) -> int:
    with sqlite3.connect(data_dir / "playground.db") as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(shares)")}
        packed = " + COALESCE(length(packed), 0)" if "packed" in columns else ""
        query = f"SELECT COALESCE(SUM(length(CAST(state AS BLOB)){packed}), 0) FROM shares"
        return int(db.execute(query).fetchone()[0])


def mirror_url(server: Server, mirror: RangeHost) -> None:
    status, answer, _, _ = post(server, "/api/sources/url", {"url": f"{mirror.url}/m.gguf"})
    print(f"7. a GGUF URL on the configured PLAYGROUND_HF_ENDPOINT: {status} {limit_of(answer)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", help="serve this checkout's code instead (read only)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hardening-"))
    trickle, mirror = TrickleHost(interval=0.5), RangeHost()
    mirror.files["/m.gguf"] = gguf_file(folder / "m.gguf", "Mirror", tokens=100)
    env = {
        **BENCH_ENV,
        "PLAYGROUND_WORKERS": "1",
        "PLAYGROUND_THREADS": "4",
        "PLAYGROUND_FETCH_SECONDS": str(FETCH_SECONDS),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    print(f"bench.hardening: serving {args.repo or 'this checkout'}")
    try:
        # The trickling server is on loopback, a private address: read on purpose here.
        private = {**env, "PLAYGROUND_URL_ALLOW_PRIVATE": "1"}
        with running(Server(private, repo=args.repo)) as server:
            slow_reads(server, trickle)
        data = folder / "data"
        public = {**env, "PLAYGROUND_SHARE_STORAGE_MB": "1", "PLAYGROUND_HF_ENDPOINT": mirror.url}
        with running(Server(public, data_dir=str(data), repo=args.repo)) as server:
            long_messages(server)
            raised_objects(server)
            siit(server)
            shares(server, data)
            mirror_url(server, mirror)
    finally:
        trickle.close()
        mirror.close()


if __name__ == "__main__":
    main()
