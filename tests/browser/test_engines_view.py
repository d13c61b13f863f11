"""Choosing the render engine, and diffing the two engines, in a real browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gguf import GGUFWriter
from playwright.sync_api import Page, expect

from oracles.llamacpp import recorded_build
from tests.browser.library import load_library
from tests.browser.test_source_panel import library_text

pytestmark = pytest.mark.browser

MESSAGES = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
#: MESSAGES in the default (ChatML) template, as transformers renders them.
TURNS = "<|im_start|>developer\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"


def use_messages(page: Page, messages: list) -> None:
    if page.locator("#raw-messages").is_hidden():
        page.click("#toggle-raw")
    page.fill("#messages", json.dumps(messages))


def test_llama_cpp_engine_shows_its_rewrites(page: Page) -> None:
    use_messages(page, MESSAGES)
    expect(page.locator("#prompt-raw")).to_have_value(
        "<|im_start|>developer\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    page.select_option("#engine", "llama.cpp")
    expect(page.locator("#rewrites")).to_contain_text("developer message turned into system")
    expect(page.locator("#prompt-raw")).to_have_value(
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


#: A developer message and content parts: vLLM, TGI, llama.cpp and Edge-LLM each rewrite
#: something of it for the default (ChatML) template.
REWRITTEN = [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
]


@pytest.mark.parametrize("engine", ["vllm", "tgi", "llama.cpp", "edge-llm"])
def test_each_engines_rewrites_are_labelled_with_its_own_name(page: Page, engine: str) -> None:
    names = {e["id"]: e["name"] for e in page.request.get("/api/engines").json()["engines"]}
    use_messages(page, REWRITTEN)
    page.select_option("#engine", engine)
    expect(page.locator("#output")).to_have_attribute("data-engine", engine)
    lines = page.locator("#rewrites li")
    expect(lines.first).to_be_visible()
    for text in lines.all_inner_texts():
        assert text.startswith(f"{names[engine]}: "), (engine, text)


def test_diff_of_the_two_engines(page: Page) -> None:
    use_messages(page, MESSAGES)
    page.click("#tab-diff")
    expect(page.locator("#compare_template")).to_be_visible()
    page.select_option("#compare_engines", "llama.cpp")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    # One compare mode at a time: the second template is not in use now.
    expect(page.locator("#compare_template")).to_be_hidden()
    # Side by side: transformers on the left, llama.cpp on the right.
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>developer\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>system\n")
    assert page.locator("#diff-unified .delete").count() > 0


def test_diff_between_two_chosen_engines(page: Page) -> None:
    # llama.cpp on the left (the engine menu), transformers on the right (the Diff's menu).
    use_messages(page, MESSAGES)
    page.select_option("#engine", "llama.cpp")
    page.click("#tab-diff")
    page.select_option("#compare_engines", "transformers")
    expect(page.locator("#view-diff")).to_contain_text("Against the transformers engine.")
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>system\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>developer\n")
    # Both menus name every engine with its version.
    for menu in ("#engine", "#compare_engines"):
        labels = page.locator(f"{menu} option").all_inner_texts()
        assert any(recorded_build() in label for label in labels), labels
    page.select_option("#compare_engines", "")
    expect(page.locator("#compare_template")).to_be_visible()


def test_portability_matrix_opens_the_first_difference_in_the_diff(page: Page) -> None:
    use_messages(page, MESSAGES)
    page.click("#tab-analysis")
    llama = page.locator('#portability tr[data-engine="llama.cpp"]')
    expect(llama).to_have_attribute("data-outcome", "differs")
    expect(llama.locator("td.port-differs").first).to_have_attribute("data-conversation", "current")
    llama.locator("summary").click()
    expect(llama.locator(".port-snippet .insert")).to_contain_text("system")
    llama.locator(".open-diff").click()
    expect(page.locator("#tab-diff")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    expect(page.locator("#engine")).to_have_value("transformers")
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>developer\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>system\n")


#: Prints each assistant's tool calls as JSON: llama-server parses them into its own
#: structure, which writes the keys in another order, so only the tool example differs.
CALLS_AS_JSON = (
    "{% for m in messages %}{{ m.role }}:{{ m.content }}"
    "{{ m.tool_calls | tojson if m.tool_calls }}\n{% endfor %}"
)


def test_a_difference_in_an_example_opens_that_example_in_the_diff(page: Page) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", CALLS_AS_JSON)
    use_messages(page, [{"role": "user", "content": "Hi"}])
    page.click("#tab-analysis")
    llama = page.locator('#portability tr[data-engine="llama.cpp"]')
    expect(llama).to_have_attribute("data-outcome", "differs")
    cell = llama.locator('td[data-conversation="parallel-tools"]')
    expect(cell).to_have_class("port-differs")
    llama.locator("summary").click()
    expect(llama.locator("summary")).to_contain_text("parallel-tools")
    llama.locator(".open-diff").click()
    expect(page.locator("#tab-diff")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    assert "tool_calls" in page.locator("#messages").input_value()
    assert page.locator("#diff-unified .delete").count() > 0
    # The example came through the Examples menu: its Undo brings the conversation back.
    page.click("#undo-bar button")
    expect(page.locator("#messages")).not_to_have_value(re.compile("tool_calls"))


def test_transformers_js_engine_renders_and_shows_what_it_leaves_to_the_caller(page: Page) -> None:
    """Rendered in Node on the server: the final message stays closed under
    continue_final_message, as transformers.js renders it, and the page says why."""
    use_messages(page, [*MESSAGES, {"role": "assistant", "content": "Hel"}])
    page.uncheck("#add_generation_prompt")
    page.select_option("#continue_final_message", "true")
    prompt = page.locator("#prompt-raw")
    expect(prompt).to_have_value(TURNS + "<|im_start|>assistant\nHel")
    page.select_option("#engine", "transformers.js")
    expect(page.locator("#rewrites")).to_contain_text("does not continue the final message")
    expect(prompt).to_have_value(TURNS + "<|im_start|>assistant\nHel<|im_end|>\n")


#: Qwen3's tool call as an engine's template sees it: the arguments' JSON, whether the
#: template got them as text (which it writes as is) or as an object (which it dumps).
QWEN3_CALL = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lisbon", "unit": "celsius"}}'
)
#: Qwen2.5's, from text arguments that Edge-LLM hands to the template unparsed.
QUOTED_CALL = '{"name": "get_weather", "arguments": "{\\"city\\": \\"Lisbon\\"'
#: What each engine makes of the tools example; none of them refuses its arguments.
TOOL_RENDERS = {
    "vllm": ("qwen3", QWEN3_CALL, None),
    "llama.cpp": ("qwen3", QWEN3_CALL, None),
    "transformers.js": ("qwen3", QWEN3_CALL, None),
    "tgi": ("qwen3", "<|im_start|>user\nAnd in Oslo?", "dropped: tool_calls"),
    "edge-llm": ("qwen2.5", QUOTED_CALL, "arguments passed as text"),
}


@pytest.mark.parametrize("engine", list(TOOL_RENDERS))
def test_the_tools_example_renders_on_every_engine(page: Page, engine: str) -> None:
    template, expected, rewrite = TOOL_RENDERS[engine]
    load_library(page, template)
    page.select_option("#example-select", "parallel-tools")
    page.click("#example-load")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("And in Oslo"))
    page.select_option("#engine", engine)
    expect(page.locator("#output")).to_have_attribute("data-engine", engine)
    expect(page.locator("#problem")).to_have_count(0)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(expected)))
    if rewrite:
        expect(page.locator("#rewrites")).to_contain_text(rewrite)


#: One tool call with its arguments as an OpenAI client sends them, and its result.
ONE_CALL = [
    {"role": "user", "content": "Weather in Lisbon?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "21 C"},
    {"role": "user", "content": "Thanks."},
]


def test_arguments_go_as_written_unless_the_client_sends_them_otherwise(page: Page) -> None:
    load_library(page, "llama3.1")  # `arguments | tojson`: text is quoted again
    use_messages(page, ONE_CALL)
    field = page.get_by_label("arguments (JSON text)")
    expect(field).to_have_value('{"city": "Lisbon"}')
    field.fill('{"city": "Porto"}')
    page.wait_for_function("() => document.querySelector('#messages').value.includes('Porto')")
    messages = json.loads(page.locator("#messages").input_value())
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Porto"}'
    # As written: transformers gets the JSON text, and `tojson` quotes it, as it does for
    # an OpenAI log passed to apply_chat_template; nothing was converted, nothing is said.
    quoted = re.compile(re.escape('"parameters": "{\\"city\\": \\"Porto\\"}"'))
    expect(page.locator("#prompt-raw")).to_have_value(quoted)
    expect(page.locator("#sent-as")).to_have_count(0)
    # As a library caller passes them: objects, and the prompt says what changed.
    page.select_option("#tool_arguments", "objects")
    call = re.compile(re.escape('"parameters": {"city": "Porto"}'))
    expect(page.locator("#prompt-raw")).to_have_value(call)
    expect(page.locator("#sent-as")).to_contain_text("passed as objects parsed from their JSON")
    # vLLM's request model refuses objects, in its own words.
    page.select_option("#engine", "vllm")
    expect(page.locator("#output")).to_have_attribute("data-engine", "vllm")
    expect(page.locator("#problem")).to_contain_text("Input should be a valid string")
    # As OpenAI clients send them (the text it holds): vLLM parses it and renders the call.
    page.select_option("#tool_arguments", "json_text")
    expect(page.locator("#problem")).to_have_count(0)
    expect(page.locator("#prompt-raw")).to_have_value(call)
    # The Diff against transformers sends the same text: transformers quotes it.
    page.click("#tab-diff")
    page.select_option("#compare_engines", "transformers")
    expect(page.locator("#view-diff")).to_contain_text("Against the transformers engine.")
    expect(page.locator("#view-diff .problem")).to_have_count(0)
    expect(page.locator("#diff-stats")).not_to_contain_text("0 lines removed, 0 lines added")
    # The choice is kept in the share link's state.
    page.reload()
    expect(page.locator("#tool_arguments")).to_have_value("json_text")


# What vLLM renders instead of the template ------------------------------------------------

#: A message vLLM refuses (an unknown content part type): the render fails.
REFUSED_BY_VLLM = [{"role": "user", "content": [{"type": "no-such-part"}]}]


def test_the_vllm_caveat_stays_when_the_render_fails(page: Page) -> None:
    load_library(page, "gpt-oss")
    page.select_option("#engine", "vllm")
    caveats = page.locator("#caveats")
    expect(caveats).to_contain_text("Harmony")
    use_messages(page, REFUSED_BY_VLLM)
    expect(page.locator("#problem")).to_contain_text("no-such-part")
    # The failed render's own caveat, visible above the stale prompt kept below it.
    expect(caveats).to_be_visible()
    expect(caveats).to_contain_text("Harmony")
    expect(page.locator("#stale-note")).to_be_visible()
    expect(page.locator("#stale-caveats")).to_have_count(0)  # said once, not twice


def test_a_gguf_model_name_reaches_the_vllm_caveat(page: Page, tmp_path: Path) -> None:
    # ChatML is no Harmony template: only the model's own name (general.name) says gpt-oss.
    path = tmp_path / "model.gguf"
    writer = GGUFWriter(path, arch="gpt-oss")
    writer.add_name("gpt-oss-20b")
    writer.add_chat_template(library_text("chatml"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    page.set_input_files("#gguf-file", str(path))
    expect(page.locator("#template-origin")).to_contain_text("model.gguf")
    expect(page.locator("#caveats")).to_have_count(0)  # transformers uses the template
    page.select_option("#engine", "vllm")
    expect(page.locator("#caveats")).to_contain_text("Harmony")
