"""Hostile uploads cost one bounded worker task each, never the web process or its memory.

Each case was found by an attack on the live service: a tokenizer regex that makes the
tokenizers library panic, arrays and normalisers that blow up memory, a vocabulary whose
merges take hours to list, an analysis that tokenized megabytes per turn, token ids far
beyond the vocabulary's size.
"""

from __future__ import annotations

import hashlib
import io
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from app.sources.hf import canonical_files
from app.web.factory import create_app
from tests.support.hostile_inputs import (
    BACKTRACKING_TEXT,
    backtracking_tokenizer,
    big_tokenizer,
    gguf_with_array,
    long_token_gguf,
    multipart,
    word_level,
)
from tests.support.server import LIVE_ENV, Server, running, start_gunicorn
from tests.support.shared_data import VOCAB_DIR, needs_shared
from tests.support.sources import built, built_with

MiB = 1 << 20


def upload_hf(server, files: dict[str, str]) -> tuple[int, dict]:
    """A multipart upload through the live server."""
    data, content_type = multipart(files)
    headers = {"Content-Type": content_type}
    status, _, body = server.send("POST", "/api/sources/hf", data, headers, timeout=120)
    return status, _built(server, status, json.loads(body))


def upload_gguf(server, data: bytes) -> tuple[int, dict]:
    headers = {"Content-Type": "application/octet-stream"}
    status, _, body = server.send("POST", "/api/sources/gguf", data, headers, timeout=120)
    return status, _built(server, status, json.loads(body))


def _built(server, status: int, source: dict) -> dict:
    """An upload's answer, once its tokenizer is built (answers do not wait for it)."""
    if status != 200:
        return source
    return built_with(lambda path: json.loads(server.send("GET", path, timeout=60)[2]), source)


# --- Finding 2: a user tokenizer could crash a gunicorn worker ---------------------------


@pytest.mark.timing
def test_a_panicking_tokenizer_is_a_422_and_no_worker_dies(live_server):
    status, source = upload_hf(live_server, {"tokenizer.json": backtracking_tokenizer()})
    assert status == 200 and source["tokenizer"]["supported"] is True

    def attack():
        body = {"source": source["id"], "text": BACKTRACKING_TEXT}
        return live_server.post("/api/tokenize", body, timeout=60)

    for status, answer in live_server.survives(attack, attackers=4):
        assert status == 422
        assert answer["error"]["type"] == "TokenizerUnavailable"
        assert "retry-limit" in answer["error"]["message"]
    # Other texts still tokenize with the same source.
    status, answer = live_server.post("/api/tokenize", {"source": source["id"], "text": "ab"})
    assert (status, answer["count"]) == (200, 1)


@pytest.mark.timing
def test_a_share_of_a_panicking_source_opens_every_time(live_server):
    status, source = upload_hf(live_server, {"tokenizer.json": backtracking_tokenizer()})
    state = {
        "template": "{{ messages[0].content }}",
        "messages": [{"role": "user", "content": BACKTRACKING_TEXT}],
        "source": {"id": source["id"], "kind": "hf"},
        "view": "tokens",  # the page tokenizes only for the views that show tokens
    }
    status, share = live_server.post("/api/shares", state)
    assert status in (200, 201)

    def open_share():
        started = time.monotonic()
        status, _, page = live_server.send("GET", share["url"], timeout=60)
        return status, page, time.monotonic() - started

    results = live_server.survives(open_share, attackers=3)
    for status, page, _ in results:
        assert status == 200
        assert b"retry-limit" in page  # the Tokens view says why it has no tokens
    _, _, again = open_share()
    assert again < min(seconds for *_, seconds in results), "the failure is remembered"


# --- Finding 3: memory blow-ups in the web process ---------------------------------------


@pytest.mark.timing
def test_a_huge_gguf_array_is_refused_before_it_costs_memory(live_server):
    before = live_server.web_rss()

    def attack():
        return upload_gguf(live_server, gguf_with_array(16 * MiB))

    for status, answer in live_server.survives(attack, attackers=2):
        assert status == 422
        assert answer["error"]["type"] == "GGUFError"
        assert answer["error"]["limit"] == "gguf_array_items"
        assert "PLAYGROUND_GGUF_ARRAY_ITEMS" in answer["error"]["message"]
    # A 16 MiB array used to become 16 million Python ints (+270 MB) in the web process.
    assert live_server.web_rss() - before < 64 * MiB


def test_an_exploding_normalizer_is_unsupported_not_run(client):
    tokenizer = word_level()
    tokenizer.normalizer = normalizers.Replace("a", "b" * 10**6)
    files = {"files": (io.BytesIO(tokenizer.to_str().encode()), "tokenizer.json")}
    source = built(client, client.post("/api/sources/hf", data=files).json)
    assert source["tokenizer"]["supported"] is False
    assert source["tokenizer"]["state"] == "failed"
    assert "normalizer can make text" in source["tokenizer"]["reason"]
    answer = client.post("/api/tokenize", json={"source": source["id"], "text": "a" * 40})
    assert answer.status_code == 422


def test_a_sparse_vocabulary_tokenizes(client):
    tokenizer = Tokenizer(models.WordLevel({"<unk>": 0, "a": 1, "b": 5_000_000}, "<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    files = {"files": (io.BytesIO(tokenizer.to_str().encode()), "tokenizer.json")}
    source = client.post("/api/sources/hf", data=files).json
    body = {"left": {"template": "a b", "messages": []}, "source": source["id"]}
    body["right"] = body["left"]
    body["left"]["messages"] = body["right"]["messages"] = [{"role": "user", "content": "x"}]
    answer = client.post("/api/diff", json=body)
    assert answer.status_code == 200
    assert answer.json["left"]["token_ids"] == [1, 5_000_000]
    tokens = client.post("/api/tokenize", json={"source": source["id"], "text": "b"}).json
    assert [(t["id"], t["piece"]) for t in tokens["tokens"]] == [(5_000_000, "b")]


@pytest.fixture(scope="module")
def tight_server():
    """gunicorn whose source workers get 1 s of CPU and 160 MiB."""
    server = start_gunicorn(
        {
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_THREADS": "4",
            "PLAYGROUND_SOURCE_CPU_SECONDS": "1",
            "PLAYGROUND_SOURCE_MEMORY_MB": "160",
        }
    )
    yield server
    server.close()


@pytest.mark.timing
def test_a_tokenizer_over_the_memory_budget_fails_in_its_worker(tight_server):
    big = big_tokenizer()
    assert len(big) > 20 * MiB
    before = tight_server.web_rss()
    [(status, source)] = tight_server.survives(
        lambda: upload_hf(tight_server, {"tokenizer.json": big})
    )
    # The templates and the rest still load; the tokenizer says which limit stopped it.
    assert status == 200
    assert source["tokenizer"]["supported"] is False
    assert source["tokenizer"]["limit"] in ("source_memory_mb", "source_cpu_seconds")
    status, answer = tight_server.post("/api/tokenize", {"source": source["id"], "text": "a"})
    assert status == 422 and answer["error"]["limit"] == source["tokenizer"]["limit"]
    # It used to add 435 MB to the web process for a 20 MB file.
    assert tight_server.web_rss() - before < 160 * MiB


# Found by bench/fuzz_hf.py: a source's summary can hold most of its upload (a special
# token of tens of MB, hundreds of 250 KB templates), and the web process kept the last 64
# summaries whatever they weighed: up to 4 GB per gunicorn worker. Now one summary may
# take PLAYGROUND_SOURCE_SUMMARY_MB (16), and all of them PLAYGROUND_WEB_SOURCES_MB (64).
def test_large_source_summaries_do_not_pile_up_in_the_web_process():
    def upload(number: int, mib: int = 12) -> tuple[int, dict]:
        config = {"bos_token": f"<s{number}>" + "x" * mib * MiB}
        return upload_hf(server, {"tokenizer_config.json": json.dumps(config)})

    # Summaries of 12 MiB kept within 16 MiB in all: one at a time.
    with running(Server({**LIVE_ENV, "PLAYGROUND_WEB_SOURCES_MB": "16"})) as server:
        for number in range(4):  # each request thread handles one first
            status, source = upload(number)
            assert status == 200
            assert source["special_tokens"]["bos_token"].startswith(f"<s{number}>")
        before = server.web_rss()
        for number in range(4, 14):
            assert upload(number)[0] == 200
        # Each of those ten sources used to stay: 120 MB more.
        assert server.web_rss() - before < 64 * MiB
        status, refused = upload(14, mib=17)
    assert (status, refused["error"]["limit"]) == (422, "source_summary_mb")


# Found by bench/fuzz_hf.py's memory figures: the web process decoded each upload and wrote
# it again as JSON text before handing it to a worker, about ten copies of a file with one
# character outside the BMP (Python then spends four bytes on every character), and kept
# most of that memory after the requests. A server of its own: what a process's heap
# holds from earlier requests changes its growth (120 to 240 MB in the session's server).
# Timing too: the web process frees an upload's buffers after it has answered, so on a
# busy machine the next upload can arrive while the last one's are still held (about 157
# MiB alone; 201 MiB once, beside the rest of the suite in parallel).
@pytest.mark.timing
def test_uploads_cost_the_web_process_a_few_copies_at_most():
    def upload(number: int) -> int:
        text = '{"x": "' + "x" * 40 * MiB + f'😀{number}"}}'
        status, _ = upload_hf(server, {"tokenizer.json": text})
        return status

    with running(Server(LIVE_ENV)) as server:
        upload(0)
        before = server.web_rss()
        peak = server.peak_web_rss(lambda: [upload(n) for n in range(1, 4)])
    # One such upload at a time used to take the web process 400 MB more.
    assert peak - before < 200 * MiB


@settings(max_examples=300)
@given(st.dictionaries(st.text(), st.text(alphabet=st.characters(codec="utf-8"))))
def test_uploaded_files_are_stored_as_the_json_they_always_were(files):
    """The stored bytes, whose SHA-256 is the source's id, are still `json`'s own."""
    expected = json.dumps(files, sort_keys=True, ensure_ascii=False).encode()
    assert canonical_files({name: text.encode() for name, text in files.items()}) == expected


def test_a_file_that_is_not_utf8_is_named(client):
    for bad in (b"\xff", b'{"a": "\xed\xa0\x80"}', b"caf\xc3", b"\xc0\x80"):
        data = {
            "f0": (io.BytesIO(b"{}"), "tokenizer_config.json"),
            "f1": (io.BytesIO(bad), "x.jinja"),
        }
        answer = client.post("/api/sources/hf", data=data, content_type="multipart/form-data")
        assert answer.status_code == 422
        assert answer.json["error"]["file"] == "x.jinja"
        assert answer.json["error"]["message"] == (
            "x.jinja: this file is not UTF-8 text, so not a tokenizer or template file"
        )


# Found by bench/fuzz_hf.py (case 8266 of its seed, 20,000-case run): files accepted when
# building their tokenizer ran into a limit (so their tokenizer.json was not read to the
# end) were refused when read back, by a worker with more room: 404 for a source that
# had loaded. A stored row stands for that upload here.
def test_a_source_stored_without_its_tokenizer_reads_back(app, client):
    files = {"chat_template.jinja": b"T{{ messages }}", "tokenizer.json": b'{"model": {"ty'}
    data = canonical_files(files)
    source_id = hashlib.sha256(data).hexdigest()
    app.extensions["source_store"].database.put_source(source_id, "hf", data)
    answer = client.get(f"/api/sources/{source_id}")
    assert answer.status_code == 200, answer.get_data()
    assert answer.json["templates"] == {"default": "T{{ messages }}"}
    assert answer.json["tokenizer"]["supported"] is False
    assert "tokenizer.json" in answer.json["tokenizer"]["reason"]
    tokens = client.post("/api/tokenize", json={"source": source_id, "text": "a"})
    assert tokens.status_code == 422
    assert tokens.json["error"]["type"] == "TokenizerUnavailable"


# Found by bench/fuzz_hf.py (case 19714): a BPE with byte fallback whose end-of-word suffix
# is not in its vocabulary spells the suffix in byte tokens placed past the end of the text.
def test_token_spans_stay_inside_the_text(client):
    vocab = {"<unk>": 0, "a": 1, "b": 2, **{f"<0x{b:02X}>": 3 + b for b in range(256)}}
    model = models.BPE(vocab, [], unk_token="<unk>", byte_fallback=True, end_of_word_suffix="</w>")
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    files = {"files": (io.BytesIO(tokenizer.to_str().encode()), "tokenizer.json")}
    source = client.post("/api/sources/hf", data=files).json
    for text in ("ab", "a b 🍂"):
        answer = client.post("/api/tokenize", json={"source": source["id"], "text": text})
        assert answer.status_code == 200
        pieces = "".join(t["piece"] for t in answer.json["tokens"])
        assert "</w>" in pieces  # the suffix, spelt in bytes
        assert all(0 <= t["start"] <= t["end"] <= len(text) for t in answer.json["tokens"])


# --- Finding 4: unbounded CPU in the web process -----------------------------------------


@pytest.mark.timing
def test_a_vocabulary_with_a_huge_token_is_refused_in_moments(live_server, tmp_path):
    data = long_token_gguf(tmp_path)
    [(status, source)] = live_server.survives(lambda: upload_gguf(live_server, data))
    assert status == 200
    assert source["templates"]["default"] == "{{ messages[0].content }}"
    assert source["tokenizer"]["supported"] is False
    assert "too long to list their merges" in source["tokenizer"]["reason"]


@pytest.mark.timing
def test_analysis_of_a_long_conversation_with_a_huge_kwarg_is_bounded(live_server):
    messages = []
    for turn in range(150):
        messages += [
            {"role": "user", "content": f"question {turn}"},
            {"role": "assistant", "content": f"answer {turn}"},
        ]
    template = (
        "{{ big }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    body = {"template": template, "messages": messages, "kwargs": {"big": "x" * 1_900_000}}
    [(status, answer)] = live_server.survives(
        lambda: live_server.post("/api/analyze", body, timeout=120)
    )
    assert status in (200, 422), answer
    if status == 200:
        assert answer["user_turns"] == 150
        assert answer["turns_analysed"] == 32
        assert len(answer["prefix_stability"]) == 31
    else:
        assert answer["error"]["limit"] == "cpu_seconds"


def test_the_analysis_turn_limit_is_a_setting(tmp_path):
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "ANALYSIS_TURNS": 2})
    messages = [{"role": "user", "content": f"q{i}"} for i in range(5)]
    body = {"template": "{% for m in messages %}{{ m.content }};{% endfor %}", "messages": messages}
    try:
        answer = app.test_client().post("/api/analyze", json=body).json
    finally:
        app.extensions["sandbox_pool"].close()
        app.extensions["source_workers"].close()
    assert (answer["user_turns"], answer["turns_analysed"]) == (5, 2)
    assert [pair["to_turn"] for pair in answer["prefix_stability"]] == [2]


# --- Finding 5: huge share pages and token answers ---------------------------------------


@pytest.mark.timing
@needs_shared
def test_a_huge_share_with_a_vocabulary_makes_a_bounded_page(live_server):

    status, source = upload_gguf(
        live_server, (VOCAB_DIR / "ggml-vocab-llama-spm.gguf").read_bytes()
    )
    assert status == 200
    content = "the quick brown fox jumps over the lazy dog " * 43_000  # 1.9 MB
    state = {
        "template": "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{% endfor %}",
        "messages": [{"role": "user", "content": content}],
        "source": {"id": source["id"], "kind": "gguf"},
        "view": "tokens",
    }
    status, share = live_server.post("/api/shares", state)
    assert status in (200, 201)
    [(status, _, page)] = live_server.survives(
        lambda: live_server.send("GET", share["url"], timeout=120)
    )
    assert status == 200
    text = page.decode()
    # It used to be a 166 MB page; now what grows with the prompt is its text, a few times
    # (the tokens are a few bytes each: the browser draws them, on screen only).
    assert len(page) < 4 * len(content) + 2 * MiB
    assert 'id="tokens-cut"' in text and "Showing the first 200,000 of" in text
    # Every character of the prompt is still on the page, once drawn and once raw.
    assert text.count("lazy dog") >= 2 * 43_000


@needs_shared
def test_tokenize_pages_through_a_long_text(client):

    data = (VOCAB_DIR / "ggml-vocab-llama-spm.gguf").read_bytes()
    source = client.post(
        "/api/sources/gguf", data=data, content_type="application/octet-stream"
    ).json["id"]
    text = "hello world " * 60_000  # over 120,000 tokens; one answer carries 100,000
    first = client.post("/api/tokenize", json={"source": source, "text": text}).json
    total = first["count"]
    assert len(first["tokens"]) == 100_000 < total
    rest = client.post(
        "/api/tokenize", json={"source": source, "text": text, "offset": first["next_offset"]}
    ).json
    assert "next_offset" not in rest and rest["count"] == total
    ids = [t["id"] for t in first["tokens"] + rest["tokens"]]
    assert len(ids) == total

    def window(offset: int) -> list[int]:
        body = {"source": source, "text": text, "limit": 60_000, "offset": offset}
        return [t["id"] for t in client.post("/api/tokenize", json=body).json["tokens"]]

    assert ids == window(0) + window(60_000) + window(120_000)
    too_many = client.post("/api/tokenize", json={"source": source, "text": "x", "limit": 10**6})
    assert too_many.status_code == 400
    assert too_many.json["error"]["limit"] == "tokens_per_answer"
