"""Build and run the llama.cpp answer oracle (`bench/llamacpp_answers/`).

The oracle is a small C++ program linked against llama.cpp's own `common` library: it
applies a chat template to a request the way llama-server does and parses completions
with the parser the library builds for it. This module configures and builds it in a
build folder outside the repository's tracked files (the recorder's `--build`), and runs
it on JSON-line requests.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The harness sources in the repository.
HARNESS_DIR = Path(__file__).with_name("llamacpp_answers")
HARNESS = "llamacpp-answers"
TEST_CHAT_DUMP = "llamacpp-test-chat-dump"


def _run(command: list[str], log: Path) -> None:
    """Run a build step niced, its output into `log`; raise with the log's tail on failure."""
    with log.open("a", encoding="utf-8") as out:
        done = subprocess.run(
            ["nice", "-n", "10", *command], stdout=out, stderr=subprocess.STDOUT, check=False
        )
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(f"{' '.join(command)} failed:\n{tail}")


def configure(build: Path, llama_cpp: Path, test_chat_copy: Path | None = None) -> None:
    """Configure the build folder (CPU only, Release, the chat library and the harness)."""
    build.mkdir(parents=True, exist_ok=True)
    command = [
        "cmake",
        "-S",
        str(HARNESS_DIR),
        "-B",
        str(build),
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DLLAMA_CPP_DIR={llama_cpp}",
    ]
    if not (build / "CMakeCache.txt").exists():
        command[1:1] = ["-G", "Ninja"]
    if test_chat_copy is not None:
        command.append(f"-DLLAMACPP_TEST_CHAT_DUMP={test_chat_copy}")
    _run(command, build / "configure.log")


def build_target(build: Path, target: str, jobs: int = 2) -> Path:
    """Build `target` (two jobs by default: the machine is shared); the program's path."""
    _run(["cmake", "--build", str(build), "--target", target, f"-j{jobs}"], build / "build.log")
    return build / target


def ensure_harness(build: Path, llama_cpp: Path) -> Path:
    """The harness program, configured and built as needed (ninja skips what is current)."""
    if not (build / "CMakeCache.txt").exists():
        configure(build, llama_cpp)
    return build_target(build, HARNESS)


def run_harness(
    program: Path, requests: Iterable[dict[str, Any]], log: Path
) -> list[dict[str, Any]]:
    """Feed `requests` to the harness; its answers in order (one per request)."""
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests)
    env = dict(os.environ, TZ="UTC")  # templates that print today's date read it in UTC
    with log.open("w", encoding="utf-8") as err:
        done = subprocess.run(
            [str(program), str(log.with_suffix(".handler.log"))],
            input=lines.encode("utf-8"),
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"{program} exited {done.returncode}; see {log}")
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines() if line]
    if len(answers) != lines.count("\n"):
        raise RuntimeError(f"{program} answered {len(answers)} of {lines.count(chr(10))}")
    return answers
