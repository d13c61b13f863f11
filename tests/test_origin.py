"""app.pipeline.origin: the box above the editor names where the template came from."""

from __future__ import annotations

from app.pipeline.origin import template_origin
from app.render.render_request import RenderRequest
from app.sources.library import Library
from app.sources.source import Source
from app.state import PlaygroundState, SourceRef

LIBRARY = Library()
CHATML = LIBRARY.template("chatml") or ""


def gguf(templates: dict[str, str]) -> Source:
    """A loaded GGUF source naming its model."""
    return Source(
        id="s1",
        kind="gguf",
        templates=templates,
        special_tokens={},
        add_bos_token=None,
        add_eos_token=None,
        tokenizer=None,
        metadata={"name": "Gemma 3 Test"},
        file_name="gemma.gguf",
    )


def state(template: str, **fields) -> PlaygroundState:
    return PlaygroundState(RenderRequest(template=template, messages=[]), **fields)


def test_a_library_template_and_its_edits():
    origin = template_origin(state(CHATML, library="chatml"), None, LIBRARY)
    assert (origin.kind, origin.title, origin.modified) == ("library", "ChatML", False)
    assert origin.notes_entry is not None and origin.notes_entry.name == "chatml"
    edited = template_origin(state(CHATML + "x", library="chatml"), None, LIBRARY)
    assert edited.kind == "library" and edited.modified


def test_a_template_of_the_loaded_file_names_file_model_and_template():
    source = gguf({"default": "A", "tool_use": "B"})
    ref = SourceRef("s1", "gguf", "mine.gguf", "tool_use")
    origin = template_origin(state("B", source=ref), source, LIBRARY)
    assert (origin.kind, origin.title, origin.file, origin.model) == (
        "source",
        "tool_use",
        "mine.gguf",
        "Gemma 3 Test",
    )
    assert not origin.modified and origin.notes_entry is None
    assert template_origin(state("B!", source=ref), source, LIBRARY).modified
    # A share made through the API names no template: the default one.
    unnamed = SourceRef("s1", "gguf")
    assert template_origin(state("A", source=unnamed), source, LIBRARY).title == "default"


def test_a_loaded_template_that_is_a_library_one_gets_its_notes():
    source = gguf({"default": CHATML})
    ref = SourceRef("s1", "gguf", "mine.gguf", "default")
    origin = template_origin(state(CHATML, source=ref), source, LIBRARY)
    assert origin.kind == "source" and origin.same_text
    assert origin.notes_entry is not None and origin.notes_entry.name == "chatml"


def test_a_typed_template_and_an_unknown_library_name():
    assert template_origin(state("mine"), None, LIBRARY).kind == "typed"
    assert template_origin(state("mine", library="no-such"), None, LIBRARY).kind == "typed"
    # A vocabulary-only file: the template is typed, the vocabulary is named.
    source = gguf({})
    ref = SourceRef("s1", "gguf", "vocab.gguf", None)
    origin = template_origin(state("mine", source=ref), source, LIBRARY)
    assert (origin.kind, origin.file) == ("typed", "vocab.gguf")
