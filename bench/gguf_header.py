"""Benchmark the GGUF header reader: `python -m bench.gguf_header`.

Builds a header with 150k tokens and 150k merges, then three files sharing it: the header
alone (what gguf-py's GGUFReader reads), and sparse 10 MB and 40 GB files. Prints our time
against GGUFReader's, our time on the small and the huge file (prefix reads only), and
peak memory. Everything lives in a temporary directory that is removed at the end.
"""

from __future__ import annotations

import os
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFWriter

from app.sources.gguf import GGUFHeader, IncompleteHeader, read_header

N_TOKENS = 150_000
N_MERGES = 150_000
FIRST_READ = 1 << 20  # what an HTTP client would fetch first
SIZES = {"10 MB": 10 * 10**6, "40 GB": 40 * 10**9}


def build_header(path: Path) -> None:
    """A llama-like vocab with a chat template and one tiny tensor, written by gguf-py."""
    writer = GGUFWriter(path, arch="llama")
    writer.add_name("bench")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"Ġtok{i}é" if i % 7 else f"<|special_{i}|>" for i in range(N_TOKENS)])
    writer.add_token_merges([f"Ġt ok{i}" for i in range(N_MERGES)])
    writer.add_token_types([1] * N_TOKENS)
    writer.add_token_scores([float(-i) for i in range(N_TOKENS)])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    writer.add_tensor("token_embd.weight", np.zeros(16, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def sparse_copy(header: Path, path: Path, size: int) -> None:
    """The same header, then a hole up to `size` bytes (no disk space used)."""
    path.write_bytes(header.read_bytes())
    os.truncate(path, size)


def read_prefix(path: Path) -> tuple[GGUFHeader, int]:
    """Read as a remote client would: a first chunk, then grow until the header is whole."""
    with path.open("rb") as file:
        buf = file.read(FIRST_READ)
        while isinstance(result := read_header(buf), IncompleteHeader):
            want = max(result.need_bytes, 2 * len(buf))
            more = file.read(want - len(buf))
            if not more:
                raise SystemExit(f"{path.name}: file ends before the header does")
            buf += more
    return result, len(buf)


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """The fastest of `runs` calls, in seconds (the least disturbed by other work)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_bytes(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="gguf-bench-") as tmp:
        header_file = Path(tmp) / "header.gguf"
        build_header(header_file)
        files = {label: Path(tmp) / f"{label.replace(' ', '')}.gguf" for label in SIZES}
        for label, size in SIZES.items():
            sparse_copy(header_file, files[label], size)
        print(f"header file: {header_file.stat().st_size / 1e6:.1f} MB, {N_TOKENS} tokens")

        data = header_file.read_bytes()
        ours = best_of(5, lambda: read_header(data))
        theirs = best_of(1, lambda: GGUFReader(header_file))
        print(f"read_header:          {ours * 1000:8.1f} ms")
        print(f"gguf-py GGUFReader:   {theirs * 1000:8.1f} ms   ({theirs / ours:.0f}x slower)")

        for label, path in files.items():
            header, read = read_prefix(path)
            assert len(header.fields["tokenizer.ggml.tokens"]) == N_TOKENS
            seconds = best_of(5, lambda path=path: read_prefix(path))
            print(f"prefix read, {label}:   {seconds * 1000:8.1f} ms   ({read / 1e6:.1f} MB read)")

        print(f"peak memory, ours:    {peak_bytes(lambda: read_header(data)) / 2**20:8.1f} MiB")
        reader_peak = peak_bytes(lambda: GGUFReader(header_file))
        print(f"peak memory, gguf-py: {reader_peak / 2**20:8.1f} MiB")


if __name__ == "__main__":
    main()
