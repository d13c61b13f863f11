"""Loading sources (GGUF prefixes, Hugging Face files) and tokenizing with them."""

from __future__ import annotations

from flask import Blueprint, current_app, request

from app.config import max_upload_bytes
from app.render.request import RequestError
from app.sources.gguf import GGUFError, IncompleteHeader
from app.sources.hf import HFFileError
from app.sources.store import SourceStore
from app.tokens.vocab import tokenize
from app.web.api import json_body
from app.web.errors import error_body

blueprint = Blueprint("sources", __name__)


def source_store() -> SourceStore:
    """The sources of this application."""
    return current_app.extensions["source_store"]


def _allow_uploads() -> None:
    # Uploads get their own cap, larger than the one on JSON bodies.
    request.max_content_length = max_upload_bytes(current_app.config)


@blueprint.post("/api/sources/gguf")
def load_gguf() -> tuple[dict, int]:
    """Parse the first bytes of a GGUF file: 200, or 409 asking for more bytes."""
    _allow_uploads()
    name = request.args.get("name") or None
    try:
        loaded = source_store().load_gguf(request.get_data(), name)
    except GGUFError as error:
        return error_body("GGUFError", error.message, offset=error.offset), 422
    if isinstance(loaded, IncompleteHeader):
        body = error_body("IncompleteHeader", loaded.message, need_bytes=loaded.need_bytes)
        return body, 409
    return loaded.to_json(), 200


@blueprint.post("/api/sources/hf")
def load_hf() -> tuple[dict, int]:
    """Read uploaded Hugging Face tokenizer files (multipart)."""
    _allow_uploads()
    files = {}
    for upload in request.files.values():
        name = upload.filename or "unnamed"
        try:
            files[name] = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            return error_body("HFFileError", f"{name}: not UTF-8 text", file=name), 422
    if not files:
        raise RequestError("files", "Upload at least one file (multipart/form-data).")
    try:
        return source_store().load_hf(files).to_json(), 200
    except HFFileError as error:
        return error_body("HFFileError", str(error), file=error.file), 422


@blueprint.get("/api/sources/<source_id>")
def show_source(source_id: str) -> tuple[dict, int]:
    """A loaded source, rebuilt from storage when this process has not seen it."""
    source = source_store().get(source_id)
    if source is None:
        return error_body("NotFound", f"No source with id {source_id!r}."), 404
    return source.to_json(), 200


@blueprint.post("/api/tokenize")
def tokenize_text() -> tuple[dict, int]:
    """Token ids, pieces and character spans from a source's own vocabulary."""
    body = json_body()
    if type(body) is not dict:
        raise RequestError(None, "The request body must be a JSON object.")
    source_id, text = body.get("source"), body.get("text")
    if type(source_id) is not str:
        raise RequestError("source", "'source' must be the id of a loaded source.")
    if type(text) is not str:
        raise RequestError("text", "'text' must be a string.")
    flags = {name: body.get(name, default) for name, default in _FLAGS.items()}
    for name, value in flags.items():
        if type(value) is not bool:
            raise RequestError(name, f"'{name}' must be a boolean.")
    source = source_store().get(source_id)
    if source is None:
        return error_body("NotFound", f"No source with id {source_id!r}."), 404
    tok = source.tokenizer
    if tok is None or not tok.support.supported:
        reason = "this source has no vocabulary" if tok is None else tok.support.reason
        return error_body("TokenizerUnavailable", f"Cannot tokenize: {reason}."), 422
    try:
        tokens = tokenize(tok, text, **flags)
    except Exception as error:  # a hostile vocabulary must cost a clear error, not a 500
        return error_body("TokenizerUnavailable", f"The tokenizer failed: {error}."), 422
    return {"tokens": [_token_json(t) for t in tokens], "count": len(tokens)}, 200


_FLAGS = {"add_special": False, "parse_special": True}


def _token_json(token) -> dict:
    return {
        "id": token.id,
        "piece": token.piece,
        "start": token.start,
        "end": token.end,
        "special": token.special,
    }
