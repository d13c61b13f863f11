"""Sources and tokens against the libraries underneath: `python -m bench.sources`.

Builds, in a temporary folder, a Qwen-like GGUF header (150k tokens, 75k merges) sent as
the first 16 MiB of a sparse 40 GB file, and a Gemma-3-sized `tokenizer.json` (262k
tokens) with its `tokenizer_config.json`. Then, through the API of an application of
its own (its source workers are real processes), it times for each:

- the upload's answer (templates, special tokens, metadata), and the moment its tokenizer
  is `ready` (waited for as `/api/tokenize` waits, then read on `GET /api/sources/<id>`);
- `POST /api/tokenize` of a 50k-token text, `"format": "compact"`, and the default answer;

and, in this process, what the libraries take for the same: our header parse and gguf-py's
`GGUFReader` on the GGUF; `tokenizers.Tokenizer.from_str` on the `tokenizer.json` bytes;
a bare `encode` with offsets of the same text. A second application on the same data
folder (a replica) then loads the source from the database, and the first one answers it
again from memory (a cache hit). Peak memory of building each tokenizer is measured in a
fresh process, against the size of the tokenizer's input. Every goal is printed as a ratio
to the library measured in the same run.

`--small` uses a smaller `tokenizer.json` and leaves out gguf-py (the suite's fast
variant, `bench/test_proof.py`).
"""

from __future__ import annotations

import argparse
import gc
import io
import multiprocessing
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient
from gguf import GGUFReader
from tokenizers import Tokenizer

from app.sources.gguf import read_header
from app.sources.hf import canonical_files
from app.tokens.vocab import VocabTokenizer
from app.web.factory import create_app
from bench import _sources_data as data
from bench.gguf_header import best_of
from tests.support import UNLIMITED_WRITES

#: Tokens in the text tokenized through the API.
TEXT_TOKENS = 50_000
#: The goals of issue 16, as ratios (and the one absolute figure it names).
GOALS = {
    "gguf answer / header parse": 2.0,
    "hf ready / from_str": 1.3,
    "gguf tokenize compact / encode": 1.5,
    "hf tokenize compact / encode": 1.5,
    "replica ready / first ready": 1.0,
    "gguf build peak memory / input": 3.0,
    "hf build peak memory / input": 3.0,
}


@dataclass
class Figures:
    """What one run measured, in seconds (memory in bytes), and the ratios of the goals."""

    seconds: dict[str, float] = field(default_factory=dict)
    ratios: dict[str, float] = field(default_factory=dict)


def _upload(client: FlaskClient, kind: str, body: Any) -> dict[str, Any]:
    if kind == "gguf":
        answer = client.post(
            "/api/sources/gguf?name=bench.gguf", data=body, content_type="application/octet-stream"
        )
    else:
        files = {name: (_stream(text), name) for name, text in body.items()}
        answer = client.post("/api/sources/hf", data=files, content_type="multipart/form-data")
    assert answer.status_code == 200, answer.json
    return answer.json


def _stream(text: str) -> io.BytesIO:
    return io.BytesIO(text.encode())


def _ready(client: FlaskClient, source_id: str) -> dict[str, Any]:
    """The source once its tokenizer is no longer building: waited for as `/api/tokenize`
    waits (on the build, not polling, which would take CPU from it), then read back."""
    store = client.application.extensions["source_store"]
    store.get_built(source_id)
    source = client.get(f"/api/sources/{source_id}").json
    assert source["tokenizer"]["state"] != "building", source
    return source


def load_and_time(client: FlaskClient, kind: str, body: Any) -> tuple[str, float, float]:
    """Upload; the source id, the answer's time and the time until its tokenizer is ready."""
    start = time.perf_counter()
    answer = _upload(client, kind, body)
    answered = time.perf_counter() - start
    source = _ready(client, answer["id"])
    ready = time.perf_counter() - start
    assert source["tokenizer"]["state"] == "ready", source["tokenizer"]
    return answer["id"], answered, ready


def tokenize_time(client: FlaskClient, source_id: str, text: str, **extra: Any) -> float:
    """The fastest of five `/api/tokenize` answers for the whole text."""

    def ask() -> None:
        body = {"source": source_id, "text": text, "limit": TEXT_TOKENS * 2, **extra}
        answer = client.post("/api/tokenize", json=body)
        assert answer.status_code == 200, answer.json

    return best_of(5, ask)


def encode_time(tokenizer: Tokenizer, text: str) -> float:
    """In this process: a bare `encode`, reading its ids and offsets (the floor)."""

    def encode() -> None:
        encoding = tokenizer.encode(text, add_special_tokens=False)
        _ = encoding.ids, encoding.offsets

    return best_of(5, encode)


def _status_kib(field_name: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field_name + ":"))
    return int(line.split()[1])


def _peak_child(kind: str, body: bytes, answer: Any) -> None:
    from app.sources.limits import SourceLimits
    from app.sources.worker import build_tokenizer, load_source

    loaded = load_source(kind, body, None, SourceLimits()).value
    del body
    gc.collect()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak resident size starts again from the current one
    before = _status_kib("VmRSS")
    info = build_tokenizer(loaded.source.id, None, SourceLimits()).value
    assert info.state == "ready", info
    answer.value = (_status_kib("VmHWM") - before) * 1024


def build_peak(kind: str, body: bytes) -> int:
    """The growth of peak memory while a fresh process builds a parsed source's
    tokenizer (as the source worker does, in the task after the upload's answer)."""
    context = multiprocessing.get_context("spawn")
    answer = context.Value("q", 0)
    child = context.Process(target=_peak_child, args=(kind, body, answer))
    child.start()
    child.join()
    return int(answer.value)


def run(small: bool = False) -> Figures:
    """Make the sources, time everything, and work out the ratios."""
    figures = Figures()
    s = figures.seconds
    with tempfile.TemporaryDirectory(prefix="sources-bench-") as tmp:
        header_file, model_file = Path(tmp) / "header.gguf", Path(tmp) / "model.gguf"
        data.write_gguf(header_file)
        prefix = data.model_prefix(header_file, model_file)
        tokenizer_json = data.tokenizer_json(small=small)
        hf_files = {
            "tokenizer.json": tokenizer_json,
            "tokenizer_config.json": data.tokenizer_config(),
        }
        text = data.text_of_tokens(TEXT_TOKENS)

        s["header parse"] = best_of(3, lambda: read_header(prefix, want_tensors=False))
        if not small:  # tens of seconds for gguf-py on a 150k vocabulary
            s["gguf-py GGUFReader"] = best_of(1, lambda: GGUFReader(header_file))
        s["from_str"] = best_of(2, lambda: Tokenizer.from_str(tokenizer_json))
        hf_tokenizer = Tokenizer.from_str(tokenizer_json)
        s["hf encode"] = encode_time(hf_tokenizer, text)
        fields = read_header(prefix, want_tensors=False).fields
        s["gguf build in-process"] = best_of(1, lambda: VocabTokenizer.from_gguf_fields(fields))
        gguf_tokenizer = VocabTokenizer.from_gguf_fields(fields).tokenizer
        assert gguf_tokenizer is not None
        s["gguf encode"] = encode_time(gguf_tokenizer, text)

        application = create_app({"TESTING": True, "DATA_DIR": tmp, **UNLIMITED_WRITES})
        try:
            client = application.test_client()
            # Start the source workers: their start is not what is measured.
            _upload(client, "hf", {"chat_template.jinja": "{{ messages }}"})
            gguf_id, s["gguf answer"], s["gguf ready"] = load_and_time(client, "gguf", prefix)
            hf_id, s["hf answer"], s["hf ready"] = load_and_time(client, "hf", hf_files)
            for kind, source_id in (("gguf", gguf_id), ("hf", hf_id)):
                compact = {"format": "compact"}
                s[f"{kind} tokenize compact"] = tokenize_time(client, source_id, text, **compact)
                s[f"{kind} tokenize default"] = tokenize_time(client, source_id, text)
            s["cache hit"] = best_of(5, lambda: client.get(f"/api/sources/{hf_id}"))
        finally:
            application.extensions["sandbox_pool"].close()

        replica = create_app({"TESTING": True, "DATA_DIR": tmp, **UNLIMITED_WRITES})
        try:
            client = replica.test_client()
            _upload(client, "hf", {"chat_template.jinja": "{{ messages }}"})
            start = time.perf_counter()
            assert client.get(f"/api/sources/{hf_id}").status_code == 200
            s["replica hf answer"] = time.perf_counter() - start
            _ready(client, hf_id)
            s["replica hf ready"] = time.perf_counter() - start
        finally:
            replica.extensions["sandbox_pool"].close()

        canonical = canonical_files({k: v.encode() for k, v in hf_files.items()})
        s["gguf build peak bytes"] = build_peak("gguf", prefix)
        s["hf build peak bytes"] = build_peak("hf", canonical)
        s["gguf input bytes"] = len(prefix[: read_header(prefix, want_tensors=False).kv_bytes])
        s["hf input bytes"] = len(tokenizer_json.encode())

    r = figures.ratios
    r["gguf answer / header parse"] = s["gguf answer"] / s["header parse"]
    if "gguf-py GGUFReader" in s:
        r["gguf-py / gguf answer"] = s["gguf-py GGUFReader"] / s["gguf answer"]
    r["hf ready / from_str"] = s["hf ready"] / s["from_str"]
    for kind in ("gguf", "hf"):
        r[f"{kind} tokenize compact / encode"] = s[f"{kind} tokenize compact"] / s[f"{kind} encode"]
        r[f"{kind} tokenize default / encode"] = s[f"{kind} tokenize default"] / s[f"{kind} encode"]
    r["replica ready / first ready"] = s["replica hf ready"] / s["hf ready"]
    for kind in ("gguf", "hf"):
        r[f"{kind} build peak memory / input"] = (
            s[f"{kind} build peak bytes"] / s[f"{kind} input bytes"]
        )
    return figures


def report(figures: Figures) -> None:
    """Print the figures and each goal's ratio, met or missed."""
    for name, value in figures.seconds.items():
        if name.endswith("bytes"):
            print(f"{name:32} {value / 2**20:10.1f} MiB")
        else:
            print(f"{name:32} {value * 1000:10.1f} ms")
    print()
    for name, ratio in figures.ratios.items():
        goal = GOALS.get(name)
        verdict = (
            "" if goal is None else f"  (goal <= {goal}: {'met' if ratio <= goal else 'MISSED'})"
        )
        print(f"{name:32} {ratio:10.2f}x{verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a smaller tokenizer.json")
    args = parser.parse_args()
    report(run(small=args.small))


if __name__ == "__main__":
    main()
