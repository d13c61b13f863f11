"""A local Ollama registry (the OCI distribution API's two GETs) for the registry-source
tests: `GET /v2/NAMESPACE/MODEL/manifests/TAG` and `GET /v2/NAMESPACE/MODEL/blobs/DIGEST`,
each blob answered through a redirect to `/cdn/DIGEST`, as registry.ollama.ai sends
blobs to its storage. Every request is noted (`FakeHub.requests`)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_hub import FakeHub, _Handler

_MANIFEST = re.compile(r"^/v2/(?P<repo>[^/]+/[^/]+)/manifests/(?P<tag>[^/]+)$")
_BLOB = re.compile(r"^/v2/(?P<repo>[^/]+/[^/]+)/blobs/(?P<digest>sha256:[0-9a-f]{64})$")
_CDN = re.compile(r"^/cdn/(?P<digest>sha256:[0-9a-f]{64})$")

TEMPLATE = "application/vnd.ollama.image.template"
SYSTEM = "application/vnd.ollama.image.system"
PARAMS = "application/vnd.ollama.image.params"
WEIGHTS = "application/vnd.ollama.image.model"
LICENSE = "application/vnd.ollama.image.license"
CONFIG = "application/vnd.docker.container.image.v1+json"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Model:
    """A model's manifest, built from its blobs (media type -> bytes), and how the
    registry treats it."""

    layers: list[tuple[str, bytes]]
    config: dict[str, Any] = field(default_factory=dict)
    #: Sizes the manifest claims instead of the real ones, by media type.
    claimed_sizes: dict[str, int] = field(default_factory=dict)
    #: Answer every request for this model with this status (401, 429 ...).
    status: int | None = None
    #: A manifest sent as it is, instead of the one built.
    raw_manifest: bytes | None = None

    def config_bytes(self) -> bytes:
        return json.dumps({"model_format": "gguf", **self.config}).encode()

    def manifest(self) -> bytes:
        if self.raw_manifest is not None:
            return self.raw_manifest

        def entry(media_type: str, data: bytes) -> dict[str, Any]:
            size = self.claimed_sizes.get(media_type, len(data))
            return {"mediaType": media_type, "digest": digest(data), "size": size}

        return json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": entry(CONFIG, self.config_bytes()),
                "layers": [entry(kind, data) for kind, data in self.layers],
            }
        ).encode()

    def blobs(self) -> dict[str, bytes]:
        found = {digest(data): data for _, data in self.layers}
        found[digest(self.config_bytes())] = self.config_bytes()
        return found


class FakeRegistry(FakeHub):
    """Models by `NAMESPACE/MODEL:TAG` (`models`); `swapped` blobs are sent in place of
    others (digest -> bytes), to test the digest check."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.models: dict[str, Model] = {}
        self.swapped: dict[str, bytes] = {}
        super().__init__(host)

    def paths(self) -> list[str]:
        """The paths of every GET so far."""
        return [path for method, path, _ in self.requests if method == "GET"]

    def route(self, handler: _Handler, path: str, body: bool) -> None:
        if match := _MANIFEST.match(path):
            model = self.models.get(f"{match['repo']}:{match['tag']}")
            if self._refused(handler, model, body):
                return
            handler.answer(200, {"Content-Type": "application/json"}, model.manifest(), body)
        elif match := _BLOB.match(path):
            model = next((m for name, m in self.models.items()
                          if name.startswith(match["repo"] + ":")
                          and match["digest"] in m.blobs()), None)  # fmt: skip
            if self._refused(handler, model, body):
                return
            handler.answer(307, {"Location": f"/cdn/{match['digest']}"}, b"", body)
        elif match := _CDN.match(path):
            blobs = {d: data for m in self.models.values() for d, data in m.blobs().items()}
            data = self.swapped.get(match["digest"], blobs.get(match["digest"]))
            if data is None:
                handler.answer(404, {}, b"no such blob", body)
            else:
                handler.answer(200, {"Content-Type": "application/octet-stream"}, data, body)
        else:
            handler.answer(404, {}, b"not found", body)

    def _refused(self, handler: _Handler, model: Model | None, body: bool) -> bool:
        if model is None:
            error = {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]}
            handler.answer(404, {"Content-Type": "application/json"}, json.dumps(error).encode(),
                           body)  # fmt: skip
            return True
        if model.status is not None:
            handler.answer(model.status, {"Retry-After": "9"}, b"{}", body)
            return True
        return False
