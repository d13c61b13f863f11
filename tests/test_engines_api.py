"""The render engine choice through the API, the page fragments and share links."""

from __future__ import annotations

import json

from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()

GEMMA = (TEMPLATES_DIR / "google-gemma-2-2b-it.jinja").read_text(encoding="utf-8")
MESSAGES = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


def render(client, **fields):
    body = {"template": GEMMA, "messages": MESSAGES, "add_generation_prompt": True}
    return client.post("/api/render", json={**body, "special_tokens": TOKENS, **fields})


def test_transformers_is_the_default_engine(client):
    response = render(client)
    # Gemma 2 refuses a developer (or system) message in Python...
    assert response.status_code == 422
    assert "alternate" in response.json["error"]["message"]


def test_llama_cpp_engine_rewrites_and_says_so(client):
    answer = render(client, engine="llama.cpp", add_bos_token=True).json
    # ...while llama-server turns it into system text merged into the user turn,
    # and strips the BOS the template writes because the vocabulary adds one.
    assert answer["engine"] == "llama.cpp"
    assert answer["prompt"] == (
        "<start_of_turn>user\nBe brief.\nHi<end_of_turn>\n<start_of_turn>model\n"
    )
    assert "developer message turned into system" in answer["rewrites"]
    assert any("BOS" in rewrite for rewrite in answer["rewrites"])


def test_unknown_engine_is_400(client):
    response = render(client, engine="no-such-engine")
    assert (response.status_code, response.json["error"]["field"]) == (400, "engine")


def test_page_compares_the_two_engines(client):
    form = {
        "template": "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}\n"
        "{% endfor %}",
        "messages": json.dumps(MESSAGES),
        "special_tokens": json.dumps(TOKENS),
        "compare_engines": "on",
        "view": "diff",
    }
    html = client.post("/fragments/output", data=form).get_data(as_text=True)
    assert "Against the llama.cpp engine." in html
    assert 'id="diff-unified"' in html


def test_share_keeps_the_engine(client):
    body = {"template": "x", "messages": MESSAGES, "engine": "llama.cpp", "add_bos_token": True}
    url = client.post("/api/shares", json=body).json["url"]
    stored = client.get(url + ".json").json
    assert (stored["engine"], stored["add_bos_token"]) == ("llama.cpp", True)
    plain = {"template": "x", "messages": MESSAGES, "now": "2024-01-01T00:00:00"}
    default = client.post("/api/shares", json=plain).json
    spelled = {**plain, "engine": "transformers"}
    assert client.post("/api/shares", json=spelled).json["id"] == default["id"]
