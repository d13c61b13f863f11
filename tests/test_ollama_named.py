"""`template.Named` against Ollama's own test data: every line of its
`testdata/templates.jsonl` gives the name Ollama's TestNamed expects, Llama 3.1 and 3.3
give llama3-instruct at distance 0, and the whole index is measured within the render
budget."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.render.engines.ollama.template import named as named_module
from app.render.engines.ollama.template.named import (
    SETTING,
    TemplatesFolderError,
    load_index,
    named,
    unavailable,
)
from tests.support.shared_data import OLLAMA, TEMPLATES_DIR, require_ollama

require_ollama()


def _cases() -> list[tuple[str, str]]:
    lines = (OLLAMA / "testdata" / "templates.jsonl").read_text(encoding="utf-8").splitlines()
    return [pair for line in lines if line.strip() for pair in json.loads(line).items()]


@pytest.mark.parametrize(("expected", "jinja"), _cases(), ids=[name for name, _ in _cases()])
def test_named_gives_what_ollamas_test_expects(expected: str, jinja: str) -> None:
    match = named(jinja, load_index(OLLAMA))
    assert match is not None, "no entry within distance 100"
    assert match.entry.name == expected
    assert match.entry.go_template.strip()  # Ollama's test: the template is not empty


def test_every_line_of_ollamas_test_data_is_read() -> None:
    assert len(_cases()) == 35


LLAMA_3_1 = (TEMPLATES_DIR / "meta-llama-Llama-3.1-8B-Instruct.jinja").read_text(encoding="utf-8")


@pytest.mark.parametrize("model", ["Llama-3.1-8B", "Llama-3.3-70B"])
def test_llama_3_1_and_3_3_give_llama3_instruct_at_distance_0(model: str) -> None:
    jinja = (TEMPLATES_DIR / f"meta-llama-{model}-Instruct.jinja").read_text(encoding="utf-8")
    match = named(jinja, load_index(OLLAMA))
    assert (match.entry.name, match.distance) == ("llama3-instruct", 0)
    assert ".Tools" not in match.entry.go_template  # what `ollama create` drops
    assert match.entry.stop == tuple(
        json.loads((OLLAMA / "llama3-instruct.json").read_text(encoding="utf-8"))["stop"]
    )


def test_a_template_far_from_every_entry_is_not_adopted() -> None:
    jinja = (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    assert named(jinja, load_index(OLLAMA)) is None


def test_the_first_of_equal_distances_is_kept() -> None:
    entry = load_index(OLLAMA)[1]
    twin = replace(entry, name="twin")
    # Both hold the same Jinja: the first in file order wins, as in Go's loop.
    assert named(entry.jinja + "x", (entry, twin)).entry.name == entry.name
    assert named(entry.jinja + "x", (twin, entry)).entry.name == "twin"


def test_distance_counts_code_points_as_go_runes_do() -> None:
    entry = load_index(OLLAMA)[0]
    changed = entry.jinja[:-1] + "é"  # one rune, two UTF-8 bytes
    assert named(changed, (entry,)).distance == 1


def test_the_whole_index_is_measured_within_the_render_budget() -> None:
    index = load_index(OLLAMA)
    assert len(index) == 37
    largest = max(TEMPLATES_DIR.glob("*.jinja"), key=lambda p: p.stat().st_size)
    jinja = largest.read_text(encoding="utf-8")
    # The largest template the playground accepts (PLAYGROUND_TEMPLATE_KB, 256 KiB), and
    # one as long as an entry but far from it (the band, not the lengths, cuts it short).
    longest = (jinja * (256 * 1024 // len(jinja) + 1))[: 256 * 1024]
    entry = index[0].jinja
    shuffled = "".join(sorted(entry))
    for template in (jinja, longest, shuffled, LLAMA_3_1):
        start = time.perf_counter()
        named(template, index)
        elapsed = time.perf_counter() - start
        # PLAYGROUND_CPU_SECONDS is 2.0 by default: Named must take a small part of it.
        assert elapsed < 0.05, f"{elapsed:.3f}s for {len(template)} characters"


def test_unset_setting_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SETTING, raising=False)
    assert SETTING in unavailable() and "cannot be shown" in unavailable()


def test_a_folder_without_the_index_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(SETTING, str(tmp_path))
    assert "index.json" in unavailable()


def test_the_setting_names_the_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, str(OLLAMA))
    assert unavailable() is None and named_module.templates_folder() == OLLAMA


def test_a_broken_index_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text('[{"name": "missing", "template": "x"}]')
    with pytest.raises(TemplatesFolderError, match="cannot read Ollama's index"):
        load_index(tmp_path)
