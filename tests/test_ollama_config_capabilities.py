"""A registry model's config `capabilities`, as Ollama (fb30760) uses them: `Capabilities`
(server/images.go) starts from the config's list (`configCapabilities`), so a model whose
config lists "thinking" gets thinking turned on when the request does not say, and one
that lists "tools" is not refused tools, whatever its TEMPLATE mentions (ChatHandler,
server/routes.go)."""

from __future__ import annotations

import pytest

from app.sources.limits import SourceLimits
from app.sources.ollama_source import canonical_layers, load_layers
from app.sources.remote_sources import RemoteSettings
from tests.support.fake_registry import TEMPLATE, FakeRegistry, Model
from tests.support.remote_install import remote_installer

#: A TEMPLATE with neither .Tools nor thinking tags.
PLAIN = "{{ range .Messages }}[{{ .Role }}]{{ .Content }}{{ end }}"
CHAT = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def _load(client, app, config: dict) -> dict:
    server = FakeRegistry()
    server.models["library/m:1b"] = Model(layers=[(TEMPLATE, PLAIN.encode())], config=config)
    try:
        with remote_installer(app, RemoteSettings(seconds=10.0, allow_private=True)):
            answer = client.post("/api/sources/ollama", json={"name": f"{server.url}/library/m:1b"})
            assert answer.status_code == 200, answer.get_data(as_text=True)
            return answer.json
    finally:
        server.close()


def _render(client, source: dict, **more):
    body = {"template": PLAIN, "messages": CHAT, "engine": "ollama", "source": source["id"]}
    return client.post("/api/render", json={**body, **more})


def test_listed_capabilities_are_read_and_shown(client, app):
    source = _load(client, app, {"capabilities": ["completion", "tools", "thinking"]})
    assert source["ollama"]["capabilities"] == ["completion", "tools", "thinking"]


def test_a_listed_thinking_capability_turns_thinking_on(client, app):
    source = _load(client, app, {"capabilities": ["completion", "thinking"]})
    answer = _render(client, source)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    notes = " ".join(answer.json.get("rewrites") or [])
    assert "Ollama turns thinking on" in notes and "config lists" in notes
    # Thinking asked of it is not refused either.
    asked = _render(client, source, kwargs={"enable_thinking": True})
    assert asked.status_code == 200, asked.get_data(as_text=True)


def test_a_listed_tools_capability_is_not_refused_tools(client, app):
    unlisted = _load(client, app, {})
    refused = _render(client, unlisted, tools=TOOLS)
    assert refused.status_code == 422 and "does not support tools" in refused.get_data(as_text=True)
    listed = _load(client, app, {"capabilities": ["completion", "tools"]})
    answer = _render(client, listed, tools=TOOLS)
    assert answer.status_code == 200, answer.get_data(as_text=True)


def test_a_config_whose_capabilities_are_not_strings_is_refused(client, app):
    server = FakeRegistry()
    server.models["library/m:1b"] = Model(
        layers=[(TEMPLATE, PLAIN.encode())], config={"capabilities": ["tools", 3]}
    )
    try:
        with remote_installer(app, RemoteSettings(seconds=10.0, allow_private=True)):
            answer = client.post("/api/sources/ollama", json={"name": f"{server.url}/library/m:1b"})
    finally:
        server.close()
    assert answer.status_code == 502 and "capabilities" in answer.get_data(as_text=True)


@pytest.mark.parametrize("stored", [["tools", 3], "tools"])
def test_stored_layers_with_bad_capabilities_are_refused(stored):
    layers = {"name": "m", "template": PLAIN, "system": None, "params": None,
              "renderer": None, "parser": None, "capabilities": stored}  # fmt: skip
    with pytest.raises(Exception, match="capabilities"):
        load_layers(canonical_layers(layers), SourceLimits())
