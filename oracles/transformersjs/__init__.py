"""@huggingface/jinja run directly under Node: the reference of the transformers.js engine.

`render_directly` sends every case to one Node run of `render_direct.cjs`, which calls
the library as transformers.js's apply_chat_template does, independently of the engine's
own runner (`app/render/engines/transformersjs/runner.cjs`).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.support import REPO

SCRIPT = Path(__file__).with_name("render_direct.cjs")

#: ("ok", prompt) or ("error", type, message), as `tests.support.corpus.our_outcome`.
Outcome = tuple


def locked_npm_version(package: str) -> str:
    """The version of an npm package that package-lock.json pins."""
    lock = json.loads((REPO / "package-lock.json").read_text(encoding="utf-8"))
    return lock["packages"][f"node_modules/{package}"]["version"]


def _clock(now: datetime | None) -> list[int] | None:
    if now is None:
        return None
    return [now.year, now.month, now.day, now.hour, now.minute, now.second]


def render_directly(cases: list[dict[str, Any]], now: datetime | None = None) -> list[Outcome]:
    """Each case (`template` plus the corpus fields) rendered by @huggingface/jinja in one
    Node process, with the clock pinned to `now`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as file:
        json.dump([{**case, "now": _clock(now)} for case in cases], file, ensure_ascii=False)
        file.flush()
        done = subprocess.run(
            ["node", str(SCRIPT), file.name],
            capture_output=True, check=True, timeout=600, env={**os.environ, "LC_ALL": "C"},
        )  # fmt: skip
    return [
        ("ok", result["prompt"])
        if "error" not in result
        else ("error", result["error"]["type"], result["error"]["message"])
        for result in json.loads(done.stdout)
    ]
