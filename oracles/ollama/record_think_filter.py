"""Extract Ollama's test of `filterThinkTags` (`server/routes_test.go`'s
`TestFilterThinkTags`), as data.

Run by a maintainer, outside the test suite, on a snapshot of ollama/ollama:

    python -m oracles.ollama.record_think_filter OLLAMA_GIT_DIR

Its table rows are the messages, the model (its config's family, or its name) and the
messages /api/chat renders. Writes `oracles/ollama/think_filter_cases.json`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from oracles.ollama.gofile import environment, functions, table
from oracles.ollama.govalues import normalize
from oracles.ollama.record import git_show

OUT = Path(__file__).resolve().parent / "think_filter_cases.json"
TEST_FILE, TEST, TABLE = "server/routes_test.go", "TestFilterThinkTags", "testCases"


def main(repo: str) -> None:
    """Write the cases of the snapshot at `repo` to think_filter_cases.json."""
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    text = git_show(repo, TEST_FILE)
    body, end, tokens = functions(text)[TEST]
    rows = normalize(table(tokens, body, end, TABLE, environment(text)))
    cases = []
    for index, row in enumerate(rows):
        model = row["model"]
        cases.append({
            "test": TEST,
            "name": f"#{index}",
            "messages": row["msgs"],
            "family": (model.get("Config") or {}).get("ModelFamily"),
            "model_name": model.get("name") or model.get("Name"),
            "want": row["want"],
        })  # fmt: skip
    doc = {
        "about": "Ollama's test of filterThinkTags, extracted as data by "
        "oracles/ollama/record_think_filter.py (inputs and expectations are Ollama's facts).",
        "ollama": commit,
        "file": TEST_FILE,
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases at {commit}")


if __name__ == "__main__":
    main(sys.argv[1])
