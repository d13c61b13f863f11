"""Anonymous visitors cannot fill the storage: per-client write allowances (429 with a
Retry-After that is right), a cap on stored sources (507), expiry of sources nobody uses,
and shares that keep their source forever. Time is a clock the tests move."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import sqlite3
import struct
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask

from app.web.factory import create_app
from tests.support.postgres import fresh_postgres_url, postgres_url  # noqa: F401 (pytest fixtures)
from tests.support.server import NORMAL_RENDER, Server, start_gunicorn
from tests.support.shared_data import VOCAB_DIR, needs_shared

LLAMA_SPM = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
MIB = 1024 * 1024
HOUR, DAY = 3600.0, 86400.0
#: The write limits off, for the tests of the storage cap and expiry.
NO_RATE_LIMITS = {"WRITES_PER_MINUTE": 0, "WRITE_MB_PER_MINUTE": 0}


class Clock:
    """The time the quota reads, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def gguf(size: int) -> bytes:
    """A distinct GGUF header (no tensors) of `size` bytes: all of it is what is stored."""

    def text(value: bytes) -> bytes:
        return struct.pack("<Q", len(value)) + value

    def pair(key: bytes, value: bytes) -> bytes:
        return text(key) + struct.pack("<I", 8) + text(value)  # 8: a string

    fixed = b"GGUF" + struct.pack("<IQQ", 3, 0, 3)
    fixed += pair(b"general.architecture", b"llama") + pair(b"general.name", uuid.uuid4().bytes)
    padding = size - len(fixed) - len(pair(b"x.pad", b""))
    return fixed + pair(b"x.pad", b"p" * padding)


def source_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request) -> str:
    """A fresh database: the default SQLite file of the test's folder, or PostgreSQL."""
    return "" if request.param == "sqlite" else request.getfixturevalue("fresh_postgres_url")


@pytest.fixture()
def make_app(tmp_path) -> Iterator:
    """Applications on one database (as gunicorn workers or replicas), sharing one clock."""
    clock, made = Clock(), []

    def build(**config: object) -> Flask:
        application = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), **config})
        application.extensions["quota"].clock = clock
        made.append(application)
        return application

    build.clock = clock  # type: ignore[attr-defined]
    yield build
    for application in made:
        application.extensions["sandbox_pool"].close()
        application.extensions["database"].close()


def share(client, headers: dict[str, str] | None = None, size: int = 0, **environ: str):
    body = {"template": uuid.uuid4().hex + "x" * size, "messages": [], "now": "2024-01-01T00:00"}
    return client.post("/api/shares", json=body, headers=headers, environ_base=environ)


def upload(client, data: bytes):
    return client.post("/api/sources/gguf", data=data, content_type="application/octet-stream")


def retry_after(response) -> int:
    """The Retry-After of a 429, checked against the error body."""
    assert response.status_code == 429, response.get_data(as_text=True)
    seconds = int(response.headers["Retry-After"])
    assert response.json["error"]["retry_after"] == seconds >= 1
    return seconds


# --- writes per minute ----------------------------------------------------------------------


def test_a_client_that_writes_fast_waits_exactly_the_retry_after_it_is_told(make_app):
    client = make_app(WRITES_PER_MINUTE=3).test_client()
    for _ in range(3):
        assert share(client).status_code == 201
    refused = share(client)
    error = refused.json["error"]
    assert (error["type"], error["limit"]) == ("RateLimited", "writes_per_minute")
    assert "3 a minute" in error["message"]
    wait = retry_after(refused)
    make_app.clock.advance(wait - 1)
    assert share(client).status_code == 429  # a second early is still too early
    make_app.clock.advance(1)
    assert share(client).status_code == 201
    assert share(client).status_code == 429  # that wait paid for one write, not more


def test_the_allowance_is_shared_by_every_process_on_the_database(make_app, database_url):
    first = make_app(DATABASE_URL=database_url, WRITES_PER_MINUTE=3).test_client()
    second = make_app(DATABASE_URL=database_url, WRITES_PER_MINUTE=3).test_client()
    assert share(first).status_code == 201
    assert share(second).status_code == 201
    assert share(first).status_code == 201
    wait = retry_after(share(second))  # this process never refused anyone before
    make_app.clock.advance(wait - 1)
    assert share(first).status_code == 429
    make_app.clock.advance(1)
    assert share(first).status_code == 201


def test_another_client_is_not_slowed_down(make_app):
    client = make_app(WRITES_PER_MINUTE=1).test_client()
    assert share(client).status_code == 201
    assert share(client).status_code == 429
    assert share(client, REMOTE_ADDR="198.51.100.2").status_code == 201
    assert share(client, REMOTE_ADDR="198.51.100.2").status_code == 429


WRITES = {
    "share": lambda c: c.post("/api/shares", json={"template": "x", "messages": []}),
    "share button": lambda c: c.post("/fragments/share", data={"template": "x"}),
    "gguf": lambda c: upload(c, b"GGUF"),
    "hf": lambda c: c.post(
        "/api/sources/hf",
        data={"f": (io.BytesIO(b'{"chat_template": "x"}'), "tokenizer_config.json")},
        content_type="multipart/form-data",
    ),
}


@pytest.mark.parametrize("endpoint", WRITES)
def test_every_write_counts_whatever_its_outcome_and_reads_do_not(make_app, endpoint):
    client = make_app(WRITES_PER_MINUTE=1).test_client()
    assert WRITES[endpoint](client).status_code != 429
    for other in WRITES.values():  # one allowance for all writes
        assert other(client).status_code == 429
    render = client.post("/api/render", json=NORMAL_RENDER)
    assert render.status_code == 200, render.json
    assert client.get("/api/library").status_code == 200


def test_a_refused_share_button_says_why_in_the_json_the_page_shows(make_app):
    client = make_app(WRITES_PER_MINUTE=1).test_client()
    client.post("/fragments/share", data={"template": "x"})
    refused = client.post("/fragments/share", data={"template": "y"})
    assert refused.status_code == 429 and "Try again in" in refused.json["error"]["message"]


def test_a_refused_upload_larger_than_a_json_body_is_still_429(make_app):
    client = make_app(WRITES_PER_MINUTE=1, MAX_BODY_MB=1).test_client()
    assert share(client).status_code == 201
    assert upload(client, bytes(16 * MIB)).status_code == 429


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_allowance(make_app):
    client = make_app(WRITES_PER_MINUTE=1, TRUSTED_PROXIES=1).test_client()
    assert share(client, {"X-Forwarded-For": "203.0.113.1"}).status_code == 201
    assert share(client, {"X-Forwarded-For": "203.0.113.1"}).status_code == 429
    # An entry forged in front of what the proxy appended buys nothing.
    assert share(client, {"X-Forwarded-For": "10.0.0.9, 203.0.113.1"}).status_code == 429
    assert share(client, {"X-Forwarded-For": "203.0.113.2"}).status_code == 201
    # An IPv6 /64 is one client, however many addresses it uses.
    assert share(client, {"X-Forwarded-For": "2001:db8:1:2::1"}).status_code == 201
    assert share(client, {"X-Forwarded-For": "2001:db8:1:2::ff"}).status_code == 429


def test_without_a_trusted_proxy_forwarded_for_buys_no_new_allowance(make_app):
    client = make_app(WRITES_PER_MINUTE=1).test_client()
    assert share(client, {"X-Forwarded-For": "203.0.113.1"}).status_code == 201
    assert share(client, {"X-Forwarded-For": "203.0.113.2"}).status_code == 429


# --- bytes stored per minute ------------------------------------------------------------------


def test_stored_bytes_are_limited_and_only_new_bytes_count(make_app):
    app = make_app(WRITES_PER_MINUTE=0, WRITE_MB_PER_MINUTE=1, WRITE_BURST_MB=2)
    client = app.test_client()
    first, second, third = (gguf(900 * 1024) for _ in range(3))
    assert upload(client, first).json["id"] == source_id(first)
    assert upload(client, second).status_code == 200
    refused = upload(client, third)
    assert refused.json["error"]["limit"] == "write_mb_per_minute"
    wait = retry_after(refused)
    assert client.get(f"/api/sources/{source_id(third)}").status_code == 404  # not stored
    assert upload(client, first).status_code == 200  # stored already: nothing new to pay
    make_app.clock.advance(wait - 1)
    assert upload(client, third).status_code == 429
    make_app.clock.advance(1)
    assert upload(client, third).status_code == 200
    assert client.get(f"/api/sources/{source_id(third)}").status_code == 200


def test_share_bytes_count_too(make_app):
    app = make_app(WRITES_PER_MINUTE=0, WRITE_MB_PER_MINUTE=1, WRITE_BURST_MB=1)
    client = app.test_client()
    body = {"template": "a" * 600_000, "messages": [], "now": "2024-01-01T00:00:00"}
    assert client.post("/api/shares", json=body).status_code == 201
    assert share(client, size=600_000).json["error"]["limit"] == "write_mb_per_minute"
    assert client.post("/api/shares", json=body).status_code == 200  # the same share again


def test_a_source_larger_than_one_allowance_is_413(make_app):
    client = make_app(WRITE_MB_PER_MINUTE=1, WRITE_BURST_MB=0.5).test_client()
    refused = upload(client, gguf(600 * 1024))
    assert refused.status_code == 413
    error = refused.json["error"]
    assert error["limit"] == "write_burst_mb" and error["max_bytes"] == MIB // 2
    assert "PLAYGROUND_WRITE_BURST_MB" in error["message"]


# --- the storage cap and expiry ---------------------------------------------------------------


@pytest.fixture()
def storage_app(make_app, database_url) -> Flask:
    """A 2 MiB cap on sources, a 30-day lifetime, no write limits."""
    return make_app(DATABASE_URL=database_url, SOURCE_STORAGE_MB=2, **NO_RATE_LIMITS)


def test_a_full_store_gives_507_until_idle_sources_can_make_room(storage_app, make_app):
    client, clock = storage_app.test_client(), make_app.clock
    kept, oldest, idle = (gguf(600 * 1024) for _ in range(3))
    for data in (kept, oldest, idle):
        assert upload(client, data).status_code == 200
        clock.advance(10)
    late = gguf(600 * 1024)
    refused = upload(client, late)
    assert refused.status_code == 507
    error = refused.json["error"]
    assert (error["type"], error["limit"]) == ("StorageFull", "source_storage_mb")
    assert error["max_bytes"] == 2 * MIB and error["need_bytes"] == len(late)
    assert "PLAYGROUND_SOURCE_STORAGE_MB" in error["message"]

    clock.advance(HOUR)
    assert client.get(f"/api/sources/{source_id(kept)}").status_code == 200  # a use
    clock.advance(1.5 * HOUR)  # the others idle for 2.5 hours, `kept` for 1.5
    assert upload(client, late).status_code == 200
    assert client.get(f"/api/sources/{source_id(oldest)}").status_code == 404
    for data in (kept, idle, late):
        assert client.get(f"/api/sources/{source_id(data)}").status_code == 200


def test_a_source_refused_for_lack_of_room_costs_the_client_nothing(make_app):
    limits = {"WRITE_MB_PER_MINUTE": 1, "WRITE_BURST_MB": 2, "SOURCE_STORAGE_MB": 1}
    client = make_app(WRITES_PER_MINUTE=0, **limits).test_client()
    assert upload(client, gguf(600 * 1024)).status_code == 200
    # Charged and refused three times would be more than the 1.4 MiB left: a 429.
    statuses = [upload(client, gguf(600 * 1024)).status_code for _ in range(3)]
    assert statuses == [507, 507, 507]


def test_a_share_refused_for_lack_of_room_costs_the_client_nothing(make_app, database_url):
    limits = {"WRITE_MB_PER_MINUTE": 1, "WRITE_BURST_MB": 2, "SHARE_STORAGE_MB": 0.5}
    client = make_app(DATABASE_URL=database_url, WRITES_PER_MINUTE=0, **limits).test_client()

    def hex_share(kib: int, seed: int):
        # Hex digits: zlib halves them, no more. Charged at their text's size.
        text = hashlib.shake_256(str(seed).encode()).hexdigest(kib * 1024 // 2)
        body = {"template": text, "messages": [], "now": "2024-01-01T00:00"}
        return client.post("/api/shares", json=body)

    assert hex_share(800, 0).status_code == 201  # ~400 KiB of the 512 stored
    # 500 KiB of text each, 1.5 MiB if charged and refused three times: more than the
    # 1.2 MiB left of the allowance, so a 429.
    assert [hex_share(500, seed).status_code for seed in (1, 2, 3)] == [507, 507, 507]
    assert hex_share(20, 4).status_code == 201  # a small one still fits


@needs_shared
def test_a_shared_source_outlives_expiry_and_the_cap_and_its_share_still_renders(
    storage_app, make_app, database_url
):
    client, clock = storage_app.test_client(), make_app.clock
    pinned = upload(client, LLAMA_SPM.read_bytes()).json["id"]
    loose = gguf(100 * 1024)
    upload(client, loose)
    body = {
        "template": "{{ messages[0].content }}",
        "messages": [{"role": "user", "content": "Hello world"}],
        "source": {"id": pinned, "kind": "gguf", "file_name": "llama.gguf"},
    }
    link = client.post("/api/shares", json=body).json["url"]
    clock.advance(1000 * DAY)
    assert share(client).status_code == 201  # a write: expired sources go
    assert client.get(f"/api/sources/{source_id(loose)}").status_code == 404
    # Fill the cap three times over: idle sources make room, never the shared one.
    for _ in range(3):
        statuses = [upload(client, gguf(300 * 1024)).status_code for _ in range(6)]
        assert statuses.count(200) >= 3 and statuses[-1] == 507
        clock.advance(3 * HOUR)

    # A process that has never seen the source opens the link and tokenizes.
    fresh = make_app(DATABASE_URL=database_url, **NO_RATE_LIMITS).test_client()
    page = fresh.get(link)
    assert page.status_code == 200
    # Its Prompt view counts no tokens (opening the Tokens view does), but knows the source.
    assert 'id="tokens-later"' in page.get_data(as_text=True)
    tokens = fresh.post("/api/tokenize", json={"source": pinned, "text": "Hello world"})
    assert tokens.status_code == 200 and tokens.json["count"] >= 2


def test_a_failed_expiry_does_not_fail_the_write_and_is_tried_again(make_app, monkeypatch):
    app = make_app(**NO_RATE_LIMITS)
    database, calls = app.extensions["database"], []

    def locked(*args: object) -> list[str]:
        calls.append(args)
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(database, "expire_sources", locked)
    client = app.test_client()
    assert share(client).status_code == 201
    make_app.clock.advance(DAY)
    assert share(client).status_code == 201
    assert len(calls) == 2


@needs_shared
def test_a_source_in_memory_still_serves_when_its_use_cannot_be_written(make_app, monkeypatch):
    app = make_app(**NO_RATE_LIMITS)
    client, database = app.test_client(), app.extensions["database"]
    data = LLAMA_SPM.read_bytes()
    assert upload(client, data).status_code == 200
    calls = []

    def down(*args: object) -> bool:
        calls.append(args)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(database, "touch_source", down)
    make_app.clock.advance(2 * HOUR)
    for _ in range(3):
        assert client.get(f"/api/sources/{source_id(data)}").status_code == 200
    assert len(calls) == 1  # asked once, not on every use


USES = {
    "read": lambda c, data: c.get(f"/api/sources/{source_id(data)}"),
    "tokenize": lambda c, data: c.post(
        "/api/tokenize", json={"source": source_id(data), "text": "Hello"}
    ),
    "load": upload,
    "page": lambda c, data: c.post(
        "/fragments/output",
        data={"template": "{{ 1 }}", "messages": "[]", "source_id": source_id(data)},
    ),
}


@needs_shared
@pytest.mark.parametrize("use", USES)
def test_a_use_keeps_a_source_for_another_lifetime(make_app, use):
    data = LLAMA_SPM.read_bytes()
    app = make_app(SOURCE_TTL_DAYS=30, **NO_RATE_LIMITS)
    client, database = app.test_client(), app.extensions["database"]
    assert upload(client, data).status_code == 200
    make_app.clock.advance(20 * DAY)
    assert USES[use](client, data).status_code == 200
    make_app.clock.advance(20 * DAY)  # 40 days after the upload, 20 after the use
    share(client)  # a write: expired sources go
    assert database.source_exists(source_id(data))  # looked up without using it
    make_app.clock.advance(11 * DAY)  # 31 days after the use
    share(client)
    assert not database.source_exists(source_id(data))
    # Gone for every process, even this one that had it in memory.
    assert client.get(f"/api/sources/{source_id(data)}").status_code == 404
    assert upload(client, data).status_code == 200  # and loaded again, stored again
    assert client.get(f"/api/sources/{source_id(data)}").status_code == 200


# --- a live attack on gunicorn ------------------------------------------------------------------

#: Two workers, a small allowance and cap, one trusted proxy (so clients can be many).
ATTACKED = {
    "PLAYGROUND_WORKERS": "2",
    "PLAYGROUND_THREADS": "4",
    "PLAYGROUND_TRUSTED_PROXIES": "1",
    "PLAYGROUND_WRITES_PER_MINUTE": "600",
    "PLAYGROUND_WRITE_MB_PER_MINUTE": "6",
    "PLAYGROUND_WRITE_BURST_MB": "8",
    "PLAYGROUND_SOURCE_STORAGE_MB": "24",
}
ATTACK_SECONDS = 4.0


def flood(server: Server, address: Callable[[], str]) -> Callable[[], list[tuple]]:
    """An attacker: distinct 1 MiB sources and 256 KiB shares, as fast as answered, each
    request from the client `address()` names."""

    def attack() -> list[tuple]:
        answers = []
        deadline = time.monotonic() + ATTACK_SECONDS
        while time.monotonic() < deadline:
            headers = {"X-Forwarded-For": address(), "Content-Type": "application/octet-stream"}
            status, answer, _ = server.send("POST", "/api/sources/gguf", gguf(MIB), headers)
            answers.append(("source", status, answer.get("Retry-After"), time.monotonic()))
            body = json.dumps({"template": "s" * 256 * 1024 + uuid.uuid4().hex, "messages": []})
            headers["Content-Type"] = "application/json"
            status, answer, _ = server.send("POST", "/api/shares", body.encode(), headers)
            answers.append(("share", status, answer.get("Retry-After"), time.monotonic()))
        return answers

    return attack


def attack(server: Server, address: Callable[[], str]) -> list[tuple]:
    """Four attackers while a normal render must stay fast and no worker may die."""
    return list(itertools.chain.from_iterable(server.survives(flood(server, address), 4)))


def stored_bytes(data_dir: Path) -> tuple[int, int]:
    """Bytes of sources and of shares in a server's database, read from outside."""
    with sqlite3.connect(data_dir / "playground.db") as db:
        sources = db.execute("SELECT COALESCE(SUM(length(data)), 0) FROM sources").fetchone()
        shares = db.execute(
            "SELECT COALESCE(SUM(length(state) + COALESCE(length(packed), 0)), 0) FROM shares"
        ).fetchone()
    return sources[0], shares[0]


@pytest.mark.timing
def test_a_storage_attack_is_held_to_the_allowance_and_the_cap(tmp_path):
    server = start_gunicorn({**ATTACKED, "PLAYGROUND_DATA_DIR": str(tmp_path)})
    try:
        for _ in range(4):  # start the sandbox workers of both gunicorn workers
            assert server.post("/api/render", NORMAL_RENDER)[0] == 200
        # One client from four threads, spread over both workers by the kernel.
        started = time.monotonic()
        answers = attack(server, lambda: "203.0.113.7")
        minutes = (max(a[3] for a in answers) - started) / 60
        refused = [a for a in answers if a[1] == 429]
        assert refused and all(int(a[2]) >= 1 for a in refused)
        sources, shares = stored_bytes(tmp_path)
        # One allowance for the client, not one per worker process.
        assert sources + shares <= (8 + 6 * minutes) * MIB

        # Many clients: each has an allowance, but sources stop at the cap.
        count = itertools.count()  # next() on it is atomic: threads share it
        answers = attack(server, lambda: f"198.51.{(n := next(count)) // 250}.{n % 250 + 1}")
        assert any(a[:2] == ("source", 507) for a in answers)
        sources, _ = stored_bytes(tmp_path)
        assert sources <= 24 * MIB
    finally:
        server.close()


def test_a_refused_upload_gets_its_429_not_a_reset_connection(tmp_path):
    """The page's 16 MiB upload, refused: the client is still sending when the answer is
    ready, so the body is read to its end and the answer reaches it."""
    env = {"PLAYGROUND_WORKERS": "1", "PLAYGROUND_WRITES_PER_MINUTE": "1"}
    server = start_gunicorn({**env, "PLAYGROUND_DATA_DIR": str(tmp_path)})
    try:
        assert server.post("/api/shares", {"template": "x", "messages": []})[0] == 201
        for _ in range(3):  # refused by the database, then by the process's memory
            headers = {"Content-Type": "application/octet-stream"}
            status, answer, _ = server.send("POST", "/api/sources/gguf", bytes(16 * MIB), headers)
            assert status == 429 and int(answer["Retry-After"]) > 1
    finally:
        server.close()
