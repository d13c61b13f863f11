"""Remote sources over HTTP: a Hugging Face model id, a GGUF file by URL, or an Ollama
model by name."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, current_app

from app.config import max_upload_bytes, source_limits
from app.errors import RequestError
from app.request_body import json_object
from app.sources.hub import Reference, parse_reference
from app.sources.ollama_registry import parse_name
from app.sources.remote_sources import RemoteSettings, RemoteSources
from app.web.admission import sandbox_slot
from app.web.api import json_body

blueprint = Blueprint("remote", __name__)

#: Longest repository reference, file name or URL read from a body.
MAX_REFERENCE_CHARS = 2048


def install(app: Flask) -> None:
    """Make this application's remote sources (their fetch threads start on first use)."""
    config = app.config
    settings = RemoteSettings(
        hf_endpoint=str(config["HF_ENDPOINT"]),
        hf_token=str(config["HF_TOKEN"]) or None,
        allow_private=bool(config["URL_ALLOW_PRIVATE"]),
        seconds=float(config["FETCH_SECONDS"]),
        threads=int(config["FETCHES"]),
        redirects=int(config["FETCH_REDIRECTS"]),
        max_bytes=max_upload_bytes(config),
        layer_bytes=source_limits(config).modelfile_bytes,
        json_depth=int(config["JSON_DEPTH"]),
    )
    app.extensions["remote_sources"] = RemoteSources(
        app.extensions["source_store"], settings, parse_slot=sandbox_slot
    )
    app.register_blueprint(blueprint)


def remote_sources() -> RemoteSources:
    """The remote sources of this application."""
    return current_app.extensions["remote_sources"]


@blueprint.post("/api/sources/hub")
def load_hub() -> tuple[dict, int]:
    """`{"repo", "revision"?, "file"?}`: a Hub repository's source, or its GGUF files."""
    body = json_object(json_body())
    text = _string(body, "repo", required=True)
    reference = parse_reference(text, remote_sources().hub.endpoint)
    if reference is None:
        raise RequestError(
            "repo", f"{text[:200]!r} is not a model id (ORG/NAME) or a Hub URL of one."
        )
    revision = _string(body, "revision") or reference.revision
    file = _string(body, "file") or reference.file
    return remote_sources().load_hub(Reference(reference.repo, revision, file)), 200


@blueprint.post("/api/sources/url")
def load_url() -> tuple[dict, int]:
    """`{"url"}`: the source of a GGUF file's header, read by Range requests."""
    return remote_sources().load_url(_string(json_object(json_body()), "url", required=True)), 200


@blueprint.post("/api/sources/ollama")
def load_ollama() -> tuple[dict, int]:
    """`{"name"}`: an Ollama model's source (`qwen3:8b`, `hf.co/USER/REPO:TAG`), read
    from its registry's manifest and small layers."""
    text = _string(json_object(json_body()), "name", required=True)
    name = parse_name(text)
    if name is None:
        raise RequestError(
            "name",
            f"{text[:200]!r} is not an Ollama model name ([HOST/][NAMESPACE/]MODEL[:TAG],"
            " such as qwen3:8b or hf.co/USER/REPO:TAG).",
        )
    return remote_sources().load_ollama(name), 200


def _string(body: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if type(value) is not str or not value.strip():
        raise RequestError(name, f"'{name}' must be a non-empty string.")
    if len(value) > MAX_REFERENCE_CHARS:
        raise RequestError(name, f"'{name}' is longer than {MAX_REFERENCE_CHARS} characters.")
    return value.strip()
