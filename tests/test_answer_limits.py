"""A completion is untrusted text: what its reading says about it is bounded.

Every engine's parser may quote the completion in a note or an error (the region that
is not JSON, the function name it drops, the text Harmony refuses). A completion of
`PLAYGROUND_COMPLETION_KB` would come back whole in each such sentence: those are cut
where the answer is made, in the sandbox worker, to `MESSAGE_CHARS`, and say so.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.errors import MESSAGE_CHARS
from app.render.answer import AnswerRequest
from app.render.core import RenderRequest
from app.render.limits import DEFAULT_LIMITS
from app.render.pool import read_in_worker
from app.web.factory import create_app
from tests.support import REPO, UNLIMITED_WRITES

#: Characters of the hostile run: twice the default `PLAYGROUND_COMPLETION_KB`, which the
#: tests lift to let it through.
HUGE = 512 * 1024
RUN = "x" * HUGE
#: What `bounded_text` writes where it cut, with the length of the whole text.
CUT = re.compile(r"\[[\d,]+ of ([\d,]+) characters cut\]")

QWEN3 = (REPO / "templates_lib" / "qwen3.jinja").read_text(encoding="utf-8")
GPT_OSS = (REPO / "templates_lib" / "gpt-oss.jinja").read_text(encoding="utf-8")
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
#: A response template whose tool calls are JSON regions, as transformers reads them:
#: a region that is not JSON makes parse_response raise with the region in its message.
JSON_CALLS = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "content": {},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "repeats": True,
        },
    },
}

#: Completions that make one engine's parser quote the hostile run: (template, parser
#: options, completion, the engine whose answer quotes it).
QUOTING = {
    "transformers: a tool call that is not JSON": (
        QWEN3,
        {},
        f"<tool_call>{RUN}</tool_call>",
        "transformers",
    ),
    "transformers: a tool call without a name": (
        QWEN3,
        {},
        f'<tool_call>{{"arguments": "{RUN}"}}</tool_call>',
        "transformers",
    ),
    "vLLM glm45: a function the request does not declare": (
        QWEN3,
        {"vllm": {"tool_call_parser": "glm45", "reasoning_parser": "none"}},
        f"<tool_call>{RUN}\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        "vllm",
    ),
    "vLLM openai (Harmony): text outside a message": (
        GPT_OSS,
        {"vllm": {"tool_call_parser": "openai", "reasoning_parser": "gpt_oss"}},
        f"{RUN}<|start|>assistant<|channel|>final<|message|>Paris.<|return|>",
        "vllm",
    ),
}


@pytest.fixture()
def lifted(app, monkeypatch):
    """The session's application reading completions of up to 1 MiB."""
    monkeypatch.setitem(app.config, "COMPLETION_KB", 1024)
    return app


def load_source(client, response_template: dict) -> str:
    """The id of a loaded tokenizer_config.json with this response template."""
    config = {"chat_template": QWEN3, "response_template": response_template}
    upload = {"f0": (io.BytesIO(json.dumps(config).encode()), "tokenizer_config.json")}
    loaded = client.post("/api/sources/hf", data=upload, content_type="multipart/form-data")
    assert loaded.status_code in (200, 201), loaded.get_json()
    return loaded.get_json()["id"]


@pytest.fixture(scope="module")
def json_calls_source(app) -> str:
    """A loaded source whose response template reads JSON tool calls."""
    return load_source(app.test_client(), JSON_CALLS)


def said(entry: dict[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of an engine's entry that says something about the completion: all
    but the message itself, whose fields are the completion's own text, as the runtime
    returns it (never cut: a larger one is refused, see `PLAYGROUND_OUTPUT_CHARS` below)."""
    if isinstance(entry, str):
        yield path, entry
    elif isinstance(entry, dict):
        for key, value in entry.items():
            if key != "message":
                yield from said(value, f"{path}.{key}")
    elif isinstance(entry, list):
        for index, value in enumerate(entry):
            yield from said(value, f"{path}[{index}]")


@pytest.mark.parametrize("name", QUOTING)
@pytest.mark.parametrize("path", ["/api/parse", "/api/roundtrip"])
def test_what_every_engine_says_of_a_huge_completion_is_cut(lifted, json_calls_source, path, name):
    template, parsers, completion, quoting = QUOTING[name]
    body = {
        "template": template,
        "messages": [{"role": "user", "content": "The weather in Paris?"}],
        "tools": WEATHER,
        "add_generation_prompt": True,
        "completion": completion,
        "parsers": parsers,
        "source": json_calls_source,
    }
    answer = lifted.test_client().post(path, json=body)
    assert answer.status_code == 200, answer.get_data()[:300]
    engines = {entry["engine"]: entry for entry in answer.get_json()["engines"]}
    for engine, entry in engines.items():
        for where, text in said(entry):
            assert len(text) <= MESSAGE_CHARS, f"{engine}{where}: {len(text):,} characters"
    quoted = [CUT.search(text) for _, text in said(engines[quoting])]
    whole = [int(cut[1].replace(",", "")) for cut in quoted if cut]
    assert whole and max(whole) >= HUGE, f"{quoting} quotes none of the run: {engines[quoting]}"


def test_the_reading_is_cut_in_the_worker():
    # The function a sandbox worker runs: what it returns is what crosses to the web
    # process, so it must already be cut there.
    request = RenderRequest(QWEN3, [{"role": "user", "content": "Hi"}], engine="transformers")
    answer = AnswerRequest(request, f"<tool_call>{RUN}</tool_call>", {}, json.dumps(JSON_CALLS))
    reading = read_in_worker(answer, DEFAULT_LIMITS)
    assert reading.answer is not None and reading.answer.error is not None
    assert len(reading.answer.error) <= MESSAGE_CHARS
    assert CUT.search(reading.answer.error)


def test_why_the_next_request_does_not_render_stays_in_bounds(client):
    # The template's message, cut to MESSAGE_CHARS in the worker, and the sentence around
    # it: 4,010 characters for llama.cpp's.
    template = (
        "{% for m in messages %}{% if m.role == 'assistant' %}"
        "{{ raise_exception('y' * 100000) }}{% endif %}{{ m.content }}{% endfor %}"
    )
    body = {
        "template": template,
        "messages": [{"role": "user", "content": "Hi"}],
        "add_generation_prompt": True,
        "completion": "Hello.",
        "engines": ["llama.cpp", "vllm"],
    }
    answer = client.post("/api/roundtrip", json=body)
    assert answer.status_code == 200
    for entry in answer.get_json()["engines"]:
        reason = entry["round_trip"]["reason"]
        assert reason.startswith("The next request does not render")
        assert len(reason) <= MESSAGE_CHARS and CUT.search(reason)


HI = {
    "template": QWEN3,
    "messages": [{"role": "user", "content": "Hi"}],
    "add_generation_prompt": True,
}
#: A response template whose tool-call opener backtracks catastrophically (`re`, as
#: transformers' `regex`, tries every way to split a run of "a" before it gives up).
BACKTRACKING = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {"content": {}, "tool_calls": {"open_pattern": "(a+)+b", "close": "</tool_call>"}},
}


@pytest.mark.timing
def test_a_reading_that_runs_out_of_cpu_names_the_limit(app, client):
    body = {**HI, "completion": "a" * 64 + "!", "source": load_source(client, BACKTRACKING)}
    for path in ("/api/parse", "/api/roundtrip"):
        started = time.monotonic()
        answer = client.post(path, json=body)
        seconds = time.monotonic() - started
        assert answer.status_code == 200, answer.get_data()[:300]
        engines = {entry["engine"]: entry for entry in answer.get_json()["engines"]}
        problem = engines["transformers"]["problem"]
        assert problem and problem["limit"] == "cpu_seconds", engines["transformers"]
        assert "CPU time" in problem["message"]
        assert engines["llama.cpp"]["message"]["content"] == body["completion"]
        # The CPU allowance, or the wall-clock backstop on a busy machine.
        assert seconds < 4 * app.config["CPU_SECONDS"] + 5
    form = {**body, "messages": json.dumps(body["messages"]), "add_generation_prompt": "on"}
    form.update(source_id=body["source"], source_kind="hf", view="response")
    page = client.post("/fragments/output", data=form)
    assert page.status_code == 200 and "CPU time" in page.get_data(as_text=True)
    # The worker the timer stopped answers the next reading.
    fine = client.post("/api/parse", json={**body, "completion": "Hello."})
    transformers = next(e for e in fine.get_json()["engines"] if e["engine"] == "transformers")
    assert transformers["problem"] is None and transformers["message"]["content"] == "Hello."


def _copies(count: int) -> dict:
    """A response template that writes each tool call's text `count` times over: its
    transform names `{content}` once per argument."""
    arguments = {f"a{i}": "{content}" for i in range(count)}
    call = {"type": "function", "function": {"name": "f", "arguments": arguments}}
    tool_calls = {
        "open": "<tool_call>",
        "close": "</tool_call>",
        "repeats": True,
        "transform": call,
    }
    return {**JSON_CALLS, "fields": {"content": {}, "tool_calls": tool_calls}}


@pytest.fixture(scope="module")
def roomy_app(tmp_path_factory):
    """An application whose readings have 10 s of CPU time: writing 512 MB of JSON takes
    one or two seconds, so with the default 2 s a busy machine met the CPU limit first."""
    data = tmp_path_factory.mktemp("roomy")
    application = create_app(
        {"TESTING": True, "DATA_DIR": str(data), "CPU_SECONDS": 10, **UNLIMITED_WRITES}
    )
    yield application
    application.extensions["sandbox_pool"].close()
    application.extensions["source_workers"].close()


@pytest.mark.parametrize(
    ("copies", "limit", "message"),
    [
        (300, "output_chars", "PLAYGROUND_OUTPUT_CHARS"),
        # Two values a copy: under PLAYGROUND_RESPONSE_TEMPLATE_ITEMS (10,000).
        (4900, "memory", "Reading the completion"),
    ],
)
def test_a_reading_larger_than_its_allowance_names_the_limit(roomy_app, copies, limit, message):
    # 200,000 characters written 300 times over came back: a 60 MB answer to /api/parse.
    client = roomy_app.test_client()
    completion = f"<tool_call>{'y' * 200_000}</tool_call>"
    body = {**HI, "completion": completion, "source": load_source(client, _copies(copies))}
    answer = client.post("/api/parse", json={**body, "engines": ["transformers"]})
    assert answer.status_code == 200
    assert len(answer.get_data()) < 64 * 1024
    [entry] = answer.get_json()["engines"]
    assert entry["message"] is None and entry["problem"]["limit"] == limit, entry
    assert message in entry["problem"]["message"]
