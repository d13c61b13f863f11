"""The engine registry: what `GET /api/engines`, the page's menus and the worker read.

A fake third engine, registered for one test, must appear everywhere the engines are
listed without any page code naming it.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from app.render import engines
from app.render.core import Engine, EngineInfo, Rendered, RenderRequest
from app.render.limits import RenderLimits
from app.render.request import parse_render_request
from oracles.llamacpp import recorded_build
from oracles.transformersjs import locked_npm_version
from tests.support import REPO


class EchoEngine(Engine):
    """A third engine: the messages' contents, joined."""

    info = EngineInfo(
        id="echo",
        name="Echo (test)",
        version="0.1",
        description="Writes the contents of the messages, one per line.",
    )

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        return Rendered("\n".join(str(m.get("content")) for m in request.messages), [])


@pytest.fixture()
def echo(monkeypatch):
    monkeypatch.setitem(engines.ENGINES, EchoEngine.info.id, EchoEngine())


def test_api_lists_the_engines_with_the_versions_they_reproduce(client):
    listed = {engine["id"]: engine for engine in client.get("/api/engines").json["engines"]}
    assert list(listed) == list(engines.ENGINES)
    assert list(listed)[:2] == ["transformers", "llama.cpp"]
    assert {"vllm", "edge-llm", "tgi", "transformers.js"} <= listed.keys()
    assert listed["llama.cpp"]["version"] == recorded_build()
    assert listed["tgi"]["version"] == "3.3.7"
    assert listed["transformers"]["version"] == "5.23.0"
    assert listed["transformers.js"]["version"] == locked_npm_version("@huggingface/jinja")
    for engine in listed.values():
        assert set(engine) == {"id", "name", "version", "description"}
        assert engine["name"] and engine["description"]


def _options(html: str, select_id: str) -> list[str]:
    select = re.search(f'<select name="[^"]+" id="{select_id}"[^>]*>(.*?)</select>', html, re.S)
    assert select, f"no #{select_id} menu"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_a_registered_engine_appears_in_the_api_and_both_menus(client, echo):
    assert "echo" in [engine["id"] for engine in client.get("/api/engines").json["engines"]]
    html = client.get("/").get_data(as_text=True)
    # The page lists the registry as it stands, the test's engine last.
    assert _options(html, "engine") == list(engines.ENGINES)
    assert _options(html, "compare_engines") == ["", *engines.ENGINES]
    assert _options(html, "engine")[-1] == "echo"


def test_a_registered_engine_is_a_valid_request_and_renders(echo):
    request = parse_render_request(
        {"template": "x", "messages": [{"role": "user", "content": "Hi"}], "engine": "echo"}
    )
    assert engines.render(request).prompt == "Hi"


def test_the_diff_compares_with_the_chosen_engine(client):
    form = {
        "template": "{% for m in messages %}{{ m.role }}:{{ m.content }}\n{% endfor %}",
        "messages": '[{"role": "developer", "content": "Be brief."}]',
        "compare_engines": "llama.cpp",
        "view": "diff",
    }
    html = client.post("/fragments/output", data=form).get_data(as_text=True)
    assert "Against the llama.cpp engine." in html
    assert 'value="llama.cpp" selected' in client.post("/", data=form).get_data(as_text=True)


def test_a_share_keeps_the_compared_engine(client):
    body = {"template": "x", "messages": [], "compare_engines": "llama.cpp"}
    url = client.post("/api/shares", json=body).json["url"]
    assert client.get(url + ".json").json["compare_engines"] == "llama.cpp"
    refused = client.post("/api/shares", json={**body, "compare_engines": "no-such-engine"})
    assert (refused.status_code, refused.json["error"]["field"]) == (400, "compare_engines")


#: What a sandbox worker imports: its entry, and the modules of the tasks it is sent.
WORKER_MODULES = ("app.render.pool", "app.analysis.probes", "app.analysis.commands")


def test_a_sandbox_worker_imports_no_flask_tokenizers_or_gguf():
    # A fresh interpreter, as the forkserver that sandbox workers fork from.
    code = (
        f"import sys, {', '.join(WORKER_MODULES)}; "
        "print(sorted({'flask', 'tokenizers', 'gguf'} & set(sys.modules)))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[]"


def test_each_engine_class_is_in_its_package_engine_module():
    """Every engine package keeps its engine's class in `engine.py`, whatever else it
    holds (llama.cpp's render steps, vLLM's request rules)."""
    for engine in engines.ENGINES.values():
        module = type(engine).__module__
        package = module.rpartition(".")[0]
        assert package.startswith("app.render.engines.") and module == f"{package}.engine"
