"""Harmony chosen by the model's family, as Ollama (fb30760) chooses it: `shouldUseHarmony`
(server/routes.go) is a gptoss/gpt-oss family and a TEMPLATE with <|start|> and <|end|>;
such a model never prefers the GGUF's chat template (server/images.go, GetModel), reads
answers with the harmony parser, and is thinking-capable (modelFamilyCapabilities). The
cases follow Ollama's own: chatModeForModel's (server/routes_generate_test.go: family
gptoss, TEMPLATE "<|start|><|end|>", a chat template: rendered by Ollama; family unknown:
not) and TestChatHandlerHarmonyPreservesStructuralTokens (model_family gptoss, TEMPLATE
`<|start|><|end|>{{ range .Messages }}{{ .Content }}{{ end }}`)."""

from __future__ import annotations

import pytest

from app.render.engines.ollama import choice
from app.render.engines.ollama.hub.mapper import HubMapping
from app.render.engines.ollama.hub.route import hub_route
from app.render.engines.ollama.template.named import Entry, Match
from app.sources.remote_sources import RemoteSettings
from tests.support.fake_registry import TEMPLATE, FakeRegistry, Model
from tests.support.remote_install import remote_installer

HARMONY_GO = "<|start|><|end|>{{ range .Messages }}{{ .Content }}{{ end }}"
#: A chat template with more capabilities (tools, thinking) than HARMONY_GO.
JINJA = "{% for m in messages %}{{ m.content }}{% endfor %}{{ tools }}<think></think>"
CHAT = [{"role": "user", "content": "hello"}]


def test_a_gpt_oss_template_with_harmony_tags_uses_harmony_and_says_why():
    for family in ("gptoss", "gpt-oss"):
        taken = choice.decide(HARMONY_GO, "go", family=family)
        assert (taken.path, taken.harmony) == ("go-template", True)
        assert any("Ollama uses Harmony" in reason for reason in taken.reasons)
    # Another family, or tags missing: no Harmony.
    assert not choice.decide(HARMONY_GO, "go", family="llama").harmony
    assert not choice.decide("{{ .Prompt }}", "go", family="gptoss").harmony
    # Unknown family: the sentence says what would decide it.
    unknown = choice.decide(HARMONY_GO, "go")
    assert not unknown.harmony
    assert any("were the model's family gpt-oss" in reason for reason in unknown.reasons)


def test_harmony_keeps_the_template_where_the_chat_template_could_do_more(monkeypatch):
    entry = Entry("harmonyish", JINJA, HARMONY_GO, ())
    monkeypatch.setattr(choice, "adoption", lambda jinja: (Match(entry, 0), ""))
    # Without the family, the chat template's tools and thinking win: llama-server.
    assert choice.decide(JINJA, "jinja").path == "llama-server"
    taken = choice.decide(JINJA, "jinja", family="gptoss")
    assert (taken.path, taken.go_template, taken.harmony) == ("go-template", HARMONY_GO, True)


def test_the_hubs_harmony_template_is_kept_for_a_gpt_oss_gguf():
    mapping = HubMapping("library/gpt-oss:20b", HARMONY_GO, ("<|return|>",), ())
    assert hub_route(JINJA, mapping).path == "llama-server"
    route = hub_route(JINJA, mapping, family="gptoss")
    assert route.path == "go-template"
    assert any("Ollama uses Harmony" in reason for reason in route.reasons)


@pytest.fixture()
def gpt_oss(client, app):
    """A gpt-oss model in a local registry (its config's model_family), loaded."""
    server = FakeRegistry()
    server.models["library/gpt-oss:20b"] = Model(
        layers=[(TEMPLATE, HARMONY_GO.encode())], config={"model_family": "gptoss"}
    )
    with remote_installer(app, RemoteSettings(seconds=10.0, allow_private=True)):
        name = f"{server.url}/library/gpt-oss:20b"
        answer = client.post("/api/sources/ollama", json={"name": name})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        yield answer.json
    server.close()


def _body(source: dict, **more) -> dict:
    return {
        "template": source["templates"]["default"],
        "messages": CHAT,
        "engine": "ollama",
        "source": source["id"],
        **more,
    }


def test_a_registry_gpt_oss_model_renders_and_reads_with_harmony(client, gpt_oss):
    assert gpt_oss["ollama"]["family"] == "gptoss"
    rendered = client.post("/api/render", json=_body(gpt_oss))
    assert rendered.status_code == 200, rendered.get_data(as_text=True)
    assert rendered.json["ollama"]["harmony"] is True
    assert rendered.json["prompt"] == "<|start|><|end|>hello"
    assert any("Ollama uses Harmony" in said for said in rendered.json["rewrites"])
    # Thinking asked of a template without thinking tags is not refused: gpt-oss thinks.
    thinking = client.post("/api/render", json=_body(gpt_oss, kwargs={"enable_thinking": True}))
    assert thinking.status_code == 200, thinking.get_data(as_text=True)
    completion = (
        "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Hi!"
    )
    parsed = client.post(
        "/api/parse", json={**_body(gpt_oss), "completion": completion, "engines": ["ollama"]}
    )
    assert parsed.status_code == 200, parsed.get_data(as_text=True)
    (entry,) = parsed.json["engines"]
    assert entry["parser"] == "harmony"
    message = entry["message"]
    # Harmony's channels split, not the whole text as content (the Go template's reading).
    assert (message["content"], message["reasoning_content"]) == ("Hi!", "Hmm.")
    assert any("Ollama uses Harmony" in note for note in entry["notes"])


def test_a_gguf_architecture_is_the_family(client):
    from app.analysis.model_files import model_files
    from app.sources.source import Source

    source = Source("x", "gguf", {}, {}, None, None, None, metadata={"architecture": "gptoss"})
    assert model_files(source).family == "gptoss"
