"""Shares survive `kill -9` of the whole server: `python -m bench.durability`.

Run from the repository root. Starts gunicorn (`gunicorn.conf.py`, 2 workers × 4 threads)
in its own process group with a temporary data folder (so the default SQLite database
lives there; `--database-url` passes PLAYGROUND_DATABASE_URL through instead, for
example a PostgreSQL one). `--clients` threads then fire POST /api/shares, each with a
unique state (a template, a conversation, tools on some, `now` pinned, so the stored
state is exactly predictable), and record every acknowledged id (a 201 or 200 with
the id). When `--kill-at` of the `--writes` are acknowledged, the master and all its
workers get SIGKILL at once (the process group), in the middle of the burst. gunicorn
is then started again on the same data folder and database, and every acknowledged
share is read back with GET /s/<id>.json: it must be there and equal the state that
was sent (template, messages and `now`, and the whole state in its JSON form,
`PlaygroundState.to_json`, under the id its content hashes to). Prints attempted,
acknowledged, verified, lost (must be 0) and how many in-flight writes (sent, never
answered) were kept anyway, plus SQLite's integrity check of the database file (when it
is SQLite).

What this proves: an acknowledged share was committed before the answer was sent, and
nothing the processes held in memory is needed to read it back. A process kill leaves
the kernel's page cache intact, so it does not test fsync; a power cut would.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._server import Client, Server
from tests.support import REPO as ROOT

PINNED_NOW = "2026-11-29T12:00:00"
COMPARED = ("template", "messages", "now")
REQUEST_TIMEOUT_S = 30.0
BURST_TIMEOUT_S = 300.0
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
SMALL_TEMPLATE = (
    "{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
)


def share_body(run: str, index: int, big_template: str) -> dict[str, Any]:
    """A unique, complete share state; every third one carries a real template and tools."""
    real = index % 3 == 0
    body: dict[str, Any] = {
        "template": f"{big_template if real else SMALL_TEMPLATE}{{# durability {run} #{index} #}}",
        "messages": [
            {"role": "system", "content": f"run {run}"},
            {"role": "user", "content": f"share #{index}: é ✓ 你好"},
        ],
        "add_generation_prompt": True,
        "now": PINNED_NOW,
        "view": "prompt",
    }
    if real:
        body["tools"] = TOOLS
    return body


@dataclass
class Burst:
    attempted: int = 0
    acknowledged: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> body sent
    in_flight: list[dict[str, Any]] = field(default_factory=list)  # sent, never answered
    errors: list[str] = field(default_factory=list)  # failures before the kill
    kill_after_s: float = 0.0
    killed_with_left: int = 0  # writes not yet started when the server was killed
    survivors: list[int] = field(default_factory=list)  # group members alive after the kill


def burst_and_kill(
    server: Server, writes: int, clients: int, kill_at: int, run: str, big_template: str
) -> Burst:
    """`clients` threads write shares; at `kill_at` acknowledgements, SIGKILL the group."""
    burst = Burst()
    lock = threading.Lock()
    killed = threading.Event()
    reached = threading.Event()
    counter = iter(range(writes))

    def writer() -> None:
        client = Client(server.port, REQUEST_TIMEOUT_S)
        try:
            while not killed.is_set():
                with lock:
                    index = next(counter, None)
                    if index is None:
                        return
                    burst.attempted += 1
                body = share_body(run, index, big_template)
                try:
                    answer = client.post_json("/api/shares", body)
                except Exception as error:
                    with lock:
                        if killed.is_set():
                            burst.in_flight.append(body)
                        else:
                            burst.errors.append(f"#{index}: {type(error).__name__}: {error}")
                    return
                share_id = None
                if answer.status in (200, 201):
                    share_id = answer.json().get("id")
                with lock:
                    if share_id:
                        burst.acknowledged[share_id] = body
                        if len(burst.acknowledged) >= kill_at:
                            reached.set()
                    else:
                        burst.errors.append(f"#{index}: {answer.status} {answer.body[:200]!r}")
        finally:
            client.close()

    threads = [threading.Thread(target=writer, daemon=True) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    give_up = started + BURST_TIMEOUT_S
    # Until enough writes are acknowledged, or every writer stopped (on errors), or too long.
    while not reached.wait(0.05):
        if time.perf_counter() > give_up or not any(t.is_alive() for t in threads):
            print(f"warning: only {len(burst.acknowledged)} acknowledged when the kill came")
            break
    with lock:
        killed.set()  # from here on, a failed request is in flight at the kill, not an error
        burst.killed_with_left = writes - burst.attempted
    burst.survivors = server.kill9()
    burst.kill_after_s = time.perf_counter() - started
    for thread in threads:
        thread.join(timeout=REQUEST_TIMEOUT_S + 5)
    return burst


@dataclass
class Verification:
    verified: int = 0
    lost: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)
    in_flight_kept: int = 0
    write_after_restart: int = 0


def verify(server: Server, burst: Burst) -> Verification:
    """Read every acknowledged share back from the restarted server."""
    from app.shares.state import canonical_json, share_id
    from app.state import PlaygroundState

    def normalised(body: dict[str, Any]) -> dict[str, Any]:
        return PlaygroundState.from_json(body).to_json()

    result = Verification()
    client = Client(server.port, REQUEST_TIMEOUT_S)
    try:
        for sent_id, body in burst.acknowledged.items():
            answer = client.get(f"/s/{sent_id}.json")
            if answer.status != 200:
                result.lost.append(f"{sent_id}: {answer.status}")
                continue
            stored = answer.json()
            expected = normalised(body)
            wrong = [key for key in COMPARED if stored.get(key) != body[key]]
            if stored != expected:
                wrong.append("normalised state")
            if share_id(canonical_json(stored)) != sent_id:
                wrong.append("content id")
            if wrong:
                result.different.append(f"{sent_id}: {', '.join(wrong)} differ")
            else:
                result.verified += 1
        for body in burst.in_flight:
            expected_id = share_id(canonical_json(normalised(body)))
            result.in_flight_kept += client.get(f"/s/{expected_id}.json").status == 200
        # The database still takes writes after the crash.
        fresh = share_body(f"after-restart-{uuid.uuid4().hex[:8]}", 1, SMALL_TEMPLATE)
        result.write_after_restart = client.post_json("/api/shares", fresh).status
    finally:
        client.close()
    return result


def sqlite_file(data_dir: str, database_url: str) -> Path | None:
    """The SQLite file the server used, or None for another database (PostgreSQL)."""
    if not database_url:
        return Path(data_dir) / "playground.db"
    scheme, _, rest = database_url.partition("://")
    if scheme.lower() != "sqlite":
        return None
    # sqlite:///relative.db or sqlite:////absolute.db, relative to gunicorn's folder.
    return ROOT / rest[1:]


def sqlite_integrity(path: Path | None) -> str | None:
    """PRAGMA integrity_check of the SQLite database, or None when there is none."""
    if path is None or not path.exists():
        return None
    connection = sqlite3.connect(path)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


@dataclass
class DurabilityResult:
    burst: Burst
    check: Verification
    integrity: str | None
    restart_s: float

    @property
    def ok(self) -> bool:
        check = self.check
        return (
            not self.burst.errors
            and not check.lost
            and not check.different
            and check.verified == len(self.burst.acknowledged) > 0
            and check.write_after_restart in (200, 201)
            and self.integrity in (None, "ok")
        )


def run_durability(
    writes: int,
    clients: int,
    kill_fraction: float,
    database_url: str = "",
    workers: int = 2,
    threads: int = 4,
) -> DurabilityResult:
    """Burst, kill -9 mid-burst, restart on the same data, verify; always cleans up."""
    from tests.support.shared_data import TEMPLATES_DIR

    template_path = TEMPLATES_DIR / "Qwen-Qwen2.5-7B-Instruct.jinja"
    big_template = template_path.read_text(encoding="utf-8") if template_path.exists() else ""
    data_dir = tempfile.mkdtemp(prefix="playground-durability-")
    env = {"PLAYGROUND_WORKERS": str(workers), "PLAYGROUND_THREADS": str(threads)}
    if database_url:
        env["PLAYGROUND_DATABASE_URL"] = database_url
    run = uuid.uuid4().hex[:12]
    first = Server(env, data_dir=data_dir)
    second = Server(env, data_dir=data_dir)
    try:
        first.start()
        burst = burst_and_kill(
            first, writes, clients, max(1, int(writes * kill_fraction)), run, big_template
        )
        if burst.survivors:
            raise RuntimeError(f"processes left after kill -9 of the group: {burst.survivors}")
        restart_s = second.start()
        check = verify(second, burst)
        second.stop()
        integrity = sqlite_integrity(sqlite_file(data_dir, database_url))
    except BaseException:
        for server in (first, second):
            if server.process is not None:
                print(f"gunicorn log (tail):\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        first.close()
        second.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    return DurabilityResult(burst, check, integrity, restart_s)


def report(result: DurabilityResult) -> None:
    burst, check = result.burst, result.check
    print(
        f"burst: {burst.attempted} writes started; kill -9 of the process group after "
        f"{burst.kill_after_s:.2f} s with {burst.killed_with_left} writes not yet sent"
    )
    print(
        f"acknowledged: {len(burst.acknowledged)}; verified after restart: {check.verified}; "
        f"lost: {len(check.lost)}; different: {len(check.different)}; errors before the "
        f"kill: {len(burst.errors)}"
    )
    print(
        f"in flight at the kill (sent, no answer): {len(burst.in_flight)}, of which stored "
        f"anyway: {check.in_flight_kept} (either is correct)"
    )
    integrity = result.integrity or "n/a (not SQLite)"
    print(
        f"restart: /healthz after {result.restart_s:.1f} s; a new share after restart "
        f"answered {check.write_after_restart}; SQLite integrity_check: {integrity}"
    )
    for line in (burst.errors + check.lost + check.different)[:10]:
        print(f"  problem: {line}")
    print("result: " + ("PASS" if result.ok else "FAIL"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=4000, help="shares in the burst")
    parser.add_argument("--clients", type=int, default=8, help="writer threads")
    parser.add_argument(
        "--kill-at", type=float, default=0.5, help="fraction of writes acknowledged at the kill"
    )
    parser.add_argument(
        "--database-url", default="", help="PLAYGROUND_DATABASE_URL (default: SQLite in a temp dir)"
    )
    parser.add_argument("--workers", type=int, default=2, help="PLAYGROUND_WORKERS")
    parser.add_argument("--threads", type=int, default=4, help="PLAYGROUND_THREADS")
    args = parser.parse_args()
    started = time.perf_counter()
    where = (
        "PLAYGROUND_DATABASE_URL given" if args.database_url else "SQLite in a temporary data dir"
    )
    print(
        f"durability: {args.writes} unique shares from {args.clients} threads, kill -9 at "
        f"{args.kill_at:.0%} acknowledged; {where}; {args.workers} workers × {args.threads} threads"
    )
    result = run_durability(
        args.writes, args.clients, args.kill_at, args.database_url, args.workers, args.threads
    )
    report(result)
    print(f"bench wall time {time.perf_counter() - started:.1f} s")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
