"""Build the Go worker (`ollama-gotemplate`) from its sources with the Go toolchain.

`./playground` runs this (`python -m app.render.engines.ollama.gotemplate.build`) after
installing Debian's golang-go; the Docker image builds the same sources in a stage of its
own. The binary is a build product, never committed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from app.render.engines.ollama.gotemplate.runner import BINARY

SOURCES = BINARY.parent


def stale() -> bool:
    """Whether the binary is missing or older than one of its sources."""
    if not BINARY.is_file():
        return True
    built = BINARY.stat().st_mtime
    sources = [*SOURCES.glob("*.go"), SOURCES / "go.mod"]
    return any(source.stat().st_mtime > built for source in sources)


def build() -> None:
    """Build the binary when stale; raises `RuntimeError` saying why it could not."""
    if not stale():
        return
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("Go is not installed: apt-get install golang-go (Go 1.19 or later).")
    # A cache of its own when HOME is not writable (CI users, containers).
    cache = os.environ.get("GOCACHE") or str(Path(tempfile.gettempdir()) / "playground-gocache")
    env = {**os.environ, "CGO_ENABLED": "0", "GOCACHE": cache}
    command = [go, "build", "-trimpath", "-o", str(BINARY), "."]
    done = subprocess.run(command, cwd=SOURCES, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"go build failed:\n{done.stderr}")


if __name__ == "__main__":
    try:
        build()
    except RuntimeError as error:
        sys.exit(str(error))
