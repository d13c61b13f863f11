"""Loading sources (GGUF prefixes, Hugging Face files) and tokenizing with them."""

from __future__ import annotations

from pathlib import PurePosixPath

from flask import Blueprint, current_app, request

from app.budget import OverLimit
from app.config import max_upload_bytes, source_limits
from app.errors import NotFound, RequestError
from app.pipeline.token_data import compact_tokens
from app.request_body import json_object
from app.sources.gguf import IncompleteHeader
from app.sources.hf import is_utf8
from app.sources.store import SourceRefused, SourceStore
from app.sources.worker import Refused
from app.state import SourceRef
from app.tokens.vocab import Token
from app.web.api import json_body

blueprint = Blueprint("sources", __name__)


def source_store() -> SourceStore:
    """The sources of this application."""
    return current_app.extensions["source_store"]


def _allow_uploads() -> None:
    # Uploads get their own cap, larger than the one on JSON bodies.
    request.max_content_length = max_upload_bytes(current_app.config)


@blueprint.post("/api/sources/gguf")
def load_gguf() -> tuple[dict, int]:
    """Parse the first bytes of a GGUF file: 200, or 409 asking for more bytes (422 for
    bytes that are not GGUF: `SourceRefused`)."""
    _allow_uploads()
    name = request.args.get("name") or None
    loaded = source_store().load_gguf(request.get_data(), name)
    if isinstance(loaded, IncompleteHeader):
        raise loaded
    return loaded.to_json(), 200


@blueprint.post("/api/sources/hf")
def load_hf() -> tuple[dict, int]:
    """Read uploaded Hugging Face tokenizer files (multipart)."""
    _allow_uploads()
    files: dict[str, bytes] = {}
    last_parts: set[str] = set()
    # Every part, several under one field name too (`curl -F files=@a -F files=@b`).
    for _, upload in request.files.items(multi=True):
        name = upload.filename or "unnamed"
        # The reader knows a file by the last part of its path: `a/tokenizer.json` and
        # `b/tokenizer.json` would be one file, and one of them silently lost.
        last = PurePosixPath(name).name
        if last in last_parts:
            raise RequestError("files", f"Two files are named {last!r}: send each file once.")
        last_parts.add(last)
        files[name] = upload.read()
        if not is_utf8(files[name]):
            message = f"{name}: this file is not UTF-8 text, so not a tokenizer or template file"
            raise SourceRefused(Refused("HFFileError", message, file=name))
    if not files:
        raise RequestError("files", "Upload at least one file (multipart/form-data).")
    return source_store().load_hf(files).to_json(), 200


@blueprint.post("/api/sources/modelfile")
def load_modelfile() -> tuple[dict, int]:
    """`{"modelfile": text}`: an Ollama Modelfile's source, its template a Go template
    (422 naming the line that is wrong, 413 over `PLAYGROUND_MODELFILE_KB`)."""
    text = json_object(json_body()).get("modelfile")
    if type(text) is not str:
        raise RequestError("modelfile", "'modelfile' must be the text of a Modelfile.")
    data = text.encode("utf-8", "surrogatepass")
    cap = source_limits(current_app.config).modelfile_bytes
    if len(data) > cap:
        raise OverLimit(
            "modelfile_kb",
            f"The Modelfile holds {len(data):,} bytes; at most {cap:,} are read"
            " (PLAYGROUND_MODELFILE_KB).",
            status=413,
            fields={"field": "modelfile"},
        )
    return source_store().load_modelfile(data).to_json(), 200


@blueprint.get("/api/sources/<source_id>")
def show_source(source_id: str) -> tuple[dict, int]:
    """A loaded source, rebuilt from storage when this process has not seen it."""
    source = source_store().get(source_id)
    if source is None:
        raise NotFound(f"No source with id {source_id[:100]!r}.")
    return source.to_json(), 200


@blueprint.post("/api/tokenize")
def tokenize_text() -> tuple[dict, int]:
    """Token ids, pieces and character spans from a source's own vocabulary.

    At most `PLAYGROUND_TOKENS_PER_ANSWER` tokens per answer: `offset` and `limit` page
    through the rest, and `count` is always the whole text's.
    """
    body = json_object(json_body())
    ref, text = SourceRef.from_json(body.get("source")), body.get("text")
    if ref is None:
        raise RequestError("source", "'source' must be the id of a loaded source.")
    source_id = ref.id
    if type(text) is not str:
        raise RequestError("text", "'text' must be a string.")
    flags = {name: body.get(name, default) for name, default in _FLAGS.items()}
    for name, value in [*flags.items(), ("pieces", body.get("pieces", False))]:
        if type(value) is not bool:
            raise RequestError(name, f"'{name}' must be a boolean.")
    answer_format = body.get("format", "tokens")
    if answer_format not in _FORMATS:
        raise RequestError("format", '\'format\' must be "tokens" (the default) or "compact".')
    offset, limit = _window(body)
    source = source_store().get(source_id)
    if source is None:
        raise NotFound(f"No source with id {source_id[:100]!r}.")
    # TokenizerUnavailable: 422.
    [tokens] = source_store().tokenize(source, [text], offset=offset, limit=limit, **flags)
    if answer_format == "compact":
        answer = compact_tokens(tokens.tokens, with_pieces=body.get("pieces", False))
        answer["count"] = tokens.total
    else:
        answer = {"tokens": [_token_json(t) for t in tokens.tokens], "count": tokens.total}
    if offset + len(tokens.tokens) < tokens.total:
        answer["next_offset"] = offset + len(tokens.tokens)
    return answer, 200


_FLAGS = {"add_special": False, "parse_special": True}
#: `format`: a JSON object per token (the default), or parallel arrays (`compact_tokens`).
_FORMATS = ("tokens", "compact")


def tokens_per_answer() -> int:
    """The most tokens one answer carries (`PLAYGROUND_TOKENS_PER_ANSWER`)."""
    return int(current_app.config["TOKENS_PER_ANSWER"])


def _window(body: dict) -> tuple[int, int]:
    """`offset` (default 0) and `limit` (default and most: the per-answer cap)."""
    cap = tokens_per_answer()
    values = {"offset": body.get("offset", 0), "limit": body.get("limit", cap)}
    for name, value in values.items():
        if type(value) is not int or value < 0:
            raise RequestError(name, f"'{name}' must be a whole number of tokens, 0 or more.")
    if values["limit"] > cap:
        raise OverLimit(
            "tokens_per_answer",
            f"'limit' is {values['limit']:,}; one answer carries at most {cap:,} tokens "
            "(PLAYGROUND_TOKENS_PER_ANSWER): page through with 'offset'.",
            status=400,
            fields={"field": "limit"},
        )
    return values["offset"], values["limit"]


def _token_json(token: Token) -> dict:
    return {
        "id": token.id,
        "piece": token.piece,
        "start": token.start,
        "end": token.end,
        "special": token.special,
    }
