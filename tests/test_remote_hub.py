"""Model ids from a Hugging Face Hub: a local server with the Hub's URL layout
(`tests/support/fake_hub.py`) stands in for it, through `PLAYGROUND_HF_ENDPOINT`."""

from __future__ import annotations

import itertools
import logging
import threading
import time

import pytest
from transformers import AutoTokenizer

from app.sources import remote
from app.sources.hub import Listing, parse_reference
from app.sources.remote_sources import RemoteSettings
from tests.support.fake_hub import FakeHub, Repo
from tests.support.remote_fixtures import (
    GGUF_TEMPLATE,
    SPARSE_BYTES,
    config_only_repo,
    gguf_repo,
    transformers_repo,
)
from tests.support.remote_install import remote_installer
from tests.support.sources import built
from tests.support.trickle_host import TrickleHost

TOKEN = "hf_fixture_secret_token"
MiB = 1 << 20
SHARD_1, SHARD_2 = "Model-Q4_K_M-00001-of-00002.gguf", "Model-Q4_K_M-00002-of-00002.gguf"


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> FakeHub:
    root = tmp_path_factory.mktemp("hub")
    server = FakeHub()
    server.repos = {
        "org/templates": Repo(transformers_repo(root / "templates"), branches=("main", "v1")),
        "org/config-named": Repo(config_only_repo(root / "config")),
        "org/Model-GGUF": Repo(gguf_repo(root / "gguf")),
        "org/gated": Repo(config_only_repo(root / "gated"), gated_token=TOKEN),
        "org/busy": Repo(config_only_repo(root / "busy"), rate_limited=True),
        "org/slow": Repo(config_only_repo(root / "slow"), delay=3.0),
        "org/trickle": Repo(config_only_repo(root / "trickle"), trickle=True),
    }
    empty = root / "nothing"
    (empty / "docs").mkdir(parents=True)
    (empty / "docs" / "README.md").write_text("nothing here")
    server.repos["org/nothing"] = Repo(empty)
    yield server
    server.close()


@pytest.fixture()
def remote_with(app, hub):
    """Points the application's remote sources at the fake Hub, with these settings."""
    with remote_installer(app, RemoteSettings(hf_endpoint=hub.url, seconds=10.0)) as install:
        hub.reset()
        yield install


def load(client, **body):
    return client.post("/api/sources/hub", json=body)


def tokenizer_templates(tokenizer) -> dict[str, str]:
    templates = tokenizer.chat_template
    return templates if isinstance(templates, dict) else {"default": templates}


@pytest.mark.parametrize("repo", ["org/templates", "org/config-named"])
def test_a_transformers_repo_reads_what_autotokenizer_loads(client, hub, remote_with, repo):
    folder = hub.repos[repo].folder
    tokenizer = AutoTokenizer.from_pretrained(folder)
    response = load(client, repo=repo)
    assert response.status_code == 200, response.get_data()
    source = response.json
    assert source["kind"] == "hf"
    assert source["templates"] == tokenizer_templates(tokenizer)
    assert source["special_tokens"] == tokenizer.special_tokens_map
    # The answer does not wait for the tokenizer; once built, it is the repo's tokenizer.json.
    assert source["tokenizer"]["state"] in ("building", "ready")
    assert built(client, source)["tokenizer"]["supported"] is True
    # Only the files transformers reads for a tokenizer were fetched.
    read = {"tokenizer_config.json", "tokenizer.json", "chat_template.jinja",
            "additional_chat_templates/tool_use.jinja"}  # fmt: skip
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert hub.fetched(repo) == read & present
    assert source["origin"] == {
        "type": "hub", "repo": repo, "revision": "main", "sha": hub.repos[repo].sha,
        "file": None, "url": f"{hub.url}/{repo}/tree/{hub.repos[repo].sha}",
    }  # fmt: skip


def test_a_revision_is_read_at_its_commit_and_a_share_keeps_what_was_read(client, hub, remote_with):
    repo = hub.repos["org/templates"]
    first = load(client, repo=f"{hub.url}/org/templates/tree/v1").json
    assert first["origin"]["revision"] == "v1"
    assert first["origin"]["sha"] == repo.sha
    # Every file was asked for at the commit, not at the branch.
    resolved = [path for _, path, _ in hub.requests if "/resolve/" in path]
    assert resolved and all(f"/resolve/{repo.sha}/" in path for path in resolved)

    source = {"id": first["id"], "kind": "hf", "file_name": None, "template_name": "default",
              "origin": first["origin"]}  # fmt: skip
    body = {"template": first["templates"]["default"], "messages": [], "source": source}
    shared = client.post("/api/shares", json=body)
    assert shared.status_code in (200, 201), shared.get_data()
    stored = client.get(f"/s/{shared.json['id']}.json").json
    assert stored["source"]["origin"]["sha"] == repo.sha

    # The repository changes; the share's source is still what was read then.
    old_sha, old_text = repo.sha, (repo.folder / "chat_template.jinja").read_text()
    (repo.folder / "chat_template.jinja").write_text("CHANGED")
    repo.sha = "f" * 40
    try:
        assert load(client, repo="org/templates").json["templates"]["default"] == "CHANGED"
        assert client.get(f"/api/sources/{first['id']}").json["templates"]["default"] == old_text
    finally:
        (repo.folder / "chat_template.jinja").write_text(old_text)
        repo.sha = old_sha


def test_a_gguf_repo_lists_its_models_with_sizes_first_shards_only(client, hub, remote_with):
    response = load(client, repo="org/Model-GGUF")
    assert response.status_code == 200
    answer = response.json
    assert "id" not in answer
    folder = hub.repos["org/Model-GGUF"].folder
    size = lambda name: (folder / name).stat().st_size  # noqa: E731
    assert answer["gguf_files"] == [
        {"file": "Model-Q2_K.gguf", "size": size("Model-Q2_K.gguf"), "shards": 1},
        {"file": SHARD_1, "size": size(SHARD_1) + size(SHARD_2), "shards": 2},
        {"file": "Model-Q8_0.gguf", "size": SPARSE_BYTES, "shards": 1},
        {"file": "mmproj-Model-F16.gguf", "size": size("mmproj-Model-F16.gguf"), "shards": 1},
    ]  # fmt: skip
    assert answer["default_file"] == SHARD_1
    assert answer["origin"]["sha"] == hub.repos["org/Model-GGUF"].sha
    assert hub.fetched("org/Model-GGUF") == set()  # listing reads no file


def test_a_40_gb_sparse_gguf_is_read_with_a_few_mib(client, hub, remote_with, capsys):
    started = time.perf_counter()
    response = load(client, repo="org/Model-GGUF", file="Model-Q8_0.gguf")
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.get_data()
    source = response.json
    assert source["kind"] == "gguf"
    assert source["templates"] == {"default": GGUF_TEMPLATE}
    assert source["tokenizer"]["vocab_size"] == 30_000
    assert source["origin"]["file"] == "Model-Q8_0.gguf"
    sent = hub.bytes_sent()
    assert sent < 32 * MiB
    assert source["header_bytes"] <= sent
    with capsys.disabled():
        print(f"\n40 GB sparse GGUF: {sent:,} bytes sent by the server in {elapsed:.2f} s")


def test_a_header_grows_by_need_bytes_reading_only_new_bytes(client, hub, remote_with, monkeypatch):
    monkeypatch.setattr(remote, "FIRST_GGUF_BYTES", 4096)
    response = load(client, repo="org/Model-GGUF", file="Model-Q2_K.gguf")
    assert response.status_code == 200, response.get_data()
    ranges = [headers["range"] for method, path, headers in hub.requests
              if method == "GET" and path.startswith("/cdn/")]  # fmt: skip
    assert len(ranges) > 1
    spans = [tuple(int(x) for x in r.removeprefix("bytes=").split("-")) for r in ranges]
    assert spans[0][0] == 0
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start == end + 1  # each read starts where the last one ended
    assert hub.bytes_sent("/cdn/") == spans[-1][1] + 1 >= response.json["header_bytes"]


def test_a_split_model_is_read_from_its_first_shard(client, hub, remote_with):
    response = load(
        client, repo=f"{hub.url}/org/Model-GGUF/blob/main/Model-Q4_K_M-00002-of-00002.gguf"
    )
    assert response.status_code == 200, response.get_data()
    assert response.json["split"] == {"shard": 1, "count": 2, "first": True}
    assert response.json["origin"]["file"] == SHARD_1


@pytest.mark.parametrize(
    ("body", "status", "kind", "words"),
    [
        ({"repo": "org/missing"}, 404, "NotFound", "no model org/missing"),
        ({"repo": "org/templates", "revision": "nope"}, 404, "NotFound", "no revision"),
        ({"repo": "org/Model-GGUF", "file": "Model-Q5.gguf"}, 404, "NotFound", "no file"),
        ({"repo": "org/gated"}, 403, "Forbidden", "PLAYGROUND_HF_TOKEN"),
        ({"repo": "org/busy"}, 429, "RateLimited", "limiting"),
        ({"repo": "org/nothing"}, 422, "NoTemplate", "neither"),
        ({"repo": "org/templates", "file": "x.bin"}, 400, "BadRequest", "not a GGUF"),
        ({"repo": "no repo here"}, 400, "BadRequest", "not a model id"),
    ],
)
def test_errors_are_typed(client, remote_with, body, status, kind, words):
    response = load(client, **body)
    assert response.status_code == status, response.get_data()
    assert response.json["error"]["type"] in (kind, "BadRequest")
    assert words in response.json["error"]["message"]
    if status == 429:
        assert response.headers["Retry-After"] == "7"


def test_a_gated_repo_loads_with_the_token_which_is_never_shown(client, hub, remote_with, caplog):
    remote_with(hf_token=TOKEN)
    with caplog.at_level(logging.DEBUG):
        response = load(client, repo="org/gated")
    assert response.status_code == 200, response.get_data()
    assert TOKEN not in response.get_data(as_text=True)
    assert TOKEN not in caplog.text
    assert TOKEN not in repr(client.application.extensions["remote_sources"].hub)
    sent = [h.get("authorization") for _, path, h in hub.requests if "org/gated" in path]
    assert sent and all(value == f"Bearer {TOKEN}" for value in sent)


def test_a_file_over_the_cap_is_413(client, remote_with):
    remote_with(max_bytes=200)
    response = load(client, repo="org/templates")
    assert response.status_code == 413
    assert response.json["error"]["limit"] == "upload_mb"


def test_a_slow_hub_is_504_naming_it_within_the_timeout(client, hub, remote_with):
    remote_with(seconds=1.0)
    started = time.perf_counter()
    response = load(client, repo="org/slow")
    assert time.perf_counter() - started < 2.0
    assert response.status_code == 504
    assert hub.url in response.json["error"]["message"]
    assert response.json["error"]["limit"] == "fetch_seconds"


@pytest.mark.timing
def test_a_hub_that_trickles_its_answer_is_cut_off_at_the_deadline(client, remote_with):
    hub = TrickleHost(interval=0.2)
    try:
        remote_with(hf_endpoint=hub.url, seconds=1.0, threads=1)
        started = time.monotonic()
        first = load(client, repo="org/templates")
        assert (first.status_code, first.json["error"]["limit"]) == (504, "fetch_seconds")
        assert time.monotonic() - started < 2.0
        [lifetime] = hub.wait_closed(1, timeout=3.0)
        assert lifetime < 1.0 + 1.0, "the connection outlived the budget by over a second"
        second = load(client, repo="org/templates")
        assert (second.status_code, second.json["error"]["limit"]) == (504, "fetch_seconds")
    finally:
        hub.close()


@pytest.mark.timing
def test_a_file_trickled_on_a_connection_the_listing_opened_is_cut_off_too(
    client, hub, remote_with
):
    # The listing is answered at once; its connection must not be kept for the file read,
    # whose sockets the deadline would then not know.
    remote_with(seconds=1.0, threads=1)
    started = time.monotonic()
    first = load(client, repo="org/trickle")
    assert (first.status_code, first.json["error"]["limit"]) == (504, "fetch_seconds")
    assert time.monotonic() - started < 2.0
    second = load(client, repo="org/trickle")
    assert (second.status_code, second.json["error"]["limit"]) == (504, "fetch_seconds")


def test_an_unreachable_hub_is_504_naming_it(client, remote_with):
    remote_with(hf_endpoint="http://127.0.0.1:9")
    response = load(client, repo="org/templates")
    assert response.status_code == 504
    assert "http://127.0.0.1:9" in response.json["error"]["message"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Qwen/Qwen3-8B", ("Qwen/Qwen3-8B", None, None)),
        ("https://huggingface.co/Qwen/Qwen3-8B", ("Qwen/Qwen3-8B", None, None)),
        ("https://huggingface.co/org/M-GGUF/blob/main/a/M-Q4_K_M.gguf",
         ("org/M-GGUF", "main", "a/M-Q4_K_M.gguf")),
        ("https://hf.co/org/M/resolve/0123abc/x.gguf?download=1", ("org/M", "0123abc", "x.gguf")),
        ("https://huggingface.co/org/M/resolve/0123abc/x.gguf", ("org/M", "0123abc", "x.gguf")),
        ("https://huggingface.co/org/M/tree/v1", ("org/M", "v1", None)),
        ("just-a-name", None),
        # Another site's URL is not the Hub repository of the same name.
        ("https://evil.example/org/M", None),
        ("https://huggingface.co.evil.com/org/M", None),
        ("https://huggingface.co@127.0.0.1:8099/org/M", None),
    ],
)  # fmt: skip
def test_references_are_recognised(text, expected):  # on the public Hub
    found = parse_reference(text)
    assert (None if found is None else (found.repo, found.revision, found.file)) == expected


def test_urls_of_the_configured_endpoint_are_references_too():
    found = parse_reference(
        "http://mirror.internal:8080/org/M/tree/v1", "http://mirror.internal:8080"
    )
    assert (found.repo, found.revision) == ("org/M", "v1")
    assert parse_reference("http://mirror.internal:8080/org/M") is None  # not configured


def test_every_fetch_thread_busy_is_503_at_once(app, hub, remote_with):
    remote_with(seconds=1.0, threads=1)
    first = threading.Thread(target=load, args=(app.test_client(),), kwargs={"repo": "org/slow"})
    first.start()  # its read holds the one fetch thread for the 3 s the Hub takes
    try:
        while not any("org/slow" in path for _, path, _ in hub.requests):
            time.sleep(0.01)
        # From another address: one client has one remote load at a time.
        response = app.test_client().post(
            "/api/sources/hub", json={"repo": "org/templates"},
            environ_base={"REMOTE_ADDR": "127.0.0.2"},
        )  # fmt: skip
        assert response.status_code == 503
        assert response.json["error"]["limit"] == "fetches"
        assert response.headers["Retry-After"] == str(remote.BUSY_RETRY_SECONDS)
    finally:
        first.join()


@pytest.mark.parametrize(
    ("files", "default"),
    [
        # A preferred quantisation wins, a projector never does; folders are kept.
        ({"Q8_0/M-Q8_0-00001-of-00002.gguf": 9, "Q8_0/M-Q8_0-00002-of-00002.gguf": 9,
          "M-IQ4_XS.gguf": 4, "M-Q5_K_M.gguf": 5, "mmproj-M-Q4_K_M.gguf": 1}, "M-Q5_K_M.gguf"),
        # No known name: the middle size.
        ({"a.gguf": 1, "b.gguf": 30, "c.gguf": 7}, "c.gguf"),
        # Only a projector: that one.
        ({"mmproj-x.gguf": 1}, "mmproj-x.gguf"),
    ],
)  # fmt: skip
def test_the_default_gguf_is_a_middle_quantisation(files, default):
    assert Listing("o/m", "main", "0" * 40, files).default_gguf() == default


def test_split_models_are_listed_once_with_all_their_bytes():
    files = {"Q8_0/M-Q8_0-00001-of-00002.gguf": 9, "Q8_0/M-Q8_0-00002-of-00002.gguf": 8,
             "M-Q4_0.gguf": 4, "notes.txt": 1}  # fmt: skip
    choices = [c.to_json() for c in Listing("o/m", "main", "0" * 40, files).gguf_choices()]
    assert choices == [
        {"file": "M-Q4_0.gguf", "size": 4, "shards": 1},
        {"file": "Q8_0/M-Q8_0-00001-of-00002.gguf", "size": 17, "shards": 2},
    ]


@pytest.mark.parametrize(
    ("origin", "field"), [({"sha": 5}, "source.origin.sha"), ("org/m", "source.origin")]
)
def test_a_share_refuses_an_origin_that_is_not_strings(client, origin, field):
    source = {"id": "a" * 64, "kind": "hf", "origin": origin}
    response = client.post("/api/shares", json={"template": "x", "messages": [], "source": source})
    assert response.status_code == 400
    assert response.json["error"]["field"] == field
