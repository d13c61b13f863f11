"""Analysis, diff and command lines over HTTP."""

from __future__ import annotations

from functools import partial
from typing import Any

from flask import Blueprint, current_app

from app.analysis.analyze import analyze
from app.analysis.commands import build_commands, template_facts
from app.analysis.diff import char_opcodes, token_opcodes
from app.errors import RequestError
from app.problems import TemplateProblem
from app.render.request import parse_render_request
from app.sources.source import Source
from app.sources.store import TokenizerUnavailable
from app.web.api import json_body, sandbox_pool
from app.web.sources import source_store

blueprint = Blueprint("analysis", __name__)


def _object(body: Any, field: str | None = None) -> dict:
    if type(body) is not dict:
        where = f"'{field}'" if field else "The request body"
        raise RequestError(field, f"{where} must be a JSON object.")
    return body


def _source(body: dict) -> Source | None:
    """The optional `source` field: the id of a loaded source."""
    source_id = body.get("source")
    if source_id is None:
        return None
    if type(source_id) is not str:
        raise RequestError("source", "'source' must be the id of a loaded source.")
    source = source_store().get_built(source_id)
    if source is None:
        raise RequestError("source", f"No loaded source has the id {source_id!r}.")
    return source


@blueprint.post("/api/analyze")
def analyze_template() -> dict:
    """Capabilities, content format, diagnostics and prefix stability."""
    body = _object(json_body())
    source = _source(body)
    return analyze(parse_render_request(body), sandbox_pool(), source, **analysis_budget(source))


def analysis_budget(source: Source | None) -> dict[str, Any]:
    """The vocabulary and the limits `analyze` works with, from the settings."""
    store = source_store()
    return {
        "token_ids": partial(store.token_ids, source) if source is not None else None,
        "max_turns": int(current_app.config["ANALYSIS_TURNS"]),
        "max_chars": int(current_app.config["OUTPUT_CHARS"]),
    }


def _side(body: dict, name: str) -> dict[str, Any]:
    """One side of a diff: its prompt, or the template's error."""
    request = parse_render_request(_object(body.get(name), name))
    try:
        return {"prompt": sandbox_pool().render(request).prompt}
    except TemplateProblem as problem:
        return {"error": problem.to_json()}


@blueprint.post("/api/diff")
def diff_prompts() -> dict:
    """Both prompts, character-level opcodes, and token-level ones with a tokenizer."""
    body = _object(json_body())
    source = _source(body)
    left, right = _side(body, "left"), _side(body, "right")
    answer: dict[str, Any] = {"left": left, "right": right, "opcodes": None, "token_opcodes": None}
    if "prompt" not in left or "prompt" not in right:
        return answer
    answer["opcodes"] = [list(op) for op in char_opcodes(left["prompt"], right["prompt"])]
    if source is not None and source.can_tokenize:
        try:
            both = source_store().tokenize(source, [left["prompt"], right["prompt"]])
        except TokenizerUnavailable as error:
            answer["tokens_error"] = {"message": error.message, "limit": error.limit}
            return answer
        left_ids, right_ids = (side.tokens.ids for side in both)
        answer["left"]["token_ids"], answer["right"]["token_ids"] = left_ids, right_ids
        answer["token_opcodes"] = [list(op) for op in token_opcodes(left_ids, right_ids)]
    return answer


@blueprint.post("/api/command")
def command_lines() -> dict:
    """Command lines that run a model with this template, for each engine and form."""
    body = _object(json_body())
    template, kwargs, model = body.get("template"), body.get("kwargs") or {}, body.get("model")
    if type(template) is not str:
        raise RequestError("template", "'template' is required: the chat template source.")
    if type(kwargs) is not dict:
        raise RequestError("kwargs", "'kwargs' must be an object.")
    if model is not None and type(model) is not str:
        raise RequestError("model", "'model' must be a file name.")
    messages, tools = body.get("messages") or [], body.get("tools")
    special_tokens = body.get("special_tokens") or {}
    for field, value, kind in (
        ("messages", messages, list),
        ("tools", tools if tools is not None else [], list),
        ("special_tokens", special_tokens, dict),
    ):
        if type(value) is not kind:
            raise RequestError(field, f"'{field}' must be a JSON {kind.__name__}.")
    facts = sandbox_pool().run(template_facts, template, kwargs, special_tokens)
    commands = build_commands(
        template,
        kwargs,
        model,
        messages=messages,
        tools=tools,
        special_tokens=special_tokens,
        **facts,
    )
    return {"commands": commands, **facts}
