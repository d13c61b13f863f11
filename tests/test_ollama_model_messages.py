"""A model's stored messages (a Modelfile's MESSAGE commands, a registry model's messages
layer) in the prompt as /api/chat puts them: `server/routes.go` (ChatHandler) at
ollama/ollama fb30760 builds `append(m.Messages, req.Messages...)` and puts the model's
SYSTEM before that when the request's own first message is not a system message."""

from __future__ import annotations

import json

import pytest

from app.render.engines.ollama.engine_facts import with_model
from app.render.render_request import ModelFiles, RenderRequest
from app.sources.remote_sources import RemoteSettings
from tests.support.fake_registry import SYSTEM, TEMPLATE, FakeRegistry, Model, digest
from tests.support.remote_install import remote_installer

CHATML = """{{ range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
CHAT = [{"role": "user", "content": "Weather in Paris?"}]
TURN = "<|im_start|>{}\n{}<|im_end|>\n"
MESSAGES = "application/vnd.ollama.image.messages"
#: A messages layer as `ollama create` writes it (`setMessages`: the JSON encoder's line):
#: these bytes are the blob sha256:298baeaf... that Ollama's TestCreateReplacesMessages
#: (server/routes_create_test.go) expects for its three messages.
LAYER = (
    b'[{"role":"assistant","content":"What is my purpose?"},'
    b'{"role":"user","content":"You run tests."},'
    b'{"role":"assistant","content":"Oh, my god."}]\n'
)
LAYER_DIGEST = "sha256:298baeaf6928a60cf666d88d64a1ba606feb43a2865687c39e40652e407bffc4"


def _load(client, *lines: str) -> dict:
    text = f'FROM qwen3:8b\nTEMPLATE """{CHATML}"""\n' + "".join(f"{line}\n" for line in lines)
    answer = client.post("/api/sources/modelfile", json={"modelfile": text})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.json


def _render(client, source: dict, messages=CHAT) -> dict:
    body = {
        "template": source["templates"]["default"],
        "messages": messages,
        "engine": "ollama",
        "source": source["id"],
    }
    answer = client.post("/api/render", json=body)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.json


def _turns(*pairs: tuple[str, str]) -> str:
    return "".join(TURN.format(role, text) for role, text in pairs)


def _prompt(*pairs: tuple[str, str]) -> str:
    """The whole prompt CHATML writes for the chat `pairs`."""
    return _turns(*pairs) + "<|im_start|>assistant\n"


def test_the_modelfiles_messages_come_before_the_chat_and_the_page_says_so(client):
    source = _load(
        client,
        "SYSTEM You are terse.",
        "MESSAGE user Is Paris in France?",
        'MESSAGE assistant """Yes."""',
    )
    assert source["ollama"]["messages"] == [
        {"role": "user", "content": "Is Paris in France?"},
        {"role": "assistant", "content": "Yes."},
    ]
    answer = _render(client, source)
    assert answer["prompt"] == _prompt(
        ("system", "You are terse."),
        ("user", "Is Paris in France?"),
        ("assistant", "Yes."),
        ("user", "Weather in Paris?"),
    )
    said = " ".join(answer["rewrites"])
    assert "2 MESSAGE commands" in said and "SYSTEM" in said


def test_a_chat_opening_with_its_own_system_message_gets_it_after_the_modelfiles(client):
    # Ollama tests the request's first message, then appends the request to the model's
    # messages: the request's system message comes after them, and SYSTEM is left out.
    source = _load(client, "SYSTEM You are terse.", "MESSAGE user Hi", "MESSAGE assistant Hello")
    own = [{"role": "system", "content": "Be kind."}, *CHAT]
    prompt = _render(client, source, own)["prompt"]
    assert prompt == _prompt(
        ("user", "Hi"),
        ("assistant", "Hello"),
        ("system", "Be kind."),
        ("user", "Weather in Paris?"),
    )


def test_a_model_system_message_does_not_stop_system_from_opening_the_chat():
    request = RenderRequest(
        CHATML,
        CHAT,
        template_kind="go",
        model=ModelFiles(system="S", messages=(("system", "M"),)),
    )
    shaped, said = with_model(request)
    assert [m["content"] for m in shaped.messages] == ["S", "M", "Weather in Paris?"]
    assert said


def test_an_empty_chat_gets_no_model_messages():
    # /api/chat answers an empty chat by loading the model, and renders nothing.
    request = RenderRequest(CHATML, [], model=ModelFiles(system="S", messages=(("user", "M"),)))
    shaped, said = with_model(request)
    assert shaped.messages == [] and said == []


def test_the_registrys_messages_layer_reaches_the_prompt(client, registry_with_messages):
    source, layer = registry_with_messages
    assert source["ollama"]["messages"] == json.loads(layer)
    prompt = _render(client, source)["prompt"]
    assert prompt.startswith(_turns(("system", "You are terse."), *[
        (message["role"], message["content"]) for message in json.loads(layer)
    ]))  # fmt: skip


@pytest.fixture()
def registry_with_messages(client, app):
    """A model in a local registry with a template, a system and a messages layer, loaded."""
    assert digest(LAYER) == LAYER_DIGEST
    server = FakeRegistry()
    server.models["library/chat:1"] = Model(
        layers=[(TEMPLATE, CHATML.encode()), (SYSTEM, b"You are terse."), (MESSAGES, LAYER)]
    )
    with remote_installer(app, RemoteSettings(seconds=10.0, allow_private=True)):
        answer = client.post("/api/sources/ollama", json={"name": f"{server.url}/library/chat:1"})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        yield answer.json, LAYER
    server.close()
