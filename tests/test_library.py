"""The template library: every entry renders exactly as its model's own template."""

from __future__ import annotations

import pytest

from app.problems import TemplateProblem
from app.render.engines import render_exactly
from app.sources.library import Library
from tests.support import REPO
from tests.support.corpus import case_request, load_conversations
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

LIBRARY = Library()
ENTRIES = [entry for entry in LIBRARY.entries if entry.upstream]
CASES = load_conversations()


def outcome(template: str, case: dict) -> tuple:
    try:
        rendered = render_exactly(case_request(case, template))
    except TemplateProblem as problem:
        return ("error", problem.type, problem.message)
    return ("ok", rendered.prompt, rendered.generation_spans)


def test_the_library_has_the_well_known_templates():
    assert len(ENTRIES) >= 14
    names = {entry.name for entry in LIBRARY.entries}
    assert {"chatml", "qwen2.5", "qwen3", "llama3.1", "mistral-nemo", "gpt-oss"} <= names


@needs_shared
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_entry_renders_exactly_as_its_upstream_template(entry):
    ours = LIBRARY.template(entry.name)
    upstream = (TEMPLATES_DIR / entry.upstream).read_text(encoding="utf-8")
    assert ours != upstream, "a library entry is our own text, not a copy"
    rendered = 0
    for case in CASES:
        expected, actual = outcome(upstream, case), outcome(ours, case)
        assert actual == expected, f"{entry.name} differs from {entry.upstream} on {case['name']}"
        rendered += expected[0] == "ok"
    assert rendered >= 5, f"{entry.name}: too few corpus cases render to prove anything"


@pytest.mark.parametrize("entry", LIBRARY.entries, ids=lambda e: e.name)
def test_manifest_entries_are_complete(entry):
    assert entry.title and entry.family and entry.notes
    assert entry.end_of_turn and entry.stop_token
    assert LIBRARY.template(entry.name)


def test_the_page_guide_lists_every_entry():
    guide = (REPO / "docs" / "using-the-page.md").read_text(encoding="utf-8")
    library = guide.split("\n## Template library", 1)[1]
    for entry in LIBRARY.entries:
        assert f"| `{entry.name}` |" in library, f"the page's guide does not list {entry.name}"


def test_library_api(client):
    listed = client.get("/api/library").json["templates"]
    assert [t["name"] for t in listed] == [e.name for e in LIBRARY.entries]
    assert {"name", "title", "family", "upstream", "notes"} <= listed[0].keys()
    one = client.get("/api/library/qwen3").json
    assert one["template"] == LIBRARY.template("qwen3")
    assert client.get("/api/library/no-such-template").status_code == 404
