"""An uploaded tokenizer.json starts building from the upload, beside the parse (issue 41).

With two idle source workers, one builds the tokenizer from the bytes as uploaded while
the other parses the files for the answer; the tokenizer is then ready the library's load
after the upload. What it builds must be what the build after the parse made.
"""

from __future__ import annotations

import io
import json

import pytest
from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers

from app.web.factory import create_app
from tests.support import UNLIMITED_WRITES
from tests.support.sources import built

TEXT = "<s>hello world</s> low"


def tokenizer_json() -> str:
    """A small BPE tokenizer.json with special tokens the config names."""
    vocab = {"<s>": 0, "</s>": 1, "<unk>": 2, "h": 3, "e": 4, "l": 5, "o": 6, "w": 7, "r": 8}
    vocab |= {"d": 9, "he": 10, "ll": 11, "hell": 12, "hello": 13, "lo": 14, "low": 15}
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"), ("l", "o"), ("lo", "w")]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens(
        [AddedToken("<s>", special=True), AddedToken("</s>", special=True)]
    )
    return tokenizer.to_str()


CONFIG = {"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True}
FILES = {"tokenizer.json": tokenizer_json(), "tokenizer_config.json": json.dumps(CONFIG)}


def _app(tmp_path, lanes: int):
    settings = {
        "TESTING": True,
        "DATA_DIR": str(tmp_path / f"lanes{lanes}"),
        "SOURCE_WORKERS": lanes,
    }
    return create_app({**settings, **UNLIMITED_WRITES})


def _upload(client, files: dict[str, str]):
    parts = {"files": [(io.BytesIO(text.encode()), name) for name, text in files.items()]}
    return client.post("/api/sources/hf", data=parts, content_type="multipart/form-data")


def _calls(workers) -> list[tuple[str, object]]:
    """Record, on a live `SourceWorkers`, the order of prebuilds and parses."""
    calls: list[tuple[str, object]] = []
    prebuild, load = workers.prebuild, workers.load

    def recorded_prebuild(*args, **kwargs):
        build = prebuild(*args, **kwargs)
        calls.append(("prebuild", build is not None))
        return build

    def recorded_load(*args, **kwargs):
        calls.append(("load", kwargs.get("elsewhere", False)))
        return load(*args, **kwargs)

    workers.prebuild, workers.load = recorded_prebuild, recorded_load
    return calls


@pytest.fixture()
def apps(tmp_path):
    made = {lanes: _app(tmp_path, lanes) for lanes in (1, 2)}
    yield made
    for application in made.values():
        application.extensions["sandbox_pool"].close()
        application.extensions["source_workers"].close()


def test_the_build_starts_before_the_parse_with_two_idle_workers(apps):
    apps[2].extensions["source_workers"].start(wait=True)
    calls = _calls(apps[2].extensions["source_workers"])
    client = apps[2].test_client()
    source = built(client, _upload(client, FILES).json)
    assert source["tokenizer"]["state"] == "ready"
    # Started from the upload, so the parse keeps nothing for a build of its own.
    assert calls == [("prebuild", True), ("load", True)]


def test_while_the_workers_start_the_build_follows_the_parse(apps):
    # The first source task starts every worker: a build would wait for that, and the
    # parse behind it, so the first upload is built after its parse.
    calls = _calls(apps[2].extensions["source_workers"])
    client = apps[2].test_client()
    assert built(client, _upload(client, FILES).json)["tokenizer"]["state"] == "ready"
    assert calls == [("prebuild", False), ("load", False)]


def test_with_one_worker_the_build_follows_the_parse(apps):
    calls = _calls(apps[1].extensions["source_workers"])
    client = apps[1].test_client()
    assert built(client, _upload(client, FILES).json)["tokenizer"]["state"] == "ready"
    assert calls == [("prebuild", False), ("load", False)]


def test_an_early_build_is_the_build_after_the_parse(apps):
    answers = {}
    for lanes, application in apps.items():
        client = application.test_client()
        source = built(client, _upload(client, FILES).json)
        body = {"source": source["id"], "text": TEXT, "add_special": True}
        tokens = client.post("/api/tokenize", json=body).json
        info = application.extensions["source_store"].get(source["id"]).tokenizer
        answers[lanes] = (source, tokens, info)
    early, late = answers[2], answers[1]
    assert early == late
    source, tokens, info = early
    # The config reached the early build: its BOS and EOS.
    assert (info.bos_id, info.eos_id) == (0, 1)
    assert [t["id"] for t in tokens["tokens"]] == [0, 13, 7, 6, 8, 5, 9, 1, 15]


def test_an_early_build_of_an_upload_the_parse_refuses_is_no_source(apps):
    client = apps[2].test_client()
    bad = {**FILES, "tokenizer_config.json": '{"chat_template": 5}'}
    refused = _upload(client, bad)
    assert refused.status_code == 422
    assert refused.json["error"]["file"] == "tokenizer_config.json"
    # The workers go on: the next upload builds as ever.
    assert built(client, _upload(client, FILES).json)["tokenizer"]["state"] == "ready"


def test_a_tokenizer_json_the_library_cannot_read_says_where_early_too(apps):
    reasons = []
    for application in apps.values():
        client = application.test_client()
        broken = {"tokenizer.json": '{"model": {"type": "BPE",, "vocab": {}}}'}
        source = built(client, _upload(client, broken).json)
        assert source["tokenizer"]["state"] == "failed"
        reasons.append(source["tokenizer"]["reason"])
    assert reasons[0] == reasons[1]
    assert "column" in reasons[0]
