"""Library entries carry their model's special tokens: checked against the real
templates and vocabularies, used when no vocabulary is loaded, and an empty BOS that
the template prints is a warning (issue 37, item 2)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.analysis.bos_check import empty_bos
from app.render import engines
from app.render.core import RenderRequest
from app.render.limits import RenderLimits
from app.sources.library import Library
from app.state import PlaygroundState, SourceRef
from app.state.library_choice import choose_library, library_tokens
from tests.support.shared_data import TEMPLATES_DIR, VOCAB_DIR, needs_shared

LIBRARY = Library()
#: A special-token variable a template reads: `bos_token`, `eos_token`, `unk_token`, ...
TOKEN_VARIABLE = re.compile(r"\b(bos|eos|unk|sep|pad|cls|mask)_token\b")
#: Library entries whose model's tokenizer a vocabulary of the shared data has: Phi-3.5
#: mini keeps Phi-3 mini's tokenizer; the DeepSeek R1 distills keep DeepSeek's own
#: BOS and EOS (the vocabulary of DeepSeek LLM).
SAME_TOKENS_AS = {
    "phi-3.5": "ggml-vocab-phi-3.gguf",
    "deepseek-r1-distill": "ggml-vocab-deepseek-llm.gguf",
}
HELLO = [{"role": "user", "content": "Hello"}]


def read_variables(template: str) -> set[str]:
    return {f"{name}_token" for name in TOKEN_VARIABLE.findall(template)}


@pytest.mark.parametrize("entry", LIBRARY.entries, ids=lambda e: e.name)
def test_an_entry_names_every_special_token_its_template_reads(entry) -> None:
    assert set(read_variables(LIBRARY.template(entry.name) or "")) <= entry.tokens.keys()
    assert all(entry.tokens.values())


@needs_shared
@pytest.mark.parametrize("entry", [e for e in LIBRARY.entries if e.upstream], ids=lambda e: e.name)
def test_an_entry_names_every_special_token_its_models_template_reads(entry) -> None:
    upstream = (TEMPLATES_DIR / entry.upstream).read_text(encoding="utf-8")
    assert read_variables(upstream) <= entry.tokens.keys()


def test_every_entry_with_a_model_has_its_eos() -> None:
    # Only the generic ChatML names no model, and so no tokens.
    without = [entry.name for entry in LIBRARY.entries if "eos_token" not in entry.tokens]
    assert without == ["chatml"]


@needs_shared
@pytest.mark.parametrize(("name", "vocab"), sorted(SAME_TOKENS_AS.items()))
def test_the_tokens_are_the_real_vocabularys(name: str, vocab: str) -> None:
    from gguf import GGUFReader  # the real reader, not ours

    fields = GGUFReader(VOCAB_DIR / vocab).fields
    tokens = fields["tokenizer.ggml.tokens"].contents()
    real = {
        f"{kind}_token": tokens[fields[f"tokenizer.ggml.{kind}_token_id"].contents()]
        for kind in ("bos", "eos")
    }
    assert LIBRARY.entry(name).tokens == real


def test_the_api_lists_the_tokens(client) -> None:
    entry = client.get("/api/library/llama3.1").json
    assert entry["special_tokens"] == {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}


def state(special_tokens: dict[str, str] | None = None, **fields) -> PlaygroundState:
    request = RenderRequest(template="", messages=HELLO, special_tokens=special_tokens or {})
    return PlaygroundState(request, **fields)


def test_choosing_an_entry_brings_its_tokens_without_a_vocabulary() -> None:
    llama = choose_library(state(), LIBRARY.entry("llama3.1"), LIBRARY)
    assert llama.request.template == LIBRARY.template("llama3.1")
    assert llama.request.special_tokens == {
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|eot_id|>",
    }
    prompt = engines.render(llama.render_request(), RenderLimits()).prompt
    assert prompt.startswith("<|begin_of_text|><|start_header_id|>system")
    # Another entry replaces the first one's tokens, ChatML's none included.
    qwen = choose_library(llama, LIBRARY.entry("qwen3"), LIBRARY)
    assert qwen.request.special_tokens == {"eos_token": "<|im_end|>"}
    assert choose_library(qwen, LIBRARY.entry("chatml"), LIBRARY).request.special_tokens == {}


def test_choosing_an_entry_keeps_the_users_or_the_sources_tokens() -> None:
    own = {"bos_token": "<mine>"}
    chosen = choose_library(state(special_tokens=own), LIBRARY.entry("llama3.1"), LIBRARY)
    assert chosen.request.special_tokens == own
    loaded = state(special_tokens={"bos_token": "<s>"}, source=SourceRef(id="x", kind="gguf"))
    gemma = choose_library(loaded, LIBRARY.entry("gemma2"), LIBRARY)
    assert gemma.request.special_tokens == {"bos_token": "<s>"}
    assert gemma.library == "gemma2"


def test_the_prompt_view_names_the_entry_whose_tokens_are_used() -> None:
    llama = choose_library(state(), LIBRARY.entry("llama3.1"), LIBRARY)
    assert library_tokens(llama, LIBRARY) is LIBRARY.entry("llama3.1")
    edited = llama.asking(special_tokens={"bos_token": "<x>"})
    assert library_tokens(edited, LIBRARY) is None
    loaded = replace(llama, source=SourceRef(id="x", kind="gguf"))
    assert library_tokens(loaded, LIBRARY) is None
    assert (
        library_tokens(choose_library(state(), LIBRARY.entry("chatml"), LIBRARY), LIBRARY) is None
    )


def test_the_page_without_scripts_loads_the_tokens_and_says_so(client) -> None:
    form = {"template": "", "messages": '[{"role": "user", "content": "Hello"}]'}
    page = client.post("/", data={**form, "action": "load_library", "library": "llama3.1"})
    html = page.get_data(as_text=True)
    assert re.search(r'id="prompt"[^>]*>\n&lt;\|begin_of_text\|&gt;&lt;\|start_header_id', html)
    said = re.search(r'<p class="[^"]*" id="library-tokens">(.*?)</p>', html, re.S)
    assert said is not None
    assert "Llama 3.1 Instruct (no vocabulary loaded)" in said.group(1)
    assert "&lt;|begin_of_text|&gt;" in said.group(1)


def render_of(request: RenderRequest) -> str:
    return engines.render(request, RenderLimits()).prompt


@pytest.mark.parametrize("name", ["llama3.1", "deepseek-r1-distill", "gemma2", "mistral-nemo"])
def test_an_empty_bos_the_template_prints_is_a_warning(name: str) -> None:
    template = LIBRARY.template(name) or ""
    request = RenderRequest(template=template, messages=HELLO, special_tokens={"eos_token": "</s>"})
    [found] = empty_bos(request, render_of)
    assert (found.id, found.severity) == ("empty-bos", "warning")
    assert "bos_token" in template.splitlines()[found.line - 1]
    given = replace(request, special_tokens=LIBRARY.entry(name).tokens)
    assert empty_bos(given, render_of) == []


def test_a_template_that_prints_no_bos_gets_no_warning() -> None:
    request = RenderRequest(template=LIBRARY.template("qwen3") or "", messages=HELLO)
    assert empty_bos(request, render_of) == []
