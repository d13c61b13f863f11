"""Extract Ollama's tests of what `ollama create` sets by a GGUF's architecture, and of
how the RENDERER `gemma4` resolves, as data.

Run by a maintainer, outside the test suite, on a snapshot of ollama/ollama:

    python -m oracles.ollama.record_create OLLAMA_GIT_DIR

`server/routes_create_test.go`'s create tests are written out step by step, not as
tables: each is read for the GGUF's KVs (`general.architecture`, and a range over
architectures), the create request's Renderer and Parser, and the config's expected
RENDERER and PARSER; constants are resolved from the test and `server/*.go`.
`server/gemma4_test.go`'s `TestResolveGemma4Renderer` is a table of models (name,
short name, the config's renderer and model type) and the renderer each resolves to.
Writes `oracles/ollama/create_cases.json`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from oracles.ollama.record import git_show

OUT = Path(__file__).resolve().parent / "create_cases.json"
CREATE_FILE, RESOLVE_FILE = "server/routes_create_test.go", "server/gemma4_test.go"
CONSTANTS_FILE = "server/renderer_resolution.go"
CREATE_TESTS = (
    "TestCreateGemma4KeepsDynamicRendererAlias",
    "TestCreateLagunaDetectsRendererParser",
    "TestCreateNemotronHDefaultsRendererParser",
    "TestCreateNemotronHDefaultsKeepExplicitRendererParser",
)
_STRING = r'"((?:[^"\\]|\\.)*)"'


def constants(*texts: str) -> dict[str, str]:
    """String constants declared in `texts` (`name = "value"`, in a const block or not)."""
    pairs = re.findall(r"\b(\w+)\s*=\s*" + _STRING, "\n".join(texts))
    return {name: json.loads(f'"{value}"') for name, value in pairs}


def value(text: str, known: dict[str, str]) -> str:
    """A Go string literal or a constant's value."""
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    return known[text]


def _body(test_text: str, name: str) -> str:
    """The source text of the test function `name`."""
    start = test_text.index(f"func {name}(")
    end = test_text.find("\nfunc ", start + 1)
    return test_text[start : end if end >= 0 else len(test_text)]


def create_cases(test_text: str, known: dict[str, str]) -> list[dict[str, Any]]:
    """One case per architecture each create test runs."""
    cases = []
    for name in CREATE_TESTS:
        body = _body(test_text, name)
        local = known | constants(body)
        ranged = re.search(r"range \[\]string\{([^}]*)\}", body)
        if ranged:
            architectures = [value(a, local) for a in ranged.group(1).split(",") if a.strip()]
        else:
            architectures = [value(re.search(r'"general\.architecture":\s*("[^"]*")', body)
                                   .group(1), local)]  # fmt: skip
        count = re.search(r'"general\.parameter_count":\s*uint64\(([\d_]+)\)', body)
        request = body[body.index("api.CreateRequest{") :]
        request = request[: request.index("})")]
        asked = {key: value(v, local) for key, v in
                 re.findall(r"\b(Renderer|Parser):\s*(\w+|\"[^\"]*\")", request)}  # fmt: skip
        expected = {key: value(v, local) for key, v in
                    re.findall(r"cfg\.(Renderer|Parser) != (\w+|\"[^\"]*\")", body)}  # fmt: skip
        for architecture in architectures:
            cases.append({
                "test": name,
                "name": architecture,
                "architecture": architecture,
                "parameter_count": int(count.group(1).replace("_", "")) if count else None,
                "renderer": asked.get("Renderer"),
                "parser": asked.get("Parser"),
                "want_renderer": expected["Renderer"],
                "want_parser": expected["Parser"],
            })  # fmt: skip
    return cases


def resolve_cases(test_text: str, known: dict[str, str]) -> list[dict[str, Any]]:
    """`TestResolveGemma4Renderer`'s rows; a nil model is left out (no model to run)."""
    rows = re.split(r"\n\t\t\{\n", _body(test_text, "TestResolveGemma4Renderer"))[1:]
    cases = []
    for row in rows:
        fields = dict(re.findall(r"\b(name|Name|ShortName|want):\s*(\w+|\"[^\"]*\")", row))
        if re.search(r"model:\s*nil", row):
            continue
        config = re.search(r"testConfigWithRenderer(?:AndType)?\(([^)]*)\)", row)
        arguments = [value(a, known) for a in config.group(1).split(",")]
        cases.append({
            "test": "TestResolveGemma4Renderer",
            "name": value(fields["name"], known),
            "model_name": value(fields["Name"], known) if "Name" in fields else "",
            "short_name": value(fields["ShortName"], known) if "ShortName" in fields else "",
            "renderer": arguments[0],
            "model_type": arguments[1] if len(arguments) > 1 else "",
            "want": value(fields["want"], known),
        })  # fmt: skip
    return cases


def main(repo: str) -> None:
    """Write the cases of the snapshot at `repo` to create_cases.json."""
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    known = constants(git_show(repo, CONSTANTS_FILE))
    doc = {
        "about": "Ollama's tests of what `ollama create` sets by a GGUF's architecture and "
        "of the gemma4 renderer's resolution, extracted as data by "
        "oracles/ollama/record_create.py (inputs and expectations are Ollama's facts).",
        "ollama": commit,
        "files": [CREATE_FILE, RESOLVE_FILE],
        "cases": create_cases(git_show(repo, CREATE_FILE), known)
        + resolve_cases(git_show(repo, RESOLVE_FILE), known),
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(doc['cases'])} cases at {commit}")


if __name__ == "__main__":
    main(sys.argv[1])
