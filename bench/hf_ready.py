"""A large vocabulary ready at library speed: `python -m bench.hf_ready [--runs N]`.

For a Qwen3-size and a Gemma-3-size `tokenizer.json` (151,669 tokens, 11.4 MB; 262,144
tokens, 33.4 MB: synthetic files of those sizes, `bench/_hf_sizes.py`, since no real one
is at hand offline), each run times, side by side:

- the library's own load: `tokenizers.Tokenizer.from_str` of the file's text, here;
- the upload's answer: `POST /api/sources/hf` with the file and a `tokenizer_config.json`
  (through an application of the run's own, whose source workers are real processes);
- ready: until its tokenizer is built (waited for as `/api/tokenize` waits), so that the
  Tokens view can use it.

Each run starts a fresh application (nothing cached), whose worker processes are started
before anything is timed. Printed: the median of the runs for each figure and ratio (the
machine may be busy: ratios are worked out within each run), the goal (ready within 1.5x
the library's load plus 0.3 s), and the resident memory of each worker process (source
and sandbox) before and after the last run's uploads (source workers keep the built
tokenizers).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

from flask.testing import FlaskClient
from tokenizers import Tokenizer

from app.web.factory import create_app
from bench import _hf_sizes as sizes
from tests.support import UNLIMITED_WRITES

#: The goal: ready within this many times the library's load, plus `GOAL_SECONDS`.
GOAL_RATIO = 1.5
GOAL_SECONDS = 0.3
_HELLO = {"role": "user", "content": "Hello!"}
_CONFIG = b'{"bos_token": "<bos>", "eos_token": "<eos>", "chat_template": "{{ messages }}"}'


def _upload(client: FlaskClient, files: dict[str, bytes]) -> str:
    parts = {name: (io.BytesIO(data), name) for name, data in files.items()}
    answer = client.post("/api/sources/hf", data=parts, content_type="multipart/form-data")
    assert answer.status_code == 200, answer.json
    return answer.json["id"]


def _ready(client: FlaskClient, source_id: str) -> None:
    client.application.extensions["source_store"].get_built(source_id)
    state = client.get(f"/api/sources/{source_id}").json["tokenizer"]["state"]
    assert state == "ready", state


def _timed(client: FlaskClient, text: str) -> tuple[float, float, float]:
    """The library's load, then the upload's answer and ready, in seconds."""
    start = time.perf_counter()
    Tokenizer.from_str(text)
    library = time.perf_counter() - start
    start = time.perf_counter()
    source_id = _upload(client, {"tokenizer.json": text.encode(), "tokenizer_config.json": _CONFIG})
    answered = time.perf_counter() - start
    _ready(client, source_id)
    return library, answered, time.perf_counter() - start


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def worker_memory() -> list[tuple[int, float]]:
    """Each worker process under this one (source and sandbox): its pid and resident MiB."""
    found, todo = [], _children(os.getpid())
    while todo:
        pid = todo.pop()
        todo += _children(pid)
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        if "forkserver" in Path(f"/proc/{pid}/cmdline").read_text() and not _children(pid):
            found.append((pid, int(rss.split()[1]) / 1024))
    return sorted(found)


def run_once(texts: dict[str, str]) -> tuple[dict[str, tuple[float, float, float]], list, list]:
    """One fresh application: each file's (library, answer, ready), and worker memory
    before and after the uploads."""
    with tempfile.TemporaryDirectory(prefix="hf-ready-bench-") as tmp:
        application = create_app({"TESTING": True, "DATA_DIR": tmp, **UNLIMITED_WRITES})
        try:
            client = application.test_client()
            # Every worker started first: their start is not what is measured.
            _upload(client, {"chat_template.jinja": b"{{ messages }}"})
            application.extensions["source_workers"].start(wait=True)
            render = {"template": "{{ messages[0].content }}", "messages": [_HELLO]}
            assert client.post("/api/render", json=render).status_code == 200
            before = worker_memory()
            times = {name: _timed(client, text) for name, text in texts.items()}
            return times, before, worker_memory()
        finally:
            application.extensions["sandbox_pool"].close()
            application.extensions["source_workers"].close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs (the median is printed)")
    args = parser.parse_args()
    texts = {shape.name: sizes.tokenizer_json(shape) for shape in sizes.SHAPES}
    runs, before, after = [], [], []
    for _ in range(args.runs):
        times, before, after = run_once(texts)
        runs.append(times)
    print(f"median of {args.runs} runs; goal: ready <= {GOAL_RATIO}x library + {GOAL_SECONDS} s")
    for name, text in texts.items():
        library, answered, ready = (statistics.median(r[name][i] for r in runs) for i in range(3))
        ratio = statistics.median(r[name][2] / r[name][0] for r in runs)
        met = sum(r[name][2] <= GOAL_RATIO * r[name][0] + GOAL_SECONDS for r in runs)
        print(
            f"{name:7} {len(text.encode()) / 1e6:5.1f} MB  library {library:6.3f} s  "
            f"answer {answered:6.3f} s ({answered / library:4.2f}x)  ready {ready:6.3f} s "
            f"({ratio:4.2f}x)  goal met in {met}/{args.runs} runs"
        )
    print("resident memory of each worker, before and after the last run's uploads:")
    sizes_before = dict(before)
    for pid, mib in after:
        print(f"  worker {pid}: {sizes_before.get(pid, 0.0):7.1f} -> {mib:7.1f} MiB")


if __name__ == "__main__":
    main()
