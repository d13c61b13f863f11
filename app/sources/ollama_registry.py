"""An Ollama model by name (`qwen3:8b`, `library/qwen3:8b`, `hf.co/USER/REPO:TAG`,
`registry.ollama.ai/library/qwen3`), read from its registry: the manifest, then only
the small layers that say how the model is prompted, never its weights.

Facts from ollama/ollama at commit fb30760996871fa9460115c753afd2c60d4ab0f7:
- Names (`types/model/name.go`): the tag follows the last `:` after the last `/`;
  before it come the model, the namespace and the host, each after a `/` from the
  right; the host may start with `scheme://`. Missing parts default to the host
  `registry.ollama.ai`, the namespace `library`, the tag `latest` and `https`. Every
  part starts with a letter, digit or `_` and holds those, `-` and `.` (no `.` in a
  namespace, `:` only in the host); hosts are at most 350 characters, the rest 80.
- The manifest (`server/images.go`, `pullModelManifest`): `GET
  {scheme}://{host}/v2/{namespace}/{model}/manifests/{tag}` with `Accept:
  application/vnd.docker.distribution.manifest.v2+json`; blobs are `.../blobs/{digest}`.
- The layers a model's prompt comes from (`server/images.go`, `GetModel`):
  `application/vnd.ollama.image.template` (or the older `.prompt`), `.system`, and
  `.params` (a JSON object of options: `stop` a list of strings), and `.messages` (the
  stored messages, a JSON list of api.Message objects, which `ollama create` writes from
  MESSAGE commands); the last of each counts. The config blob (`types/model/config.go`,
  `ConfigV2`) names the `renderer`, the `parser` and the `model_family`, and may list
  `capabilities`.

Every request goes through `PublicURLReader` (public addresses only, checked at every
redirect) within one `Budget`; each layer is read only when the manifest says it is at
most `PLAYGROUND_MODELFILE_KB`, and checked against its digest.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from app.sources.public_url import Answer, PublicURLReader
from app.sources.remote import Budget, RemoteError, rate_limited
from app.untrusted_json import JSONRefused, loads

DEFAULT_HOST, DEFAULT_NAMESPACE, DEFAULT_TAG, DEFAULT_SCHEME = (
    "registry.ollama.ai", "library", "latest", "https",
)  # fmt: skip
MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"
#: The layers read, by media type, and what each gives.
TEXT_LAYERS = {
    "application/vnd.ollama.image.template": "template",
    "application/vnd.ollama.image.prompt": "template",
    "application/vnd.ollama.image.system": "system",
    "application/vnd.ollama.image.params": "params",
    "application/vnd.ollama.image.messages": "messages",
}
#: The layers whose text is JSON, and the type it must have.
_JSON_LAYERS: dict[str, type] = {"params": dict, "messages": list}
#: The config's fields read, by the name the stored layers give them.
_CONFIG_FIELDS = {"renderer": "renderer", "parser": "parser", "family": "model_family"}
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-:]*")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class ModelName:
    """A fully qualified Ollama model name."""

    scheme: str
    host: str
    namespace: str
    model: str
    tag: str

    def __str__(self) -> str:
        shown = f"{self.host}/{self.namespace}/{self.model}:{self.tag}"
        return shown if self.scheme == DEFAULT_SCHEME else f"{self.scheme}://{shown}"

    def repository_url(self) -> str:
        """Where the registry serves this repository (`/v2/NAMESPACE/MODEL`)."""
        return f"{self.scheme}://{self.host}/v2/{self.namespace}/{self.model}"

    def manifest_url(self) -> str:
        return f"{self.repository_url()}/manifests/{self.tag}"


def parse_name(text: str) -> ModelName | None:
    """The model a name means, as Ollama's `ParseName` reads it; None when it is not a
    valid name (a part missing, too long, or with a character names may not have)."""
    text = text.strip()
    tag = None
    if text.rfind(":") > text.rfind("/"):
        text, _, tag = text.rpartition(":")
    rest, _, model = text.rpartition("/")
    host = namespace = None
    if "/" in text:
        host_part, slash, namespace = rest.rpartition("/")
        host = host_part if slash else None
    scheme, found, bare = (host or "").partition("://")
    host, scheme = (bare, scheme) if found else (host, None)
    name = ModelName(
        scheme or DEFAULT_SCHEME,
        DEFAULT_HOST if host is None else host,
        DEFAULT_NAMESPACE if namespace is None else namespace,
        model,
        DEFAULT_TAG if tag is None else tag,
    )
    return name if _valid(name) else None


def _valid(name: ModelName) -> bool:
    parts = [(name.namespace, _PART, 80), (name.model, _PART, 80), (name.tag, _PART, 80)]
    if "." in name.namespace or name.scheme not in ("http", "https"):
        return False
    return (
        0 < len(name.host) <= 350
        and _HOST.fullmatch(name.host) is not None
        and all(0 < len(part) <= most and form.fullmatch(part) for part, form, most in parts)
    )


@dataclass(frozen=True)
class Layer:
    """One blob the manifest lists."""

    media_type: str
    digest: str
    size: int


@dataclass(frozen=True)
class RegistryModel:
    """What was read: the layers as the store keeps them, and the manifest's digest."""

    layers: dict[str, Any]
    manifest_digest: str


class OllamaRegistry:
    """Reads models from Ollama registries through a `PublicURLReader`."""

    def __init__(self, urls: PublicURLReader, max_layer_bytes: int, json_depth: int) -> None:
        self.urls = urls
        self.max_layer_bytes = max_layer_bytes
        self.json_depth = json_depth

    def read(self, name: ModelName, budget: Budget) -> RegistryModel:
        """The model's template, system, params, messages, renderer, parser and family
        (a fetch thread)."""
        body = self._get(name.manifest_url(), name, "manifest", budget, {"Accept": MANIFEST_TYPE})
        config, layers = self._layers(self._json(body, name, "manifest"), name)
        found: dict[str, Any] = {"template": None, "system": None, "params": None}
        for kind, layer in layers.items():
            text = self._blob(name, layer, kind, budget).decode("utf-8", "replace")
            found[kind] = self._object(text, name, kind) if kind in _JSON_LAYERS else text
        names: dict[str, str | None] = dict.fromkeys(_CONFIG_FIELDS)
        if config is not None:
            settings = self._object(self._blob(name, config, "config", budget), name, "config")
            names = {key: _optional_string(settings, field, name)
                     for key, field in _CONFIG_FIELDS.items()}  # fmt: skip
            if listed := _strings(settings, "capabilities", name):
                # Only when listed: the stored form of other models (their id) is unchanged.
                names["capabilities"] = listed
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        return RegistryModel({"name": str(name), **found, **names}, digest)

    def _layers(self, manifest: Any, name: ModelName) -> tuple[Layer | None, dict[str, Layer]]:
        """The config blob and the last layer of each kind read; the rest (the weights,
        projectors, licences) only listed."""
        if type(manifest) is not dict or type(manifest.get("layers")) is not list:
            raise _bad(name, "its manifest lists no layers (is it a model's manifest?)")
        layers = {}
        for item in manifest["layers"]:
            layer = _layer(item, name)
            if layer.media_type in TEXT_LAYERS:
                layers[TEXT_LAYERS[layer.media_type]] = layer
        config = manifest.get("config")
        return (None if config is None else _layer(config, name)), layers

    def _blob(self, name: ModelName, layer: Layer, kind: str, budget: Budget) -> bytes:
        if layer.size > self.max_layer_bytes:
            raise too_large_layer(name, kind, layer.size, self.max_layer_bytes)
        url = f"{name.repository_url()}/blobs/{layer.digest}"
        data = self._get(url, name, f"{kind} layer", budget)
        if "sha256:" + hashlib.sha256(data).hexdigest() != layer.digest:
            raise _bad(name, f"the registry sent a {kind} layer that is not {layer.digest}")
        return data

    def _get(
        self,
        url: str,
        name: ModelName,
        what: str,
        budget: Budget,
        headers: dict[str, str] | None = None,
    ) -> bytes:
        answer = self.urls.fetch(url, self.max_layer_bytes, budget, headers)
        if answer.status != 200:
            raise status_error(answer, name, what)
        if len(answer.body) > self.max_layer_bytes:
            raise too_large_layer(name, what, None, self.max_layer_bytes)
        return answer.body

    def _json(self, data: bytes, name: ModelName, what: str) -> Any:
        try:
            return loads(data, self.json_depth)
        except JSONRefused as error:
            raise _bad(name, f"its {what} is not JSON: {error.message}") from None

    def _object(self, data: str | bytes, name: ModelName, what: str) -> Any:
        """A JSON layer's value: an object (a list for the messages layer)."""
        value = self._json(data if isinstance(data, bytes) else data.encode(), name, what)
        if type(value) is not _JSON_LAYERS.get(what, dict):
            held = "list" if what == "messages" else "object"
            raise _bad(name, f"its {what} layer does not hold a JSON {held}")
        return value


def _layer(item: Any, name: ModelName) -> Layer:
    """A manifest entry, checked: a media type, a sha256 digest, a size."""
    if (
        type(item) is not dict
        or type(item.get("mediaType")) is not str
        or type(item.get("digest")) is not str
        or not _DIGEST.fullmatch(item["digest"])
        or type(item.get("size")) is not int
        or item["size"] < 0
    ):
        raise _bad(name, "its manifest lists a layer without a media type, sha256 digest or size")
    return Layer(item["mediaType"], item["digest"], item["size"])


def _optional_string(settings: dict[str, Any], key: str, name: ModelName) -> str | None:
    value = settings.get(key)
    if value is not None and type(value) is not str:
        raise _bad(name, f"its config's {key} is not a string")
    return value or None


def _strings(settings: dict[str, Any], key: str, name: ModelName) -> list[str]:
    """A config list of strings (Go's []string: a JSON null is none)."""
    value = settings.get(key)
    if value is None:
        return []
    if type(value) is not list or not all(type(item) is str for item in value):
        raise _bad(name, f"its config's {key} is not a list of strings")
    return value


def _bad(name: ModelName, why: str) -> RemoteError:
    return RemoteError("BadAnswer", f"{name} cannot be read: {why}.", 502)


def too_large_layer(name: ModelName, what: str, size: int | None, cap: int) -> RemoteError:
    """The 413 of a manifest or layer over `PLAYGROUND_MODELFILE_KB`."""
    held = f"{size:,} bytes" if size is not None else f"more than {cap:,} bytes"
    return RemoteError(
        "TooLarge",
        f"{name}'s {what} holds {held}; at most {cap:,} bytes of a manifest or of a"
        " template, system, params, messages or config layer are read (PLAYGROUND_MODELFILE_KB).",
        413,
        {"limit": "modelfile_kb", "max_bytes": cap},
    )


def status_error(answer: Answer, name: ModelName, what: str) -> RemoteError:
    """A registry's refusal as a typed error, in words."""
    host, status = answer.target.host, answer.status
    if status in (401, 403):
        return RemoteError(
            "Forbidden",
            f"{host} refuses to give {name}'s {what} without signing in (HTTP {status}):"
            " only models anyone may pull are read here.",
            403,
        )
    if status == 404:
        message = (
            f"There is no model {name} on {host} (check the name and tag)."
            if what == "manifest"
            else f"{host} has no {what} that {name}'s manifest lists."
        )
        return RemoteError("NotFound", message, 404)
    if status == 429:
        return rate_limited(host, answer.headers.get("retry-after", ""), "registry_rate_limit")
    return RemoteError("BadAnswer", f"{host} answered HTTP {status} for {name}'s {what}.", 502)
