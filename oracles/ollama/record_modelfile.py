"""Extract the Modelfile tests of Ollama's parser package (`parser/parser_test.go`) that
say how MESSAGE commands are read, as data.

Run by a maintainer, outside the test suite, on a snapshot of ollama/ollama:

    python -m oracles.ollama.record_modelfile OLLAMA_GIT_DIR

Its tables are positional (`{input, expected, err}` rows of an anonymous struct): the
field names are read from the struct's declaration. An expected error is written as
Ollama's error text (its `errors.New` message, read from `parser/parser.go`) and, for a
`*ParserError`, its line. Writes `oracles/ollama/modelfile_cases.json`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from oracles.ollama.gofile import environment, find, functions, table
from oracles.ollama.goliteral import Reader
from oracles.ollama.govalues import normalize
from oracles.ollama.record import git_show

OUT = Path(__file__).resolve().parent / "modelfile_cases.json"
TEST_FILE, SOURCE_FILE = "parser/parser_test.go", "parser/parser.go"
#: Test function -> its table variable.
TABLES = {"TestParseFileMessages": "cases", "TestCreateRequest": "cases"}
#: Go's io.ErrUnexpectedEOF, by its text.
UNEXPECTED_EOF = "unexpected EOF"


def field_names(tokens: list[tuple[str, str]], start: int, var: str) -> list[str]:
    """The field names of the anonymous struct the table `var` is a slice of."""
    reader = Reader(tokens, find(tokens, var, ":=", "[", "]", "struct", "{", start=start) + 6)
    names = []
    while reader.peek() != "}":
        names.append(reader.take())
        reader.skip_type()
    return names


def error_texts(source: str) -> dict[str, str]:
    """The parser's error variables and their messages (`errX = errors.New("...")`)."""
    pattern = re.compile(r'(err\w+)\s*=\s*errors\.New\("((?:[^"\\]|\\.)*)"\)')
    return {name: json.loads(f'"{text}"') for name, text in pattern.findall(source)}


def expected_error(value: Any, errors: dict[str, str]) -> dict[str, Any] | None:
    """A row's `err` as data: Ollama's message, and its line for a ParserError."""
    if value is None:
        return None
    text = json.dumps(value)
    if "ErrUnexpectedEOF" in text:
        return {"error": UNEXPECTED_EOF, "line": None}
    message = next((errors[name] for name in errors if name in text), None)
    if message is None:
        raise ValueError(f"an expected error the recorder cannot read: {text}")
    return {"error": message, "line": value.get("LineNumber")}


def extract(test_text: str, source_text: str) -> list[dict[str, Any]]:
    """The cases of every table in `TABLES`, with named fields."""
    env, errors, cases = environment(test_text), error_texts(source_text), []
    for name, var in TABLES.items():
        body, end, tokens = functions(test_text)[name]
        fields = field_names(tokens, body, var)
        for index, row in enumerate(table(tokens, body, end, var, env)):
            data = dict(zip(fields, normalize(row), strict=True))
            if "err" in data:
                data["err"] = expected_error(data["err"], errors)
            cases.append({"test": name, "name": f"#{index}", "fields": data})
    return cases


def main(repo: str) -> None:
    """Write the cases of the snapshot at `repo` to modelfile_cases.json."""
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    doc = {
        "about": "Ollama's Modelfile parser tests about MESSAGE, extracted as data by "
        "oracles/ollama/record_modelfile.py (inputs and expectations are Ollama's facts).",
        "ollama": commit,
        "file": TEST_FILE,
        "cases": extract(git_show(repo, TEST_FILE), git_show(repo, SOURCE_FILE)),
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(doc['cases'])} cases at {commit}")


if __name__ == "__main__":
    main(sys.argv[1])
