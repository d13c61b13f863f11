"""Ollama models by name (`POST /api/sources/ollama`), read from a local registry the
tests start: the manifest and the small layers only, never the weights; refused off the
public internet unless allowed; bounded; the registry's refusals in words."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from app.sources.ollama_registry import ModelName, parse_name
from app.sources.remote_sources import RemoteSettings
from tests.support.fake_registry import (
    LICENSE,
    PARAMS,
    SYSTEM,
    TEMPLATE,
    WEIGHTS,
    FakeRegistry,
    Model,
    digest,
)
from tests.support.remote_install import remote_installer
from tests.support.trickle_host import TrickleHost

GO_TEMPLATE = (
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n"
    "{{ end }}<|im_start|>assistant\n"
)
PARAMS_JSON = {"stop": ["<|im_start|>", "<|im_end|>"], "temperature": 0.6, "top_k": 20}
WEIGHTS_BYTES = b"GGUF" + b"\0" * 4096


def qwen3(**changes) -> Model:
    """A qwen3-like model: weights, template, system, params, a licence, and a config
    naming its renderer and parser."""
    model = Model(
        layers=[
            (WEIGHTS, WEIGHTS_BYTES),
            (TEMPLATE, GO_TEMPLATE.encode()),
            (SYSTEM, b"You are terse."),
            (LICENSE, b"Apache-2.0"),
            (PARAMS, json.dumps(PARAMS_JSON).encode()),
        ],
        config={"renderer": "qwen3", "parser": "qwen3"},
        claimed_sizes={WEIGHTS: 5_200_000_000},
    )
    return replace(model, **changes)


@pytest.fixture()
def registry():
    server = FakeRegistry()
    server.models["library/qwen3:8b"] = qwen3()
    yield server
    server.close()


@pytest.fixture()
def remote_with(app):
    """Remote sources that may read the local registry (as a private deployment's may)."""
    with remote_installer(app, RemoteSettings(seconds=10.0, allow_private=True)) as install:
        yield install


def load(client, name):
    return client.post("/api/sources/ollama", json={"name": name})


def name_on(registry: FakeRegistry, model: str = "library/qwen3:8b") -> str:
    return f"{registry.url}/{model}"


def test_a_model_gives_its_go_template_stops_system_renderer_and_parser(
    client, registry, remote_with
):
    response = load(client, name_on(registry))
    assert response.status_code == 200, response.get_data(as_text=True)
    source = response.json
    assert source["kind"] == "ollama"
    assert source["template_kind"] == "go"
    assert source["templates"] == {"default": GO_TEMPLATE}
    assert source["ollama"]["stop"] == ["<|im_start|>", "<|im_end|>"]
    assert source["ollama"]["system"] == "You are terse."
    assert source["ollama"]["parameters"] == {"temperature": ["0.6"], "top_k": ["20"]}
    assert (source["ollama"]["renderer"], source["ollama"]["parser"]) == ("qwen3", "qwen3")
    assert source["metadata"] == {"name": f"{registry.url}/library/qwen3:8b"}
    manifest = registry.models["library/qwen3:8b"].manifest()
    assert source["origin"] == {
        "type": "ollama",
        "repo": "library/qwen3",
        "revision": "8b",
        "sha": digest(manifest),
        "file": None,
        "url": f"{registry.url}/v2/library/qwen3/manifests/8b",
    }
    # Read back by id (as a share is), from the database.
    assert client.get(f"/api/sources/{source['id']}").json["ollama"] == source["ollama"]


def test_only_the_manifest_and_the_small_layers_are_read_never_the_weights(
    client, registry, remote_with
):
    assert load(client, name_on(registry)).status_code == 200
    model = registry.models["library/qwen3:8b"]
    asked = registry.paths()
    assert digest(WEIGHTS_BYTES) not in " ".join(asked)
    assert digest(b"Apache-2.0") not in " ".join(asked)
    read = {path.rsplit("/", 1)[1] for path in asked if path.startswith("/cdn/")}
    wanted = {digest(data) for kind, data in model.layers if kind in (TEMPLATE, SYSTEM, PARAMS)}
    assert read == wanted | {digest(model.config_bytes())}
    manifest_asks = [h for m, p, h in registry.requests if "/manifests/" in p]
    assert manifest_asks[0]["accept"] == "application/vnd.docker.distribution.manifest.v2+json"


def test_a_manifest_that_calls_the_weights_a_template_is_refused_by_their_size(
    client, registry, remote_with
):
    # The weights' digest and size under the template's media type: 413 before any byte.
    big = b"\0" * 4096
    registry.models["library/qwen3:8b"] = qwen3(
        layers=[(TEMPLATE, big)], claimed_sizes={TEMPLATE: 5_200_000_000}
    )
    response = load(client, name_on(registry))
    assert response.status_code == 413
    error = response.json["error"]
    assert error["type"] == "TooLarge"
    assert error["limit"] == "modelfile_kb"
    assert "PLAYGROUND_MODELFILE_KB" in error["message"]
    assert not any(path.startswith("/cdn/") for path in registry.paths())


def test_a_layer_over_the_limit_is_a_413(client, registry, remote_with):
    remote_with(layer_bytes=40)
    response = load(client, name_on(registry))
    assert response.status_code == 413  # the manifest itself is over 40 bytes
    assert "manifest" in response.json["error"]["message"]


def test_a_layer_whose_bytes_are_not_its_digest_is_refused(client, registry, remote_with):
    registry.swapped[digest(GO_TEMPLATE.encode())] = b"{{ .Prompt }}"
    response = load(client, name_on(registry))
    assert response.status_code == 502
    assert "template layer that is not sha256:" in response.json["error"]["message"]


def test_a_model_without_template_has_no_template_and_still_loads(client, registry, remote_with):
    registry.models["library/plain:1"] = qwen3(layers=[(WEIGHTS, WEIGHTS_BYTES)], config={})
    source = load(client, name_on(registry, "library/plain:1")).json
    assert source["templates"] == {}
    assert source["ollama"]["stop"] == []
    assert source["ollama"]["renderer"] is None


def test_a_private_registry_is_refused_by_default(client, registry, remote_with):
    remote_with(allow_private=False)
    response = load(client, name_on(registry))
    assert response.status_code == 400
    assert response.json["error"]["type"] == "Refused"
    assert "PLAYGROUND_URL_ALLOW_PRIVATE" in response.json["error"]["message"]
    assert registry.requests == []


@pytest.mark.parametrize(
    ("status", "answer", "words"),
    [
        (401, 403, "without signing in (HTTP 401)"),
        (403, 403, "only models anyone may pull are read here"),
        (429, 429, "limiting how fast"),
        (500, 502, "answered HTTP 500"),
    ],
)
def test_the_registrys_refusals_in_words(client, registry, remote_with, status, answer, words):
    registry.models["library/qwen3:8b"] = qwen3(status=status)
    response = load(client, name_on(registry))
    assert response.status_code == answer
    assert words in response.json["error"]["message"]
    if status == 429:
        assert response.headers["Retry-After"] == "9"


def test_an_unknown_model_is_a_404_naming_it(client, registry, remote_with):
    response = load(client, name_on(registry, "library/nothing:1b"))
    assert response.status_code == 404
    assert "There is no model" in response.json["error"]["message"]
    assert "library/nothing:1b" in response.json["error"]["message"]


@pytest.mark.parametrize(
    ("manifest", "words"),
    [
        (b"not json", "its manifest is not JSON"),
        (b'{"manifests": []}', "lists no layers"),
        (b'{"layers": [{"mediaType": "x", "digest": "md5:1", "size": 1}]}', "sha256 digest"),
    ],
)
def test_a_malformed_manifest_is_a_502(client, registry, remote_with, manifest, words):
    registry.models["library/qwen3:8b"] = qwen3(raw_manifest=manifest)
    response = load(client, name_on(registry))
    assert response.status_code == 502
    assert words in response.json["error"]["message"]


def test_params_that_are_not_an_object_are_refused(client, registry, remote_with):
    registry.models["library/qwen3:8b"] = qwen3(layers=[(PARAMS, b"[1]")])
    response = load(client, name_on(registry))
    assert response.status_code == 502
    assert "params layer does not hold a JSON object" in response.json["error"]["message"]


@pytest.mark.parametrize("name", ["", "qwen3:", "a.b/c", "ns/m@sha256:00", "ftp://h/ns/m"])
def test_a_name_that_is_not_one_is_a_400(client, remote_with, name):
    response = load(client, name)
    assert response.status_code == 400
    assert response.json["error"]["field"] == "name"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("qwen3:8b", ModelName("https", "registry.ollama.ai", "library", "qwen3", "8b")),
        ("library/qwen3", ModelName("https", "registry.ollama.ai", "library", "qwen3", "latest")),
        ("hf.co/bartowski/Qwen3-8B-GGUF:Q4_K_M",
         ModelName("https", "hf.co", "bartowski", "Qwen3-8B-GGUF", "Q4_K_M")),
        ("registry.ollama.ai/library/qwen3:8b",
         ModelName("https", "registry.ollama.ai", "library", "qwen3", "8b")),
        ("http://127.0.0.1:5000/ns/m", ModelName("http", "127.0.0.1:5000", "ns", "m", "latest")),
        ("http://h/m", None),
        ("ns//m", None),
        ("x" * 81, None),
    ],
)  # fmt: skip
def test_names_are_read_as_ollama_reads_them(text, expected):
    assert parse_name(text) == expected


def test_the_manifest_url():
    name = parse_name("hf.co/u/r:Q8_0")
    assert name.manifest_url() == "https://hf.co/v2/u/r/manifests/Q8_0"
    assert str(name) == "hf.co/u/r:Q8_0"


def test_a_registry_that_trickles_is_cut_off_at_the_deadline(client, remote_with):
    host = TrickleHost(interval=0.2)
    try:
        remote_with(seconds=1.0, threads=1)
        started = time.monotonic()
        response = load(client, f"{host.url}/library/qwen3:8b")
        assert (response.status_code, response.json["error"]["limit"]) == (504, "fetch_seconds")
        assert time.monotonic() - started < 2.0
    finally:
        host.close()


def test_a_load_over_the_byte_budget_is_a_413(client, registry, remote_with):
    # Each layer fits PLAYGROUND_MODELFILE_KB; all of them together do not fit the load's
    # budget (PLAYGROUND_UPLOAD_MB).
    remote_with(max_bytes=600)
    response = load(client, name_on(registry))
    assert response.status_code == 413
    assert response.json["error"]["limit"] == "upload_mb"
