"""The Edge-LLM recording (of Edge-LLM's own code: docs/engines/edge-llm.md) is whole and
matches what it was made of.

Every shared template is recorded under its current SHA-256, with a load verdict in
Inja's wording, and every conversation of the corpus (plus the recorder's own extra
ones) has an outcome whose context is stored. A failing SHA-256 means the template or
the corpus changed since the recording: record again.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from oracles.edge_llm import RECORDED, recorded
from tests.support import REPO
from tests.support.shared_data import needs_shared, template_files

pytestmark = pytest.mark.skipif(not RECORDED.exists(), reason="no Edge-LLM recording")

# The corpus file is read directly (not through tests.support.corpus, which imports the
# app): this test checks the recording only.
CONVERSATIONS_FILE = REPO / "tests" / "support" / "corpus" / "conversations.json"

#: Inja's parser error as Edge-LLM's loader reports it (exceptions.hpp: type, line:column).
PARSER_ERROR = re.compile(r"^\[inja\.exception\.parser_error\] \(at \d+:\d+\) \S")
#: The context keys chatTemplate.cpp always sets, in the order it sets them.
CONTEXT_KEYS = [
    "messages",
    "tools",
    "add_generation_prompt",
    "bos_token",
    "eos_token",
    "strftime_now",
    "enable_thinking",
    "parallel_tool_calls",
    "tool_choice",
    "continue_final_message",
]


def sha256(data: bytes) -> str:
    """Hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


def expected_cases() -> set[str]:
    """Every case name the recorder sends each template that loads."""
    corpus = {case["name"] for case in json.loads(CONVERSATIONS_FILE.read_text("utf-8"))}
    suffix = recorded()["string_argument_variants"]
    names = corpus | {case["name"] for case in recorded()["extra_conversations"]}
    # The recorder sends the string-arguments tool rounds a second time, parsed.
    return names | {name + suffix for name in corpus if name.endswith("-string-args")}


def test_header_names_the_sources() -> None:
    """The fork, commit and the SHA-256 of every compiled source are recorded."""
    source = recorded()["source"]
    assert source["repository"] == "guswns531/TensorRT-Edge-LLM"
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert "cpp/chatTemplate/chatTemplate.cpp" in source["sha256"]
    assert "3rdParty/inja/include/inja/inja.hpp" in source["sha256"]
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in source["sha256"].values())


def test_corpus_is_the_recorded_one() -> None:
    """The conversations have not changed since the recording."""
    assert recorded()["corpus_sha256"] == sha256(CONVERSATIONS_FILE.read_bytes())


@needs_shared
def test_every_shared_template_is_recorded_at_its_current_sha() -> None:
    """One entry per shared template, none extra, each at the template's SHA-256."""
    files = {path.stem: sha256(path.read_bytes()) for path in template_files()}
    entries = recorded()["templates"]
    assert sorted(entries) == sorted(files)
    stale = [name for name, digest in files.items() if entries[name]["sha256"] != digest]
    assert not stale, f"templates changed since the recording: {stale}"


@pytest.mark.parametrize("name", sorted(recorded()["templates"]) if RECORDED.exists() else [])
def test_entry_is_well_formed(name: str) -> None:
    """A load verdict; for a template that loads, every case with an outcome and context."""
    entry = recorded()["templates"][name]
    load = entry["load"]
    if not load["ok"]:
        assert PARSER_ERROR.match(load["error"]), load["error"]
        assert "renders" not in entry
        return
    assert isinstance(load["expects_content_blocks"], bool)
    assert isinstance(load["supports_developer_role"], bool)
    renders = entry["renders"]
    assert set(renders) == expected_cases()
    contexts = recorded()["contexts"]
    for case, record in renders.items():
        assert record["outcome"] in ("ok", "error"), case
        if record["outcome"] == "ok":
            assert isinstance(record["prompt"], str)
            assert 0 <= record["system_prompt_length"] <= len(record["prompt"])
        else:
            assert record["error"], case
        context = contexts[record["context"]]
        keys = [key for key in context if key != "reasoning_effort"]
        assert keys == CONTEXT_KEYS, case


def test_firefunction_refused_at_line_4() -> None:
    """The issue's example: firefunction-v2's `{% filter %}` fails Edge-LLM's load."""
    load = recorded()["templates"]["fireworks-ai-llama-3-firefunction-v2"]["load"]
    assert load == {
        "ok": False,
        "error": "[inja.exception.parser_error] (at 4:5) expected statement, got 'filter'",
    }
