"""The Ollama engine wired into the API: its command lines in /api/command and its
finding in /api/analyze, for Llama 3.1's chat template (Ollama's data from the shared
test folder, given to a server of their own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.render.engines.ollama.commands import DROPS_TOOLS, MODELFILE
from app.render.engines.ollama.template.named import SETTING
from tests.support import ollama_data as data
from tests.support.server import LIVE_ENV, Server, start_gunicorn
from tests.support.shared_data import OLLAMA, require_ollama

require_ollama()

LLAMA_3_1 = data.upstream_jinja("meta-llama-Llama-3.1-8B-Instruct")
CHAT = [{"role": "user", "content": "Hello!"}]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """gunicorn whose sandbox workers read Ollama's template data (a setting of their
    process, which an application in this process cannot give workers already started)."""
    started = start_gunicorn({**LIVE_ENV, SETTING: str(OLLAMA)})
    yield started
    started.close()


def _post(server: Server, path: str, body: dict) -> dict:
    status, answer = server.post(path, body, timeout=60)
    assert status == 200, answer
    return answer


def test_command_api_gives_ollamas_modelfile_and_setting(server: Server) -> None:
    body = {"template": LLAMA_3_1, "messages": CHAT, "model": "llama.gguf"}
    answer = _post(server, "/api/command", body)
    ollama = [c for c in answer["commands"] if c["engine"] == "ollama"]
    forms = {c["form"]: c for c in ollama}
    assert forms["modelfile"]["command"] == "ollama create my-model -f Modelfile"
    written = forms["modelfile"]["files"][MODELFILE]
    assert written.startswith("FROM ./llama.gguf\n")
    # Llama 3.1 keeps its chat template: the Modelfile says what create writes instead.
    assert "llama3-instruct" in written
    assert forms["env"]["command"] == "OLLAMA_GO_TEMPLATE=0 ollama serve"
    assert (answer["ollama_path"], answer["ollama_name"]) == ("llama-server", "llama3-instruct")
    assert answer["ollama_distance"] == 0
    assert answer["ollama_drops_tools"]["id"] == DROPS_TOOLS


def test_analyze_api_reports_that_ollama_drops_llama_3_1s_tools(server: Server) -> None:
    body = {"template": LLAMA_3_1, "messages": CHAT, "add_generation_prompt": True}
    answer = _post(server, "/api/analyze", body)
    found = [d for d in answer["diagnostics"] if d["id"] == DROPS_TOOLS]
    assert len(found) == 1 and "llama3-instruct" in found[0]["message"]


def test_analyze_api_has_no_ollama_finding_for_a_template_without_tools(server: Server) -> None:
    body = {"template": data.index_jinja("chatml"), "messages": CHAT}
    answer = _post(server, "/api/analyze", body)
    assert DROPS_TOOLS not in {d["id"] for d in answer["diagnostics"]}
