"""Several replicas: no state in the web process, everything in one shared database.

The storage contract runs on SQLite and on a real PostgreSQL server (`tests.support.postgres`);
then two applications, and two gunicorn servers, that share only the PostgreSQL database
must each open what the other stored.
"""

from __future__ import annotations

import json
import threading
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from app.shares.store import ShareStore
from app.storage import Database, StoredSource, open_database
from app.storage.postgres import PostgresDatabase
from app.storage.sqlite import SqliteDatabase
from app.web.factory import create_app
from tests.support.postgres import postgres_url  # noqa: F401 (a pytest fixture)
from tests.support.server import Server, start_gunicorn
from tests.support.shared_data import VOCAB_DIR, needs_shared

LLAMA_SPM = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
HELLO = [{"role": "user", "content": "Hello!"}]


def unique(prefix: str = "") -> str:
    """Something no earlier test wrote: the PostgreSQL database lives for the whole run."""
    return prefix + uuid.uuid4().hex


def fake_id(length: int) -> str:
    return uuid.uuid4().hex.ljust(length, "0")[:length]


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> Iterator[Database]:
    """A fresh store object on each backend (the PostgreSQL data outlives it)."""
    if request.param == "sqlite":
        db: Database = SqliteDatabase(tmp_path / "contract.db")
    else:
        db = PostgresDatabase(request.getfixturevalue("postgres_url"))
    yield db
    db.close()


def reopen(db: Database) -> Database:
    """A second object on the same database: new connections, nothing cached."""
    if isinstance(db, SqliteDatabase):
        return SqliteDatabase(db.path)
    assert isinstance(db, PostgresDatabase)
    return PostgresDatabase(db.conninfo)


# --- the storage contract ----------------------------------------------------------------


def test_put_and_get_a_share(database):
    store = ShareStore(database)
    state = {"template": unique("ünïcode ✓ "), "messages": HELLO}
    share = store.put(state)
    assert store.get(share) == state
    assert store.exists(share)
    assert store.get(fake_id(24)) is None and not store.exists(fake_id(24))
    assert store.get("../etc") is None and not store.exists("x")
    other = reopen(database)
    assert ShareStore(other).get(share) == state
    other.close()


def test_a_share_is_immutable(database):
    share = fake_id(24)
    database.put_share(share, '{"template":"first"}')
    database.put_share(share, '{"template":"second"}')  # ignored, not an error
    assert database.get_share(share) == '{"template":"first"}'


def test_the_same_state_gets_the_same_id(database):
    store = ShareStore(database)
    template = unique()
    first = store.put({"template": template, "messages": HELLO, "now": "2024-01-01T00:00:00"})
    again = store.put({"now": "2024-01-01T00:00:00", "messages": HELLO, "template": template})
    assert first == again
    assert store.get(first)["template"] == template


def test_put_and_get_a_source(database):
    source = fake_id(64)
    data = bytes(range(256)) * 3 + b"\x00GGUF\x00"  # every byte value, NULs included
    assert database.get_source(source) is None
    database.put_source(source, "gguf", data)
    database.put_source(source, "hf", b"other")  # ignored: the first write wins
    assert database.get_source(source) == StoredSource("gguf", data)
    other = reopen(database)
    assert other.get_source(source) == StoredSource("gguf", data)
    other.close()


def test_concurrent_puts_from_8_threads_are_all_readable(database):
    start = threading.Barrier(8)
    run = unique()

    def worker(thread: int) -> list[tuple[str, dict]]:
        start.wait()
        store = ShareStore(database)
        done = []
        for n in range(20):
            state = {"template": f"{run}-{thread}-{n}", "messages": []}
            done.append((store.put(state), state))
            database.put_source(f"{run}-{thread}-{n}", "hf", f"{thread}-{n}".encode())
        return done

    with ThreadPoolExecutor(8) as pool:
        results = [pair for batch in pool.map(worker, range(8)) for pair in batch]
    assert len({share for share, _ in results}) == 160
    reopened = reopen(database)
    store = ShareStore(reopened)
    for share, state in results:
        assert store.get(share) == state
    for thread in range(8):
        stored = reopened.get_source(f"{run}-{thread}-19")
        assert stored == StoredSource("hf", f"{thread}-19".encode())
    reopened.close()


def test_a_dropped_postgres_connection_is_replaced(postgres_url):  # noqa: F811
    db = PostgresDatabase(postgres_url)
    share = fake_id(24)
    db.put_share(share, "{}")
    dropped = db._connection()
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        # What a server restart or a failover does to every open connection.
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert db.get_share(share) == "{}"
    assert dropped.closed and db._connection() is not dropped
    db.close()


def test_a_postgres_url_is_checked_but_not_opened(tmp_path):
    # Port 1 on loopback: nothing listens, so any connection attempt would fail here.
    db = open_database("postgresql://user:secret@127.0.0.1:1/db", tmp_path)
    assert isinstance(db, PostgresDatabase)
    for url in ("mysql://user:secret@h/db", "postgresql://user:secret@h/%zz"):
        with pytest.raises(ValueError, match="PLAYGROUND_DATABASE_URL") as error:
            open_database(url, tmp_path)
        assert "secret" not in str(error.value)


# --- two applications on one PostgreSQL database ------------------------------------------


@pytest.fixture()
def two_apps(postgres_url, tmp_path):  # noqa: F811 (the fixture imported above)
    """Two applications with their own data folders; only the database is shared."""
    made = [
        create_app(
            {"TESTING": True, "DATA_DIR": str(tmp_path / name), "DATABASE_URL": postgres_url}
        )
        for name in ("a", "b")
    ]
    yield made
    for application in made:
        application.extensions["sandbox_pool"].close()
        application.extensions["database"].close()


def test_a_share_made_on_one_app_opens_on_the_other(two_apps, tmp_path):
    first, second = (application.test_client() for application in two_apps)
    template = unique("{{ messages[0].content }} ")
    body = {"template": template, "messages": HELLO, "now": "2024-01-01T00:00:00"}
    created = first.post("/api/shares", json=body)
    assert created.status_code == 201
    share = created.json["id"]
    fetched = second.get(f"/s/{share}.json")
    assert fetched.status_code == 200
    assert fetched.json["template"] == template
    page = second.get(f"/s/{share}")
    assert page.status_code == 200
    assert "Hello!" in page.get_data(as_text=True)
    assert second.post("/api/shares", json=body).status_code == 200  # already shared
    # Nothing was written to either data folder: the database holds it all.
    assert not any(Path(tmp_path).rglob("*.db")) and not any(Path(tmp_path).rglob("sources"))


@needs_shared
def test_a_source_uploaded_to_one_app_tokenizes_on_the_other(two_apps):
    first, second = two_apps
    uploaded = first.test_client().post(
        "/api/sources/gguf", data=LLAMA_SPM.read_bytes(), content_type="application/octet-stream"
    )
    assert uploaded.status_code == 200
    source = uploaded.json["id"]
    assert second.extensions["source_store"]._remembered(source) is None  # never seen
    body = {"source": source, "text": "Hello world", "add_special": True}
    there = second.test_client().post("/api/tokenize", json=body)
    here = first.test_client().post("/api/tokenize", json=body)
    assert there.status_code == 200
    assert there.json == here.json and there.json["count"] >= 3
    described = second.test_client().get(f"/api/sources/{source}")
    assert described.status_code == 200
    assert described.json["special_tokens"]["bos_token"] == "<s>"


# --- two gunicorn servers on one PostgreSQL database ----------------------------------------


def fetch(server: Server, path: str, data: bytes | None = None) -> tuple[int, dict]:
    """GET (or POST raw bytes) and read the JSON answer."""
    request = urllib.request.Request(server.url + path, data=data)
    if data is not None:
        request.add_header("Content-Type", "application/octet-stream")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.load(response)


@needs_shared
def test_two_gunicorn_servers_share_one_database(postgres_url):  # noqa: F811
    env = {"PLAYGROUND_DATABASE_URL": postgres_url, "PLAYGROUND_WORKERS": "1"}
    servers = [start_gunicorn({**env, "PLAYGROUND_THREADS": "2"}) for _ in range(2)]
    try:
        a, b = servers
        body = {"template": unique("{{ messages }} "), "messages": HELLO}
        status, created = a.post("/api/shares", body)
        assert status == 201
        status, state = fetch(b, f"/s/{created['id']}.json")
        assert (status, state["template"]) == (200, body["template"])
        assert b.get(f"/s/{created['id']}") == 200

        status, source = fetch(a, "/api/sources/gguf", LLAMA_SPM.read_bytes())
        assert status == 200
        status, tokens = b.post("/api/tokenize", {"source": source["id"], "text": "Hi"})
        assert status == 200 and tokens["count"] >= 1
    finally:
        for server in servers:
            server.close()
