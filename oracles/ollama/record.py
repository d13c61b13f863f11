"""Extract Ollama's own renderer and parser tests (the families the engine models) as data.

Run by a maintainer, outside the test suite, on a snapshot of ollama/ollama:

    python -m oracles.ollama.record OLLAMA_GIT_DIR

It reads the `*_test.go` files below at the snapshot's HEAD (`git show`), reads the
table of each test function listed in `TABLES` with `goliteral`, turns Ollama's Go
values into the JSON its API speaks (api.Message, api.Tool, think values) and writes
`oracles/ollama/cases.json`: per file, the cases (test function, case name, its fields)
the values the test function names beside its table (`locals`: a shared input), and
every test function of the file not extracted, with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from oracles.ollama.gofile import assignments, environment, functions, table
from oracles.ollama.goliteral import tokenize
from oracles.ollama.govalues import normalize, unsupported
from oracles.ollama.record_renders import extract_renders
from oracles.ollama.record_steps import extract_steps

HERE = Path(__file__).resolve().parent
OUT = HERE / "cases.json"

#: File -> test function -> the table variable its cases are in.
TABLES: dict[str, dict[str, str]] = {
    "model/renderers/qwen3coder_test.go": {
        "TestQwen3CoderRenderer": "tests",
        "TestFormatToolCallArgument": "tests",
        "TestQwen3ToolDefinitionTypes": "tests",
    },
    "model/renderers/deepseek3_test.go": {"TestDeepSeekRenderer": "tests"},
    "model/renderers/glm47_test.go": {"TestGLM47Renderer": "tests"},
    "model/renderers/gemma4_reference_test.go": {
        "TestGemma4RendererMatchesReference": "tests",
        "TestGemma4RendererVariantsMatchExpectedGenerationPrompt": "tests",
    },
    "model/parsers/qwen3_test.go": {},
    "model/parsers/qwen3coder_test.go": {
        "TestQwenParserStreaming": "cases",
        "TestQwenToolParser": "steps",
        "TestQwenToolCallValueParsing": "cases",
        "TestQwenXMLTransform": "cases",
        "TestTrailingWhitespaceLen": "cases",
        "TestTrailingWhitespaceLenUnicode": "cases",
        "TestOverlapFunction": "cases",
    },
    "model/parsers/deepseek3_test.go": {
        "TestDeepSeekParser": "tests",
        "TestDeepSeekParser_Streaming": "tests",
        "TestDeepSeek3Parser_parseToolCallContent": "tests",
        "TestDeepSeekParser_EdgeCases": "tests",
    },
    "model/parsers/glm47_test.go": {},
    "model/parsers/qwen35_test.go": {},
    "model/parsers/glm46_test.go": {
        "TestGLM46ToolCallParsing": "cases",
        "TestRepairGLM46XML": "cases",
        "TestGLM46ParserRejectsIncompleteToolCallOnDone": "tests",
    },
    "model/parsers/gemma4_test.go": {
        "TestGemma4Parser": "tests",
        "TestGemma4Parser_StreamingSplitThinkingTag": "tests",
        "TestGemma4Parser_IgnoresExtraToolCallCloseTags": "tests",
        "TestGemma4Parser_IgnoresToolResponseBoundaryAfterToolCall": "tests",
        "TestGemma4ArgsToJSON": "tests",
        "TestRepairGemma4MissingStringDelimiter": "tests",
        "TestRepairGemma4MissingObjectClose": "tests",
        "TestRepairGemma4SingleQuotedValues": "tests",
        "TestRepairGemma4RawTerminalStringValue": "tests",
        "TestGemma4RepairCandidates": "tests",
        "TestParseGemma4ToolCall_RepairsIssue15315Examples": "tests",
        "TestParseGemma4ToolCall_RepairsMultipleProperties": "tests",
    },
    "model/renderers/lfm2_test.go": {
        "TestLFM2Renderer_ChatTemplateParity": "tests",
        "TestLFM2Renderer_Images": "tests",
    },
    "model/renderers/cohere_test.go": {},
    "model/parsers/lfm2_test.go": {
        "TestLFM2Parser": "tests",
        "TestLFM2Parser_Streaming": "tests",
        "TestLFM2Parser_parseToolCallContent": "tests",
        "TestLFM2Parser_parseToolCallsContent": "tests",
        "TestLFM2Parser_EdgeCases": "tests",
        "TestLFM2Parser_ImagePlaceholdersPreserved": "tests",
    },
    "model/parsers/cohere_test.go": {},
    "model/renderers/olmo3_test.go": {"TestOlmo3Renderer": "tests"},
    "model/renderers/olmo3_think_test.go": {"TestOlmo3ThinkRenderer": "tests"},
    "model/parsers/olmo3_test.go": {
        "TestOlmo3Parser": "tests",
        "TestOlmo3Parser_Streaming": "tests",
        "TestParseOlmo3FunctionCalls": "tests",
        "TestParseOlmo3Value": "tests",
    },
    "model/parsers/olmo3_think_test.go": {
        "TestOlmo3ThinkParser": "tests",
        "TestOlmo3ThinkParser_StreamingEdgeCases": "tests",
        "TestOlmo3ThinkParser_ThinkBoundary": "tests",
    },
    "harmony/harmonyparser_test.go": {
        "TestHeaderParsing": "tests",
        "TestHarmonyParserHeaderEvent": "tests",
        "TestHarmonyParserNonStreaming": "tests",
        "TestHarmonyParserStreaming": "cases",
        "TestFunctionConvertToValidChars": "tests",
        "TestFunctionConvertAndAdd": "tests",
    },
}

#: Files whose parser tests are statements, read by record_steps.py (beside the tables
#: named in TABLES).
STEP_FILES = (
    "model/parsers/qwen3_test.go",
    "model/parsers/glm47_test.go",
    "model/parsers/qwen35_test.go",
    "model/parsers/lfm2_test.go",
    "model/parsers/cohere_test.go",
)

#: Files whose renderer tests are statements, read by record_renders.py (beside tables).
RENDER_FILES = ("model/renderers/lfm2_test.go", "model/renderers/cohere_test.go")

#: Test functions with no table whose inputs and expectations are all named values
#: (`chunks := ...`, `expectedContent := ...`): one case of those values.
LOCAL_CASES = frozenset({"TestOlmo3ThinkParser_Streaming"})

#: Go constants the tests name that are declared outside the test file, as their names.
CONSTANTS = {"Olmo31Think": "Olmo31Think", "Olmo3Think32B": "Olmo3Think32B"}

#: Why a test function with no table is left out.
NOT_A_TABLE = (
    "not table-driven: its inputs and expectations are Go statements (calls and if "
    "checks in the function body), which the extractor does not read as data"
)

#: Test functions left out for another reason than having no table, and why.
SKIP_REASONS: dict[str, str] = {
    "TestGemma4RendererMatchesJinja2ExpandedParity": (
        "its expectations are not written in the test: it renders Google's Jinja template "
        "with Python (VERIFY_JINJA2=1 and uv) and compares; skipped upstream without them"
    ),
    "TestGemma4RendererKnownJinja2Differences": (
        "it compares fragments of Google's Jinja template rendered by Python (VERIFY_JINJA2=1 "
        "and uv), which the test does not hold as data; skipped upstream without them"
    ),
    "TestGemma4RendererCanonicalToolContinuations": (
        "its table holds Go renderer values (&Gemma4Renderer{...}) and its input is built in "
        "statements; its two expectations are joined from Go string variables"
    ),
    "TestGemma4SizeTemplateFixturesDifferAtGenerationPrompt": (
        "it reads Google's Jinja templates from Ollama's testdata/ and compares them, not a "
        "renderer's output"
    ),
    "TestGLM46ParserStreaming": (
        "a table of GLM-4.6's internal streaming events step by step; the engine's parser "
        "reads a whole answer and does not expose those events"
    ),
    "TestGLMToolCallXMLOrderPreservation": (
        "it tests that Go's encoding/xml keeps document order, not Ollama's parser"
    ),
    "TestDeepSeekParser_HasThinkingSupport": (
        "it checks the parser's HasThinkingSupport flag, which the PARSERS interface does not carry"
    ),
    "TestLFM2Parser_HasThinkingSupport": (
        "it checks the parser's HasThinkingSupport flag, which the PARSERS interface does not carry"
    ),
    "TestLFM2Parser_HasToolSupport": (
        "it checks the parser's HasToolSupport flag, which the PARSERS interface does not carry"
    ),
    "TestLFM2Parser_Init": (
        "it checks the tools Init returns and the parser's internal start state, which the "
        "engine's parser does not expose"
    ),
    "TestCohereParserRegistered": (
        "it checks ParserForName's registration and the HasToolSupport/HasThinkingSupport "
        "flags, which the PARSERS interface does not carry"
    ),
    "TestCohereParseStreamsBeforeDone": (
        "its inputs are a literal table in a for-range loop and its check is that content "
        "comes out before the last chunk (done=false), which the statement reader does not read"
    ),
    "TestOlmo3Parser_HasToolSupport": (
        "it checks the parser's HasToolSupport flag, which the PARSERS interface does not carry"
    ),
    "TestOlmo3Parser_HasThinkingSupport": (
        "it checks the parser's HasThinkingSupport flag, which the PARSERS interface does not carry"
    ),
    "TestOlmo3ThinkParser_HasToolSupport": (
        "it checks the parser's HasToolSupport flag, which the PARSERS interface does not carry"
    ),
    "TestOlmo3ThinkParser_HasThinkingSupport": (
        "it checks the parser's HasThinkingSupport flag, which the PARSERS interface does not carry"
    ),
    "TestOlmo3ThinkParser_StateTransitions": (
        "it checks the parser's internal state after Init and Add, which the engine's parser "
        "does not expose"
    ),
    "TestOlmo3ThinkParser_Init": (
        "it checks the tools Init returns and the parser's internal start state, which the "
        "engine's parser does not expose"
    ),
    "TestOlmo3ThinkParser_InitWithoutPrefill": (
        "it checks the parser's internal start state after Init, which the engine's parser "
        "does not expose"
    ),
    "TestCohereRendererRegistered": (
        "it checks rendererForName's registration and LeadingBOS (<BOS_TOKEN>, which Ollama "
        "adds when it tokenizes), not a prompt"
    ),
}


def git_show(repo: str, path: str) -> str:
    """The text of `path` at the snapshot's HEAD."""
    return subprocess.run(
        ["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout


def case_name(row: Any, index: int) -> str:
    """A case's name: its name or desc field (a positional row's first string), else
    its index."""
    if isinstance(row, list):
        return row[0] if row and isinstance(row[0], str) else f"#{index}"
    for key in ("name", "desc", "description"):
        if isinstance(row.get(key), str):
            return row[key]
    return f"#{index}"


def extract_file(text: str, wanted: dict[str, str]) -> dict[str, Any]:
    """The cases of one test file and its test functions left out, with reasons."""
    env = {**CONSTANTS, **environment(text)}
    cases, skipped, local = [], {}, {}
    for name, (body, end, tokens) in functions(text).items():
        if not name.startswith("Test"):
            continue
        if name in LOCAL_CASES:
            fields = normalize(assignments(tokens, body, end, env))
            cases.append({"test": name, "name": "statements", "fields": fields})
            continue
        if name not in wanted:
            skipped[name] = SKIP_REASONS.get(name, NOT_A_TABLE)
            continue
        given = normalize(assignments(tokens, body, end, env))
        given.pop(wanted[name], None)
        if given:
            local[name] = given
        for index, row in enumerate(table(tokens, body, end, wanted[name], env)):
            data = normalize(row)
            case = {"test": name, "name": case_name(data, index), "fields": data}
            missing = unsupported(data)
            if missing:
                case["unsupported"] = missing
            cases.append(case)
    return {"cases": cases, "locals": local, "skipped": skipped}


def _add_statements(part: dict[str, Any], found: tuple[list, dict[str, str]]) -> None:
    """Add a file's statement-style cases to its table cases; what is still left out
    keeps a reason (SKIP_REASONS first)."""
    cases, skipped = found
    part["cases"].extend(cases)
    read = {case["test"] for case in cases}
    for name in list(part["skipped"]):
        if name in read:
            del part["skipped"][name]
    for name, why in skipped.items():
        part["skipped"][name] = SKIP_REASONS.get(name, why)


def names(text: str) -> list[str]:
    """The string cases of a Go file's switch statements (`case "a", "b":`)."""
    tokens = tokenize(text)
    found = []
    for i, (_, word) in enumerate(tokens):
        j = i + 1
        while word == "case" and tokens[j][0] == "str":
            found.append(tokens[j][1].strip('"'))
            j += 2 if tokens[j + 1][1] == "," else 1
    return found


def main(repo: str) -> None:
    """Extract every file in TABLES from the snapshot at `repo` into cases.json."""
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()

    files = {}
    for path, wanted in TABLES.items():
        text = git_show(repo, path)
        files[path] = extract_file(text, wanted)
        for group, extract in ((STEP_FILES, extract_steps), (RENDER_FILES, extract_renders)):
            if path in group:
                _add_statements(files[path], extract(text, environment(text), tuple(wanted)))
    doc = {
        "about": "Ollama's own renderer and parser tests, extracted as data by "
        "oracles/ollama/record.py (inputs and expected outputs are Ollama's facts).",
        "ollama": commit,
        # The names a Modelfile's RENDERER and PARSER may give (rendererForName's and
        # ParserForName's cases).
        "renderer_names": names(git_show(repo, "model/renderers/renderer.go")),
        "parser_names": names(git_show(repo, "model/parsers/parsers.go")),
        "files": files,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    total = sum(len(f["cases"]) for f in files.values())
    print(f"{total} cases from {len(files)} files at {commit}")


if __name__ == "__main__":
    main(sys.argv[1])
