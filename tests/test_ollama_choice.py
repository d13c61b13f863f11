"""Which way Ollama writes the prompt (`choice.decide`), one test per branch of
`server/images.go`'s and `server/routes.go`'s choice, and the capability comparison
(`shouldPreferChatTemplate`) it rests on."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.render.engines.ollama.capabilities import (
    chat_template_capabilities,
    chat_template_round_trip,
    go_template_capabilities,
    go_template_round_trip,
    prefers_chat_template,
)
from app.render.engines.ollama.choice import DEFAULT_TEMPLATE, decide
from app.render.engines.ollama.template.named import SETTING
from app.render.engines.ollama.template.vars import template_vars
from tests.support.ollama_data import (
    gotmpl,
    index_jinja,
    ollama_templates,  # noqa: F401 (the fixture)
    upstream_jinja,
)
from tests.support.shared_data import require_ollama

require_ollama()
pytestmark = pytest.mark.usefixtures("ollama_templates")

LLAMA_3_1 = upstream_jinja("meta-llama-Llama-3.1-8B-Instruct")
QWEN3 = upstream_jinja("Qwen-Qwen3-0.6B")


def test_a_renderer_wins_over_any_template() -> None:
    path = decide(LLAMA_3_1, "jinja", renderer="qwen3")
    assert (path.path, path.name, path.distance, path.go_template) == (
        "renderer", "qwen3", None, None
    )  # fmt: skip
    assert "RENDERER qwen3" in path.reasons[0]


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="template_kind must be one of jinja, go"):
        decide("x", "mustache")


def test_a_go_template_is_rendered_by_ollama() -> None:
    go = gotmpl("llama3-instruct")
    path = decide(go, "go")
    assert (path.path, path.name, path.go_template) == ("go-template", None, go)
    assert any("unless OLLAMA_GO_TEMPLATE is set" in reason for reason in path.reasons)


def test_a_forced_go_template_says_so() -> None:
    path = decide(gotmpl("chatml"), "go", force_go_template=True)
    assert any("OLLAMA_GO_TEMPLATE=1 keeps it" in reason for reason in path.reasons)


def test_an_empty_go_template_leaves_the_prompt_default() -> None:
    path = decide("", "go")
    assert (path.path, path.go_template) == ("go-template", DEFAULT_TEMPLATE)


def test_harmony_tags_name_the_harmony_parser() -> None:
    go = "{{ range .Messages }}<|start|>{{ .Role }}<|message|>{{ .Content }}<|end|>{{ end }}"
    path = decide(go, "go")
    assert path.path == "go-template" and any("Harmony" in reason for reason in path.reasons)
    assert not any("Harmony" in reason for reason in decide(gotmpl("chatml"), "go").reasons)


def test_llama_3_1_keeps_its_own_template_because_it_has_tools() -> None:
    path = decide(LLAMA_3_1, "jinja")
    assert (path.path, path.name, path.distance, path.go_template) == (
        "llama-server", "llama3-instruct", 0, None
    )  # fmt: skip
    assert "llama3-instruct" in path.reasons[0] and "distance 0" in path.reasons[0]
    assert "prefers it" in path.reasons[1]


def test_llama_3_1_with_the_go_template_forced_loses_its_tools() -> None:
    path = decide(LLAMA_3_1, "jinja", force_go_template=True)
    assert (path.path, path.name, path.distance) == ("go-template", "llama3-instruct", 0)
    assert path.go_template == gotmpl("llama3-instruct")
    assert "supports tools; llama3-instruct supports no tools" in path.reasons[1]


def test_a_chat_template_without_tools_gets_the_adopted_go_template() -> None:
    path = decide(index_jinja("chatml"), "jinja")
    assert (path.path, path.name, path.distance) == ("go-template", "chatml", 0)
    assert path.go_template == gotmpl("chatml")
    assert "can do no more" in path.reasons[1]


def test_a_template_far_from_the_index_goes_to_llama_server() -> None:
    path = decide(QWEN3, "jinja")
    assert (path.path, path.name, path.distance, path.go_template) == (
        "llama-server", None, None, None
    )  # fmt: skip
    assert "within Levenshtein distance 100" in path.reasons[0]
    assert "llama-server" in path.reasons[1]


def test_no_chat_template_at_all_goes_to_llama_servers_default() -> None:
    path = decide("", "jinja")
    assert path.path == "llama-server" and "no chat template" in path.reasons[0]


def test_without_the_templates_folder_the_reason_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SETTING)
    path = decide(LLAMA_3_1, "jinja")
    assert (path.path, path.name, path.distance) == ("llama-server", None, None)
    assert SETTING in path.reasons[0] and "assumes" in path.reasons[0]


def test_a_broken_templates_folder_is_a_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "index.json").write_text("not json")
    monkeypatch.setenv(SETTING, str(tmp_path))
    path = decide(LLAMA_3_1, "jinja")
    assert path.path == "llama-server" and "cannot read Ollama's index" in path.reasons[0]


# The capability comparison, on Ollama's own templates and on small ones made to differ.


def test_chat_template_capabilities() -> None:
    assert chat_template_capabilities(LLAMA_3_1) == ("tools",)
    assert chat_template_capabilities(QWEN3) == ("tools", "thinking")
    assert chat_template_capabilities(index_jinja("chatml")) == ()
    assert chat_template_round_trip(QWEN3)
    assert not chat_template_round_trip("{{ tools }}")


def test_thinking_by_split_is_not_thinking_with_reasoning_content() -> None:
    split = "{{ content.split('</think>')[-1] }}"
    assert chat_template_capabilities(split) == ("thinking",)
    assert chat_template_capabilities(split + "{{ reasoning_content }}") == ()


def test_go_template_capabilities_of_ollamas_index() -> None:
    assert go_template_capabilities(gotmpl("command-r")) == ("tools",)
    assert go_template_round_trip(gotmpl("command-r"))
    assert go_template_capabilities(gotmpl("llama3-instruct")) == ()
    assert not go_template_round_trip(gotmpl("llama3-instruct"))


def test_go_template_insert_and_thinking() -> None:
    go = "{{ .Suffix }}{{ range .Messages }}<think>{{ .Thinking }}</think>{{ end }}"
    assert go_template_capabilities(go) == ("insert", "thinking")


TOOLS_GO = '{{ .Tools }}{{ range .Messages }}{{ if eq .Role "tool" }}{{ end }}{{ end }}'
TOOLS_GO_NO_TRIP = "{{ .Tools }}"
CHAT_TOOLS_TRIP = "{{ tools }}{{ m.tool_calls }}{% if message.role == 'tool' %}{% endif %}"


def test_more_capabilities_win_unless_only_the_go_template_round_trips() -> None:
    assert prefers_chat_template("{{ tools }}", "plain")
    round_trip_go = TOOLS_GO.replace("{{ .Tools }}", "{{ .Tools }}{{ .ToolCalls }}")
    assert go_template_round_trip(round_trip_go)
    thinking_and_tools = "{{ tools }}<think></think>"
    assert not prefers_chat_template(thinking_and_tools, round_trip_go)
    assert prefers_chat_template(thinking_and_tools + CHAT_TOOLS_TRIP, round_trip_go)


def test_same_capabilities_need_tools_and_a_round_trip_only_on_the_chat_side() -> None:
    assert prefers_chat_template(CHAT_TOOLS_TRIP, TOOLS_GO_NO_TRIP)
    assert not prefers_chat_template("{{ tools }}", TOOLS_GO_NO_TRIP)
    assert not prefers_chat_template(
        "<think></think>", "{{ range .Messages }}{{ .Thinking }}{{ end }}"
    )
    # Different capabilities, as many on each side: the Go template stays.
    assert not prefers_chat_template("{{ tools }}", "{{ .Suffix }}")


def test_template_vars_reads_code_only() -> None:
    go = '{{/* .Tools */}}{{ "x.Tools" }}{{ range $.Messages }}{{ .Function.Name }}{{ end }}'
    assert template_vars(go) == {"$", "messages", "function", "name"}


def test_tools_and_split_thinking_beat_a_go_template_with_thinking_only() -> None:
    # The situation of Ollama's "prefers Qwen chat template with tools and inferred
    # thinking" (server/images_test.go): two capabilities against one.
    jinja = "{{ tools }}{% set answer = message.content.split('</think>')[-1] %}"
    go = "{{ range .Messages }}{{ if .Thinking }}<t>{{ .Thinking }}</t>{{ end }}{{ end }}"
    assert chat_template_capabilities(jinja) == ("tools", "thinking")
    assert go_template_capabilities(go) == ("thinking",)
    assert prefers_chat_template(jinja, go)


def test_weaker_tool_support_keeps_a_round_tripping_go_template() -> None:
    # Ollama's "keeps Go TEMPLATE when chat template has weaker tool support": the chat
    # template has more capabilities but no tool round trip, the Go template has one.
    jinja = "{{ tools }}<think></think>{% for m in messages %}{{ m.content }}{% endfor %}"
    go = '{{ .Tools }}{{ range .Messages }}{{ if eq .Role "tool" }}r{{ end }}'
    go += "{{ range .ToolCalls }}{{ .Function.Name }}{{ end }}{{ end }}"
    assert len(chat_template_capabilities(jinja)) > len(go_template_capabilities(go))
    assert not prefers_chat_template(jinja, go)


def test_template_vars_lists_used_variables_not_declared_ones() -> None:
    go = "{{ range $i, $m := .Messages }}{{ $last := eq $i 0 }}{{ $x := 0 }}{{ $x = 1 }}"
    go += "{{ $m.Role }}{{ end }}"
    assert template_vars(go) == {"messages", "$i", "$m", "role"}
