"""Share links: content ids, immutability, the JSON API, limits and SQLite durability."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.shares import store as store_module
from app.shares.state import canonical_json, share_id
from app.shares.store import ShareStore, database_path
from app.state import PlaygroundState
from app.web.factory import create_app

HELLO = [{"role": "user", "content": "Hello!"}]

#: A state already in normal form: every field written out, `now` given.
FULL = {
    "template": "{% for m in messages %}{{ m.content }}{% endfor %}",
    "messages": HELLO,
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "documents": [{"title": "t", "text": "ünïcode ✓"}],
    "add_generation_prompt": True,
    "continue_final_message": False,
    "special_tokens": {"bos_token": "<s>"},
    "kwargs": {"enable_thinking": False, "n": 1.5},
    "now": "2024-07-26T10:00:00",
    "compare_template": "{{ messages[0].content }}",
    "source": {"id": "a" * 64, "kind": "gguf", "file_name": "m.gguf", "template_name": None},
    "engine": "llama.cpp",
    "view": "tokens",
}


@pytest.fixture()
def make_app(tmp_path):
    """Build extra applications (their own config); their sandbox pools are closed after."""
    made = []

    def build(**config):
        application = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), **config})
        made.append(application)
        return application

    yield build
    for application in made:
        application.extensions["sandbox_pool"].close()


def post(client, body):
    # As JSON text with the keys in the order given: the test client's `json=` sorts them.
    return client.post("/api/shares", data=json.dumps(body), content_type="application/json")


def normalise_state(body: dict) -> dict:
    """The JSON form a share stores for `body` (with its `now`)."""
    return PlaygroundState.from_json(body).to_json()


# --- ids --------------------------------------------------------------------------------


def test_same_state_gives_same_id_whatever_the_key_order_or_nulls(client):
    first = post(client, {"template": "x", "messages": HELLO, "now": "2024-01-01T00:00:00"})
    reordered = {"now": "2024-01-01T00:00:00", "messages": HELLO, "template": "x", "tools": None}
    second = post(client, reordered)
    assert first.json["id"] == second.json["id"]
    assert first.json["url"] == f"/s/{first.json['id']}"
    assert len(first.json["id"]) == 24


def test_one_character_changes_the_id(client):
    base = {"template": "abc", "messages": HELLO, "now": "2024-01-01T00:00:00"}
    changed = {**base, "template": "abd"}
    assert post(client, base).json["id"] != post(client, changed).json["id"]


def test_id_is_sha256_of_the_canonical_json():
    state = normalise_state(FULL)
    text = canonical_json(state)
    assert text.startswith('{"add_generation_prompt":true,')
    assert "ünïcode ✓" in text  # not \u-escaped
    assert share_id(text) == hashlib.sha256(text.encode()).hexdigest()[:24]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=5))
def test_top_level_order_never_changes_the_id_and_nested_order_does(kwargs):
    body = {"template": "t", "messages": HELLO, "now": "2024-01-01T00:00:00", "kwargs": kwargs}
    flipped = dict(reversed(list(body.items())))
    text = canonical_json(normalise_state(body))
    assert share_id(text) == share_id(canonical_json(normalise_state(flipped)))
    assert normalise_state(body) == json.loads(text)
    # Templates print the kwargs in their order (`tojson`), so another order is another
    # state, with another id.
    reversed_kwargs = dict(reversed(list(kwargs.items())))
    other = share_id(canonical_json(normalise_state({**body, "kwargs": reversed_kwargs})))
    assert (other == share_id(text)) == (list(reversed_kwargs) == list(kwargs))


# --- API --------------------------------------------------------------------------------


def test_round_trip_is_exact(client):
    created = post(client, FULL)
    assert created.status_code in (200, 201)
    fetched = client.get(f"/s/{created.json['id']}.json")
    assert fetched.status_code == 200
    assert fetched.json == FULL
    # Every value the user typed comes back with its keys in the order sent.
    stored = json.loads(fetched.get_data(as_text=True))
    typed = FULL.keys() - {"source"}  # the source summary has its own fixed order
    assert {key: json.dumps(stored[key]) for key in typed} == {
        key: json.dumps(FULL[key]) for key in typed
    }
    assert "immutable" in fetched.headers["Cache-Control"]


def test_new_share_is_201_and_the_same_again_is_200(client):
    body = {"template": "status", "messages": HELLO, "now": "2024-02-02T00:00:00"}
    assert post(client, body).status_code == 201
    assert post(client, body).status_code == 200


def test_missing_now_is_pinned_to_the_time_of_sharing(client):
    created = post(client, {"template": "clock", "messages": HELLO})
    state = client.get(f"/s/{created.json['id']}.json").json
    pinned = datetime.fromisoformat(state["now"])
    assert abs((datetime.now() - pinned).total_seconds()) < 60
    assert "tools" not in state and state["add_generation_prompt"] is False


def test_unknown_and_malformed_ids_are_404(client):
    for share in ("0" * 24, "nothex", "A" * 24, "0" * 25):
        response = client.get(f"/s/{share}.json")
        assert response.status_code == 404, share
        assert response.json["error"]["type"] == "NotFound"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"source": {"id": "s", "kind": 3}}, "source.kind"),
        ({"source": {"id": "s", "kind": "zip"}}, "source.kind"),
        ({"source": {"kind": "hf"}}, "source.id"),
        ({"source": {"id": "s", "kind": "hf", "file_name": 1}}, "source.file_name"),
        ({"source": {"id": "s", "kind": "hf", "template_name": []}}, "source.template_name"),
        ({"source": "abc"}, "source"),
        ({"compare_template": 5}, "compare_template"),
        ({"engine": True}, "engine"),
        ({"view": {}}, "view"),
        ({"special_tokens": {"bos_token": 1}}, "special_tokens.bos_token"),
        ({"template": None}, "template"),
        ({"now": "yesterday"}, "now"),
    ],
)
def test_malformed_body_is_400_naming_the_field(client, change, field):
    response = post(client, {"template": "x", "messages": HELLO, **change})
    assert response.status_code == 400
    assert response.json["error"]["field"] == field


def test_non_json_values_are_400(client):
    raw = b'{"template": "x", "messages": [], "kwargs": {"a": NaN}}'
    response = client.post("/api/shares", data=raw, content_type="application/json")
    assert response.status_code == 400
    assert "NaN" in response.json["error"]["message"]


def test_over_the_cap_is_413_counting_utf8_bytes(make_app):
    client = make_app(SHARE_MAX_KB=1).test_client()
    body = {"template": "", "messages": [], "now": "2024-01-01T00:00:00"}
    assert post(client, {**body, "template": "a" * 600}).status_code == 201
    # 600 characters again, but 1,200 bytes in UTF-8.
    response = post(client, {**body, "template": "é" * 600})
    assert response.status_code == 413
    error = response.json["error"]
    assert error["type"] == "PayloadTooLarge"
    assert error["max_bytes"] == 1024 and error["size_bytes"] > 1200


def random_text(size: int, seed: int) -> str:
    """Text zlib cannot shrink much: what an attacker filling the storage would send."""
    return hashlib.shake_256(str(seed).encode()).hexdigest(size // 2)


def test_shares_past_the_total_cap_are_507_and_every_stored_one_stays(make_app):
    # Shares had no total cap: one address could store 16 MB a minute, forever.
    app = make_app(SHARE_STORAGE_MB=0.25, WRITES_PER_MINUTE=0, WRITE_MB_PER_MINUTE=0)
    client = app.test_client()
    body = {"messages": HELLO, "now": "2024-01-01T00:00:00"}
    made, refused = [], None
    for seed in range(20):
        response = post(client, {**body, "template": random_text(30_000, seed)})
        if response.status_code != 201:
            refused = response
            break
        made.append((response.json["id"], seed))
    assert refused is not None and 5 <= len(made) < 20, len(made)
    error = refused.json["error"]
    assert (refused.status_code, error["type"], error["limit"]) == (
        507,
        "StorageFull",
        "share_storage_mb",
    )
    assert "PLAYGROUND_SHARE_STORAGE_MB" in error["message"]
    assert error["max_bytes"] == 256 * 1024 and error["used_bytes"] <= error["max_bytes"]
    # Every share acknowledged is there, whole; one shared again is still 200.
    for share, seed in made:
        assert client.get(f"/s/{share}.json").json["template"] == random_text(30_000, seed)
    again = post(client, {**body, "template": random_text(30_000, made[0][1])})
    assert (again.status_code, again.json["id"]) == (200, made[0][0])
    assert app.extensions["database"].share_usage().count == len(made)


# --- storage ----------------------------------------------------------------------------


def test_shares_are_immutable_even_on_an_id_collision(tmp_path, monkeypatch):
    store = ShareStore(tmp_path / "s.db")
    first = store.put({"template": "first"})
    monkeypatch.setattr(store_module, "share_id", lambda _: first)  # force a collision
    assert store.put({"template": "second"}) == first
    assert store.get(first) == {"template": "first"}


def test_a_second_app_on_the_same_database_reads_the_share(make_app, tmp_path):
    url = f"sqlite:///{tmp_path / 'nested' / 'shared.db'}"  # absolute: four slashes
    created = post(make_app(DATABASE_URL=url).test_client(), FULL)
    assert created.status_code == 201
    reader = make_app(DATABASE_URL=url).test_client()
    assert reader.get(f"/s/{created.json['id']}.json").json == FULL


def test_default_database_is_in_the_data_folder_and_made_on_first_use(make_app, tmp_path):
    application = make_app(DATA_DIR=str(tmp_path / "data"))
    assert not (tmp_path / "data" / "playground.db").exists()  # nothing at app creation
    assert post(application.test_client(), FULL).status_code == 201
    assert (tmp_path / "data" / "playground.db").is_file()


def test_wal_mode_and_full_sync_are_on(tmp_path):
    store = ShareStore(tmp_path / "wal.db")
    store.put({"template": "wal"})
    with sqlite3.connect(tmp_path / "wal.db") as outside:
        assert outside.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.database.connection().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_processes_that_open_a_new_file_together_all_start(tmp_path):
    # Workers starting at once on a new file: SQLite refuses the switch to WAL with
    # "database is locked", at once, to one of them in about 30 rounds of 8 here.
    for round_number in range(200):
        path = tmp_path / f"new-{round_number}.db"
        start = threading.Barrier(8)

        def open_and_read(_: int, path: Path = path, start: threading.Barrier = start) -> int:
            store = ShareStore(path)  # a store of its own: as another process would
            start.wait()
            try:
                return store.database.share_usage().count
            finally:
                store.database.close()

        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(open_and_read, range(8))) == [0] * 8


def test_concurrent_puts_from_8_threads_are_all_readable(tmp_path):
    store = ShareStore(tmp_path / "busy.db")  # fresh: the threads also race to create it
    start = threading.Barrier(8)

    def worker(thread: int) -> list[tuple[str, dict]]:
        start.wait()
        states = [{"template": f"{thread}-{n}", "messages": []} for n in range(25)]
        return [(store.put(state), state) for state in states]

    with ThreadPoolExecutor(8) as pool:
        results = [pair for batch in pool.map(worker, range(8)) for pair in batch]
    assert len({share for share, _ in results}) == 200
    reopened = ShareStore(tmp_path / "busy.db")
    for share, state in results:
        assert reopened.get(share) == state


@pytest.mark.parametrize(
    "url", ["mysql://x", "sqlite://", "sqlite:///:memory:", "x.db", "postgresql://%zz"]
)
def test_an_unsupported_database_url_fails_app_creation(make_app, url):
    with pytest.raises(ValueError, match="PLAYGROUND_DATABASE_URL"):
        make_app(DATABASE_URL=url)


def test_database_url_from_the_environment(make_app, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_DATABASE_URL", "oracle://nope")
    with pytest.raises(ValueError, match="PLAYGROUND_DATABASE_URL='oracle://nope'"):
        make_app()


def test_relative_and_absolute_sqlite_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert database_path("sqlite:///rel/a.db", tmp_path / "x") == tmp_path / "rel" / "a.db"
    assert database_path("sqlite:////srv/a.db", tmp_path) == Path("/srv/a.db")
    assert database_path("", tmp_path / "d") == tmp_path / "d" / "playground.db"
