"""The Completion menu: what a template writes for a final assistant message, checked
against transformers itself, and the corpus file the answer recorders read."""

from __future__ import annotations

import pytest

from app.answers.menu import END_MARKERS, KINDS, completion_of, end_of_turn, final_message
from app.errors import MESSAGE_CHARS
from app.render import engines
from oracles.transformers.reference import reference_render
from tests.support.answers import QUESTION, load_completions, menu_corpus, menu_request
from tests.support.shared_data import HAVE_SHARED, MISSING, template_files

needs_shared = pytest.mark.skipif(not HAVE_SHARED, reason=MISSING)
TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


@needs_shared
def test_the_recorded_corpus_is_what_the_menu_makes_today():
    # The recorders of llama.cpp's and vLLM's answers read this file: it must be current
    # (`python -m tests.support.answers.write` writes it again).
    assert load_completions() == menu_corpus()


@needs_shared
@pytest.mark.parametrize("path", template_files(), ids=lambda path: path.name)
def test_each_entry_is_what_transformers_writes_for_that_message(path):
    template = path.read_text(encoding="utf-8")
    entries = {e["kind"]: e for e in load_completions() if e["template"] == path.name}
    request = menu_request(template, TOKENS)
    checked = 0
    for kind in KINDS:
        if "completion" not in entries[kind]:
            continue
        case = {"messages": QUESTION, "tools": request.tools, "special_tokens": TOKENS}
        asking = reference_render({**case, "add_generation_prompt": True}, template)
        message = final_message(kind, template, request.tools)
        answered = reference_render({**case, "messages": [*QUESTION, message]}, template)
        if asking[0] != "ok" or answered[0] != "ok":
            continue  # the text-arguments retry: functionary's templates
        completion = entries[kind]["completion"]
        if completion_of(answered[1], asking[1], TOKENS).notes:
            # The generation prompt opens a block (`<think>`) the history does not show:
            # what follows the block is what transformers writes for the message.
            visible = completion.rpartition("</think>")[2].lstrip("\n")
            assert visible in answered[1], kind
            checked += 1
            continue
        assert answered[1].startswith(asking[1] + completion), kind
        rest = answered[1][len(asking[1]) + len(completion) :]
        assert not rest.strip() or rest.lstrip().startswith(("</s>", *END_MARKERS)), kind
        checked += 1
    assert checked or path.name in REFUSING, "no entry of this template was checked"


#: Templates that transformers itself refuses to render this conversation with (tools
#: without descriptions, a variable of their own, a generator passed to tojson).
REFUSING = {
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja",
    "fireworks-ai-llama-3-firefunction-v2.jinja",
    "llama-cpp-deepseek-r1.jinja",
}


def test_the_turn_ends_at_the_first_end_marker_or_eos():
    assert end_of_turn("Paris.<|im_end|>\n", {}) == len("Paris.")
    assert end_of_turn("Paris.[EOS]<|im_end|>", {"eos_token": "[EOS]"}) == len("Paris.")
    assert end_of_turn("Paris.\n\n", {}) == len("Paris.")  # no marker: trailing blanks
    harmony = "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final"
    assert end_of_turn(harmony + "<|message|>Paris.<|return|>", {}) == len(harmony) + 17


def test_an_opened_thinking_block_is_closed_by_the_completion():
    # QwQ-style: the generation prompt opens <think>, the history drops reasoning.
    prompt = "<|im_start|>assistant\n<think>\n"
    with_message = "<|im_start|>assistant\nParis.<|im_end|>\n"
    made = completion_of(with_message, prompt, {}, reasoning="It is Paris.")
    assert made.completion == "It is Paris.\n</think>\n\nParis."
    assert made.notes and "<think>" in made.notes[0]


def test_tool_entries_bring_example_tools_when_there_are_none():
    template = (
        "{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}"
        "<call>{{ c.function.name }} {{ c.function.arguments | tojson }}</call>{% endfor %}"
        "{% else %}{{ m.content }}{% endif %}{% endfor %}"
    )
    from app.answers.menu import menu_completion
    from app.render.core import RenderRequest

    request = RenderRequest(template=template, messages=QUESTION)
    made = menu_completion(request, "parallel_tool_calls", engines.render_exactly)
    assert made.tools and [t["function"]["name"] for t in made.tools][:2] == [
        "get_weather",
        "get_local_time",
    ]
    assert made.completion == (
        '<call>get_weather {"city": "Paris"}</call><call>get_local_time {"city": "Paris"}</call>'
    )


def test_a_note_quotes_a_little_of_a_huge_generation_prompt():
    # The note quoted the whole part of the generation prompt the history leaves out:
    # 1,000,000 characters of it came back in /api/completion.
    prompt = "<|im_start|>assistant\n" + "z" * 10**6
    made = completion_of("<|im_start|>assistant\nParis.<|im_end|>\n", prompt, {})
    assert made.completion == "Paris."
    [note] = made.notes
    assert len(note) <= MESSAGE_CHARS and "characters cut" in note
