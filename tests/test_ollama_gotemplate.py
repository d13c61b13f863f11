"""The Ollama engine's Go worker against Ollama's own template tests, and its limits.

Ollama's template_test.go (TestTemplate, at fb30760) renders three conversations through
every Go template it ships and compares with `testdata/<name>.gotmpl/<case>`; the same
templates and goldens are in the shared data, and the worker must give the same bytes.
"""

from __future__ import annotations

import time

import pytest

from app.problems import TemplateProblem
from app.render.engines.ollama.gotemplate.build import build
from app.render.engines.ollama.gotemplate.runner import (
    go_renderer,
    render_go,
    template_vars,
    thinking_tags,
    tool_call_tag,
)
from app.render.limits import RenderLimits
from tests.support.shared_data import SHARED

OLLAMA = SHARED / "upstream" / "ollama"
GO_TEMPLATES = sorted(OLLAMA.glob("*.gotmpl"))

HELLO = {"role": "user", "content": "Hello, how are you?"}
GREAT = {"role": "assistant", "content": "I'm doing great. How can I help you today?"}
SHOW = {"role": "user", "content": "I'd like to show off how chat templating works!"}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
#: TestTemplate's conversations, named as its goldens are (the roles joined with "-").
CASES = {
    "user": [HELLO],
    "user-assistant-user": [HELLO, GREAT, SHOW],
    "system-user-assistant-user": [SYSTEM, HELLO, GREAT, SHOW],
}
#: The templates whose one trailing space TestTemplate removes before comparing.
TRAILING_SPACE = {"chatqa", "llama2-chat", "mistral-instruct", "openchat", "vicuna"}

LIMITS = RenderLimits(cpu_seconds=1.0, output_chars=10_000)
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module", autouse=True)
def worker() -> None:
    """The worker built from its sources, as ./playground builds it."""
    build()


def test_the_shared_data_holds_ollamas_templates():
    assert len(GO_TEMPLATES) == 20


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("path", GO_TEMPLATES, ids=lambda path: path.stem)
def test_ollamas_goldens(path, case):
    prompt = render_go(path.read_text(), {"messages": CASES[case]}, LIMITS)
    if path.stem in TRAILING_SPACE and prompt.endswith(" "):
        prompt = prompt[:-1]
    golden = (OLLAMA / "testdata" / path.name / case).read_bytes()
    assert prompt.encode() == golden


def test_consecutive_messages_of_one_role_are_collated_except_tools():
    template = "{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}|{{ .System }}"
    messages = [
        {"role": "system", "content": "a"},
        {"role": "system", "content": "b"},
        {"role": "user", "content": "c"},
        {"role": "USER", "content": "d"},
        {"role": "tool", "content": "e"},
        {"role": "tool", "content": "f"},
    ]
    prompt = render_go(template, {"messages": messages}, LIMITS)
    assert prompt == "[system:a\n\nb][user:c\n\nd][tool:e][tool:f]|a\n\nb"


def test_legacy_templates_run_per_turn_and_stop_after_the_last_response():
    template = "{{ if .System }}S:{{ .System }} {{ end }}U:{{ .Prompt }} A:{{ .Response }}<end> "
    messages = [SYSTEM, HELLO, GREAT, SHOW]
    prompt = render_go(template, {"messages": messages}, LIMITS)
    assert prompt == (
        f"S:{SYSTEM['content']} U:{HELLO['content']} A:{GREAT['content']}<end> "
        f"U:{SHOW['content']} A:"
    )


def test_think_values_and_missing_keys():
    template = "{{ .Think }} {{ .ThinkLevel }} {{ .IsThinkSet }} {{ .Messages | len }}"
    assert render_go(template, {"messages": MESSAGES}, LIMITS) == "false  false 1"
    assert render_go(template, {"messages": MESSAGES, "think": True}, LIMITS) == (
        "true medium true 1"
    )
    assert render_go(template, {"messages": MESSAGES, "think": "high"}, LIMITS) == (
        "true high true 1"
    )


def test_tools_tool_calls_and_functions():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather",
                "parameters": {
                    "type": "object",
                    "required": ["city"],
                    "properties": {
                        "city": {"type": "string"},
                        "days": {"type": ["integer", "null"]},
                    },
                },
            },
        }
    ]
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    messages = [MESSAGES[0], {"role": "assistant", "content": "", "tool_calls": [call]}]
    template = (
        "{{ .Tools }}#{{ range .Tools }}{{ range $k, $v := .Function.Parameters.Properties }}"
        "{{ $k }}:{{ toTypeScriptType $v }};{{ end }}{{ end }}#{{ range .Messages }}"
        "{{ range .ToolCalls }}{{ .Function.Name }}{{ .Function.Arguments }}"
        "{{ json .Function.Arguments }}"
        "{{ end }}{{ end }}#{{ currentDate }}#{{ yesterdayDate }}"
    )
    data = {"messages": messages, "tools": tools, "today": "2026-03-01"}
    prompt = render_go(template, data, LIMITS)
    tools_json, properties, calls, today, yesterday = prompt.split("#")
    assert tools_json.startswith('[{"type":"function","function":{"name":"get_weather",')
    assert (
        '"properties":{"city":{"type":"string"},"days":{"type":["integer","null"]}}' in tools_json
    )
    assert properties == "city:string;days:number | null;"
    assert calls == 'get_weather{"city":"Paris"}{"city":"Paris"}'
    assert (today, yesterday) == ("2026-03-01", "2026-02-28")


def test_parse_errors_name_their_line():
    with pytest.raises(TemplateProblem) as caught:
        render_go("line one\n{{ if .Messages }}\n{{ .Oops( }}\n{{ end }}", {}, LIMITS)
    assert caught.value.type == "TemplateSyntaxError"
    assert caught.value.line == 3


def _alive() -> None:
    """The worker still answers after a limit (a fresh child if the old one was killed)."""
    assert render_go("ok {{ len .Messages }}", {"messages": MESSAGES}, LIMITS) == "ok 1"


def test_recursion_is_the_recursion_limit_and_the_worker_lives_on():
    template = '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" .Messages }}'
    with pytest.raises(TemplateProblem) as caught:
        render_go(template, {"messages": MESSAGES}, LIMITS)
    assert caught.value.limit == "recursion"
    _alive()


def _doubling(levels: int, leaf: str) -> str:
    """A template whose every level calls the next twice: 2**levels leaves."""
    calls = "".join(
        f'{{{{ define "l{n}" }}}}{{{{ template "l{n + 1}" . }}}}{{{{ template "l{n + 1}" . }}}}'
        "{{ end }}"
        for n in range(levels)
    )
    return (
        calls + f'{{{{ define "l{levels}" }}}}{leaf}{{{{ end }}}}{{{{ template "l0" .Messages }}}}'
    )


def test_a_template_that_loops_is_the_cpu_limit_and_the_worker_lives_on():
    # 2**40 calls: forever, as far as the limit cares.
    started = time.monotonic()
    with pytest.raises(TemplateProblem) as caught:
        render_go(_doubling(40, ""), {"messages": MESSAGES}, LIMITS)
    assert caught.value.limit == "cpu_seconds"
    assert time.monotonic() - started < LIMITS.cpu_seconds * 4
    _alive()


def test_huge_output_is_the_output_limit_and_the_worker_lives_on():
    with pytest.raises(TemplateProblem) as caught:
        render_go(_doubling(30, "xxxxxxxx"), {"messages": MESSAGES}, LIMITS)
    assert caught.value.limit == "output_chars"
    _alive()


def test_a_template_that_fills_memory_is_the_memory_limit_and_the_worker_lives_on():
    # A megabyte doubled twelve times: 4 GB, past any allowance here.
    doubling = '{{ $s := printf "%01000000d" 1 }}' + '{{ $s = printf "%s%s" $s $s }}' * 12
    limits = RenderLimits(cpu_seconds=3.0, memory_bytes=256 * 1024 * 1024)
    with pytest.raises(TemplateProblem) as caught:
        render_go(doubling, {"messages": MESSAGES}, limits)
    assert caught.value.limit == "memory"
    assert render_go("ok {{ len .Messages }}", {"messages": MESSAGES}, limits) == "ok 1"


def test_the_worker_is_one_process_across_renders():
    first = go_renderer(LIMITS)._running().pid
    _alive()
    assert go_renderer(LIMITS)._running().pid == first


@pytest.mark.parametrize(
    ("name", "tag"),
    # Of the templates Ollama ships, only command-r mentions .Tools (its calls follow
    # "Action: ```json" and a bracket); the others have no tools, so no tag.
    [("llama3-instruct", None), ("command-r", "Action: ```json\n["), ("mistral-instruct", None)],
)
def test_the_tag_of_shipped_templates(name, tag):
    assert tool_call_tag((OLLAMA / f"{name}.gotmpl").read_text()) == tag


@pytest.mark.parametrize(
    ("template", "tag"),
    [
        # The first text inside {{ if .ToolCalls }}, cut at "{" and trimmed.
        (
            "{{ .Tools }}{{ range .Messages }}{{ if .ToolCalls }}"
            '<tool_call>\n{"name"{{ end }}{{ end }}',
            "<tool_call>",
        ),
        (
            "{{ .Tools }}{{ if .ToolCalls }}[TOOL_CALLS] [{{ range .ToolCalls }}{{ end }}{{ end }}",
            "[TOOL_CALLS] [",
        ),
        # An action before any text: no tag, so any JSON object may be a call.
        ("{{ .Tools }}{{ if .ToolCalls }}{{ .Content }}<call>{{ end }}", "{"),
        ('{{ .Tools }}{{ if .ToolCalls }}  {"name": 1}{{ end }}', "{"),
        # Text inside a nested block counts; text after it does not.
        ("{{ .Tools }}{{ if .ToolCalls }}{{ if .Content }} {{ end }}<after>{{ end }}", "{"),
        ("{{ .Tools }}{{ if .ToolCalls }}{{ with .Content }}<in>{{ end }}{{ end }}", "<in>"),
        ("{{ .Tools }}", "{"),
        # Cases of Ollama's own TestParseTag (tools/template_test.go).
        ("{{ .Tools }}{{if .ToolCalls}}{{range .ToolCalls}}{{ . }}{{end}}]{{end}}", "{"),
        (
            "{{ .Tools }}{{if .ToolCalls}}First text{{if .S}}inner{{end}}Second text{{end}}",
            "First text",
        ),
        ("{{ .Tools }}{{if .ToolCalls}}\n [ {{range .ToolCalls}}{{ . }}{{end}}]{{end}}", "["),
        ('{{ .Tools }}{{if .ToolCalls}}{{range .ToolCalls}}\r\n{"name": 1}{{end}}{{end}}', "{"),
    ],
)
def test_tool_call_tag_rule(template, tag):
    assert tool_call_tag(template) == tag


def test_template_vars():
    assert template_vars("{{ range .Messages }}{{ .Role }}{{ end }}{{ $x := .Tools }}{{ $x }}") == {
        "messages", "role", "tools", "$x",
    }  # fmt: skip
    assert "response" in template_vars("{{ .Prompt }}")


@pytest.mark.parametrize(
    ("template", "tags"),
    [
        ("{{ range .Messages }}<t>{{ .Thinking }}</t>{{ end }}", ("<t>", "</t>")),
        # The last .Thinking inside a range over .Messages sets the tags.
        (
            "{{ range .Messages }}{{ if .Thinking }} <a> {{ .Thinking }} </a> {{ end }}{{ end }}",
            ("<a>", "</a>"),
        ),
        # Not in a range over .Messages, or no text on both sides: not thinking-capable.
        ("<t>{{ .Thinking }}</t>", None),
        ("{{ range .Tools }}<t>{{ .Thinking }}</t>{{ end }}", None),
        ("{{ range .Messages }}<t>{{ .Thinking }}{{ end }}", None),
    ],
)
def test_thinking_tags(template, tags):
    assert thinking_tags(template) == tags
