"""The portability report of /api/analyze: every registered engine against transformers.

Expectations come from the engines themselves (each side rendered through the sandbox
pool as /api/render renders it), never from hand-written prompts: what is tested is
that the report classifies, counts and locates what the engines do.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from markupsafe import escape

from app.analysis.examples import EXAMPLES
from app.analysis.portability import portability
from app.analysis.portability_cases import conversations
from app.problems import TemplateProblem, limit_exceeded
from app.render import engines
from app.render.core import RenderRequest
from app.render.engines import ENGINES
from app.render.engines.edge_llm.loading import loaded
from app.render.limits import RenderLimits
from app.text import common_prefix_length
from oracles.edge_llm import recorded
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: ChatML whose second line uses a construct llama.cpp's engine refuses (a numbered field).
NUMBERED_FORMAT = "{% set start = '<|im_start|>{0}\\n' %}\n" + CHATML.replace(
    "<|im_start|>{{ m.role }}\n", "{{ start.format(m.role) }}"
)
DEVELOPER = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
CONVERSATIONS = ["current", *(example["name"] for example in EXAMPLES)]


@pytest.fixture()
def spender_client(app):
    """A client at an address of its own, for templates that run out of limits on purpose:
    that makes their sender a heavy client for a minute (admission), which must not be
    the address the rest of the suite's tests share."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = "198.51.100.77"
    return client


def analyze(client, template: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"template": template, "messages": messages, "add_generation_prompt": True}
    answer = client.post("/api/analyze", json=body)
    assert answer.status_code == 200, answer.json
    return answer.json["portability"]


def row(report: dict[str, Any], engine: str) -> dict[str, Any]:
    return next(r for r in report["engines"] if r["id"] == engine)


def test_every_registered_engine_has_a_row_over_every_conversation(client):
    report = analyze(client, CHATML, [{"role": "user", "content": "Hi"}])
    assert [r["id"] for r in report["engines"]] == list(ENGINES)
    assert report["conversations"] == CONVERSATIONS
    for r in report["engines"]:
        assert [c["conversation"] for c in r["cases"]] == CONVERSATIONS
        assert r["version"] == ENGINES[r["id"]].info.version
    # ChatML renders the same everywhere the engines agree on the request.
    assert row(report, "transformers")["outcome"] == "reference"


def test_a_difference_is_counted_and_located_where_the_engines_part(app, client):
    report = analyze(client, CHATML, DEVELOPER)
    llama = row(report, "llama.cpp")
    assert llama["outcome"] == "differs"
    assert llama["cases"][0] == {"conversation": "current", "outcome": "differs"}
    assert llama["different"] == sum(c["outcome"] == "differs" for c in llama["cases"])
    assert llama["identical"] + llama["different"] + llama["raised"] == len(CONVERSATIONS)
    first = llama["first_difference"]
    request = RenderRequest(template=CHATML, messages=DEVELOPER, add_generation_prompt=True)
    pool = app.extensions["sandbox_pool"]
    reference = pool.render(request).prompt
    rendered = pool.render(replace(request, engine="llama.cpp"))
    at = common_prefix_length(reference, rendered.prompt)
    assert (first["conversation"], first["position"]) == ("current", at)
    assert reference[at:].startswith(first["reference"])
    assert rendered.prompt[at:].startswith(first["engine"])
    assert first["rewrites"] == rendered.rewrites
    assert report["identical_everywhere"] is False


def test_a_construct_an_engine_refuses_is_named_with_its_line(client):
    report = analyze(client, NUMBERED_FORMAT, [{"role": "user", "content": "Hi"}])
    assert row(report, "transformers")["first_error"] is None
    llama = row(report, "llama.cpp")
    assert llama["outcome"] == "raises"
    assert llama["raised"] == len(CONVERSATIONS)
    error = llama["first_error"]
    assert (error["conversation"], error["line"]) == ("current", 2)
    assert "format() only supports simple '{}' placeholders" in error["message"]


def test_the_analysis_view_shows_the_matrix(client):
    data = {"template": CHATML, "messages": json.dumps(DEVELOPER), "view": "analysis"}
    page = client.post("/fragments/output", data=data).get_data(as_text=True)
    assert 'id="portability"' in page
    assert 'data-engine="llama.cpp" data-outcome="differs"' in page
    assert 'class="button small open-diff" data-engine="llama.cpp"' in page


class RefusingPool:
    """A pool whose every task runs out of its CPU allowance."""

    def run(self, *args: Any) -> Any:
        raise limit_exceeded("cpu_seconds", "The template ran for too long.")


def test_an_engine_whose_task_runs_out_of_its_limits_is_reported_so():
    request = RenderRequest(template=CHATML, messages=[{"role": "user", "content": "Hi"}])
    report = portability(request, RefusingPool())  # type: ignore[arg-type]
    first, *later = [r for r in report["engines"] if r["id"] != "transformers"]
    assert first["outcome"] == "raises"
    assert first["first_error"]["limit"] == "cpu_seconds"
    # The report stops there: one allowance spent, not one per engine.
    assert {r["outcome"] for r in later} == {"not-measured"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_the_page_embeds_the_examples_the_report_renders(client, example):
    page = client.get("/").get_data(as_text=True)
    embedded = page.split('id="example-data">', 1)[1].split("</script>", 1)[0]
    assert example in json.loads(embedded)


#: ChatML over four lines: the role is written by line 2.
CHATML_LINES = (
    "{% for m in messages %}\n"
    "<|im_start|>{{ m.role }}\n"
    "{{ m.content }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_a_difference_names_the_template_line_that_wrote_it(client):
    # llama-server turns the developer message into a system one: the first difference is
    # in the role, which line 2 writes.
    llama = row(analyze(client, CHATML_LINES, DEVELOPER), "llama.cpp")
    first = llama["first_difference"]
    assert (first["conversation"], first["reference"][:9]) == ("current", "developer")
    assert first["line"] == 2
    data = {"template": CHATML_LINES, "messages": json.dumps(DEVELOPER), "view": "analysis"}
    page = client.post("/fragments/output", data=data).get_data(as_text=True)
    finding = page.split('data-engine="llama.cpp"', 1)[1].split("</tr>", 1)[0]
    assert 'class="line-link" data-line="2"' in finding


#: Writes each tool call's arguments as JSON, as tool-calling templates do.
CALLS = (
    "{% for m in messages %}{{ m.role }}: {{ m.content }}"
    "{% for call in m.tool_calls or [] %} {{ call.function.arguments | tojson }}{% endfor %}\n"
    "{% endfor %}"
)


def _vllm_row(client, **fields: str) -> dict[str, Any]:
    """vLLM's row for CALLS, the arguments sent as `fields` say."""
    body = {"template": CALLS, "messages": [{"role": "user", "content": "Hi"}], **fields}
    answer = client.post("/api/analyze", json={**body, "add_generation_prompt": True})
    return row(answer.json["portability"], "vllm")


def test_every_engine_gets_the_same_arguments_and_the_matrix_shows_what_each_does(client):
    # The example writes its arguments as JSON text, as the OpenAI API defines them. vLLM
    # parses them to objects for the template; transformers gets the text, and `tojson`
    # quotes it: the same request renders differently, which is what the matrix is for.
    written = _vllm_row(client)
    assert written["first_difference"]["conversation"] == "parallel-tools"
    assert '\\"city\\"' in written["first_difference"]["reference"]
    assert '{"city": "Lisbon"' in written["first_difference"]["engine"]
    # Sent as objects, as a library caller passes them: vLLM's request model refuses them.
    objects = _vllm_row(client, tool_arguments="objects")
    assert objects["first_difference"] is None
    assert objects["first_error"]["conversation"] == "parallel-tools"
    assert "arguments: Input should be a valid string" in objects["first_error"]["message"]


#: Python's sandbox refuses so long a range at once, and MiniJinja too; @huggingface/jinja
#: builds it, until its process runs out of memory.
ENDLESS = "{% for i in range(10**9) %}{% endfor %}{{ messages[0].content }}"


def test_an_engine_stops_at_its_first_case_that_runs_out_of_a_limit(spender_client):
    report = analyze(spender_client, ENDLESS, [{"role": "user", "content": "Hi"}])
    js = row(report, "transformers.js")
    # One allowance spent, not one per conversation: the row names the limit it hit.
    assert js["outcome"] == "raises"
    assert js["cases"] == []
    assert js["first_error"]["limit"] in ("memory", "cpu_seconds")  # whichever comes first
    assert js["first_error"]["conversation"] == "current"


def test_the_engines_after_one_that_ran_out_are_not_run(spender_client, monkeypatch):
    # transformers.js moved up, right after the reference: the engines after it wait.
    order = ["transformers", "transformers.js"]
    reordered = {engine: ENGINES[engine] for engine in [*order, *ENGINES] if engine in ENGINES}
    monkeypatch.setattr(engines, "ENGINES", reordered)
    report = analyze(spender_client, ENDLESS, [{"role": "user", "content": "Hi"}])
    assert [r["id"] for r in report["engines"]] == list(reordered)
    assert row(report, "transformers.js")["first_error"]["limit"] is not None
    for later in report["engines"][2:]:
        assert later["outcome"] == "not-measured", later["id"]
        assert later["cases"] == []
        assert "transformers.js" in later["first_error"]["message"]


#: Writes more than any engine's output allowance: the reference runs out first.
FLOOD = "{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}"


def test_when_the_reference_runs_out_of_a_limit_it_is_named_and_no_engine_is_blamed(spender_client):
    report = analyze(spender_client, FLOOD, [{"role": "user", "content": "Hi"}])
    reference = row(report, "transformers")
    assert reference["first_error"]["limit"] == "output_chars"
    for other in report["engines"][1:]:
        assert other["outcome"] == "not-measured", other["id"]
        assert "transformers" in other["first_error"]["message"]


#: Fine in Python (its sandbox refuses the range at once) but about a second per render
#: in @huggingface/jinja: each render is under the limit, six of them are not.
SLOW_IN_JS = "{% for i in range(300000) %}{% endfor %}{{ messages[0].content }}"


def test_an_engines_cases_share_one_allowance(spender_client):
    # Cheap per case for Python's Jinja, too slow over all cases for an interpreter of its
    # own (Edge-LLM's Inja, transformers.js's Node): the first to run out has no cases,
    # whatever its cases would have been, and names the limit.
    report = analyze(spender_client, SLOW_IN_JS, [{"role": "user", "content": "Hi"}])
    spent = next(r for r in report["engines"] if r["outcome"] == "raises")
    assert spent["id"] in ("edge-llm", "transformers.js")
    assert spent["cases"] == []
    assert spent["first_error"]["limit"] == "cpu_seconds"


# Edge-LLM checks the template when it loads a model (`EngineInfo.checks_at_load`): its row
# says "loads" or "fails at load" with Edge-LLM's reason and position, and for a template
# it loads, which conversations its requests then fail on.


def edge_llm_failures(template: str, messages: list[dict[str, Any]]) -> list[str]:
    """The report's conversations the edge-llm engine refuses, rendered one by one here."""
    request = RenderRequest(template=template, messages=messages, add_generation_prompt=True)
    failing = []
    for case in conversations(request):
        try:
            engines.render(replace(case.request, engine="edge-llm"))
        except TemplateProblem:
            failing.append(case.name)
    return failing


def test_edge_llm_says_it_loads_a_template_it_parses(client):
    messages = [{"role": "user", "content": "Hi"}]
    report = analyze(client, CHATML, messages)
    edge = row(report, "edge-llm")
    assert edge["load"] == {"ok": True, "message": None, "line": None, "column": None}
    # Its server has no continue_final_message: the continue example is refused.
    assert edge["request_failures"] == edge_llm_failures(CHATML, messages) == ["continue"]
    assert all(row["load"] is None for row in report["engines"] if row["id"] != "edge-llm")


@needs_shared
def test_edge_llm_fails_at_load_with_its_recorded_reason_line_and_column(client):
    """The issue's example, against the recording of Edge-LLM's own loader: its row says
    so whatever transformers does with the template (which fails there too)."""
    template = (TEMPLATES_DIR / "fireworks-ai-llama-3-firefunction-v2.jinja").read_text("utf-8")
    recorded_error = recorded()["templates"]["fireworks-ai-llama-3-firefunction-v2"]["load"]
    line, column = map(int, re.search(r"\(at (\d+):(\d+)\)", recorded_error["error"]).groups())
    edge = row(analyze(client, template, [{"role": "user", "content": "Hi"}]), "edge-llm")
    message = f"Edge-LLM would not load this model: {recorded_error['error']}"
    assert edge["load"] == {"ok": False, "message": message, "line": line, "column": column}
    # Not "identical" where transformers fails too: Edge-LLM never gets to a request.
    assert (edge["outcome"], edge["raised"]) == ("raises", len(CONVERSATIONS))
    assert edge["request_failures"] == []


#: ChatML with a `{% filter %}` block on line 2: Jinja runs it, Edge-LLM's Inja refuses it.
FILTERED = "{% set x = 1 %}\n{% filter upper %}hi{% endfilter %}" + CHATML


def test_the_matrix_says_edge_llm_fails_at_load_where_and_why(client):
    messages = [{"role": "user", "content": "Hi"}]
    with pytest.raises(TemplateProblem) as refused:
        loaded(FILTERED, RenderLimits())
    problem = refused.value
    assert (problem.type, problem.line, problem.column) == ("LoadError", 2, 4)
    data = {"template": FILTERED, "messages": json.dumps(messages), "view": "analysis"}
    page = client.post("/fragments/output", data=data).get_data(as_text=True)
    cell = page[page.index('<tr data-engine="edge-llm"') :].split("</tr>", 1)[0]
    assert 'data-outcome="raises"' in cell
    assert '<strong class="port-load">fails at load</strong>' in cell
    assert 'data-line="2">line 2, column 4</button>' in cell
    assert str(escape(problem.message)) in cell


#: ChatML that names the tool of a tool result: Jinja trims a missing name to nothing,
#: Edge-LLM's Inja fails on the missing attribute (only the tool example has one).
TOOL_NAME = CHATML.replace(
    "{% for m in messages %}",
    "{% for m in messages %}{% if m.role == 'tool' %}{{ m.name | trim }}{% endif %}",
)


def test_edge_llm_names_the_conversations_its_requests_fail_on(client):
    messages = [{"role": "user", "content": "Hi"}]
    failing = edge_llm_failures(TOOL_NAME, messages)
    assert failing == ["parallel-tools", "continue"]
    edge = row(analyze(client, TOOL_NAME, messages), "edge-llm")
    assert edge["load"]["ok"] is True
    assert edge["request_failures"] == failing
    data = {"template": TOOL_NAME, "messages": json.dumps(messages), "view": "analysis"}
    page = client.post("/fragments/output", data=data).get_data(as_text=True)
    cell = page[page.index('<tr data-engine="edge-llm"') :].split("</tr>", 1)[0]
    names = ", ".join(f"<em>{name}</em>" for name in failing)
    assert '<span class="port-load">loads</span>; <span class="port-request-failures">' in cell
    assert f"fails at request time on {names}</span>" in cell
