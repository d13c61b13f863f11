"""The playground state: everything a prompt depends on, plus what the page shows again.

A state is the render it asks for (`RenderRequest`: the `/api/render` body's template,
messages, tools, documents, options, special tokens, kwargs, clock and engine), held as
it is, plus what a share needs to open the same view (a template to compare, the loaded
source, the open tab). It is validated once, in `PlaygroundState.from_json`, whether it
comes from the API, the page's form or a stored share; `to_json` is its one JSON form,
which shares store and hash.

Key order inside messages, tools, documents and kwargs is part of the input (`tojson`
writes it into the prompt), so it is kept exactly as given; only the top-level fields
have a fixed order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from app.render.engines import DEFAULT_ENGINE, ENGINES, counterpart
from app.render.render_request import RenderRequest
from app.render.request import RequestError, parse_render_request
from app.request_body import json_type, optional_string

# The engine a state renders with unless it names another (`DEFAULT_ENGINE`) is left out
# of the JSON form, so that a body spelling it out gets the same share id as one that
# does not.

#: The kinds of source a state can point at.
SOURCE_KINDS = ("gguf", "hf", "modelfile", "ollama")


def _compare_engines(body: dict) -> bool | str:
    """The engine the Diff view compares against: an engine id, true for the other
    engine (as older pages and shares say), or false."""
    value = body.get("compare_engines")
    if value is None or type(value) is bool:
        return bool(value)
    if type(value) is not str or value not in ENGINES:
        message = "'compare_engines' must be a boolean or the id of an engine."
        raise RequestError("compare_engines", message)
    return value


def _parsers(body: dict) -> dict[str, dict[str, str]]:
    """The parser options per engine: `{engine id: {option: value}}`, all strings (which
    values an engine takes is its own business: an unknown one falls back to its
    default, as `AnswerRequest.option` says)."""
    value = body.get("parsers")
    if value is None:
        return {}
    if type(value) is not dict:
        raise RequestError("parsers", f"'parsers' must be an object, not {json_type(value)}.")
    for engine, options in value.items():
        where = f"parsers.{engine[:40]}"
        if engine not in ENGINES:
            raise RequestError(where, f"'{where}': there is no engine {engine[:40]!r}.")
        if type(options) is not dict or any(type(option) is not str for option in options.values()):
            message = f"'{where}' must be an object of strings (option: value)."
            raise RequestError(where, message)
    return value


@dataclass(frozen=True)
class SourceRef:
    """The loaded source a state shows: its id and kind, and which file and template.

    A body may name the source by its id alone: the ref is then `bare` (no kind yet)
    until the pipeline binds it to the loaded source (`app.pipeline.outputs`)."""

    id: str
    #: "gguf" or "hf"; None for a bare id, not yet bound.
    kind: str | None
    file_name: str | None = None
    template_name: str | None = None
    #: Where a remote source was read: `type` ("hub" or "url"), `repo`, `revision`, the
    #: commit `sha`, `file`, `url` (each a string or null); None for an upload.
    origin: dict[str, str | None] | None = None

    @classmethod
    def from_json(cls, value: Any) -> SourceRef | None:
        """Validate `source`: a loaded source's id, or the object `to_json` writes
        (unknown keys dropped, as `/api/render` ignores them)."""
        if value is None:
            return None
        if type(value) is str:
            return cls(id=value, kind=None)
        if type(value) is not dict:
            message = f"'source' must be a loaded source's id or an object, not {json_type(value)}."
            raise RequestError("source", message)
        source_id = value.get("id")
        if type(source_id) is not str:
            message = f"'source.id' must be a string, not {json_type(source_id)}."
            raise RequestError("source.id", message)
        kind = value.get("kind")
        if type(kind) is not str or kind not in SOURCE_KINDS:
            shown = repr(kind) if type(kind) is str else json_type(kind)
            message = f"'source.kind' must be one of {', '.join(SOURCE_KINDS)}, not {shown}."
            raise RequestError("source.kind", message)
        return cls(
            id=source_id,
            kind=kind,
            file_name=optional_string(value, "file_name", "source.file_name"),
            template_name=optional_string(value, "template_name", "source.template_name"),
            origin=_origin(value.get("origin")),
        )

    @property
    def bare(self) -> bool:
        """Whether the body named the source by its id alone (see `bind`)."""
        return self.kind is None

    def to_json(self) -> dict[str, Any]:
        """Every key, null when unknown, so the page reads one fixed shape."""
        # In sorted order: shares stored before key order was kept sorted every key, and
        # a state they hold must still hash to the same id.
        document: dict[str, Any] = {
            "file_name": self.file_name,
            "id": self.id,
            "kind": self.kind,
            "template_name": self.template_name,
        }
        if self.origin is not None:  # absent, not null: older shares keep their ids
            document["origin"] = self.origin
        return document


#: The fields of a remote source's `origin`, in the (sorted) order they are stored.
ORIGIN_FIELDS = ("file", "repo", "revision", "sha", "type", "url")


def _origin(value: Any) -> dict[str, str | None] | None:
    """A remote source's provenance: its known fields, each a string or null."""
    if value is None:
        return None
    if type(value) is not dict:
        message = f"'source.origin' must be an object or null, not {json_type(value)}."
        raise RequestError("source.origin", message)
    return {name: optional_string(value, name, f"source.origin.{name}") for name in ORIGIN_FIELDS}


@dataclass(frozen=True)
class PlaygroundState:
    """What the user set up: one validated value for the page, the API and shares."""

    #: The render it asks for, as the body gave it; its `now` is None for the time of
    #: each render (see `pinned`), and its BOS/EOS flags may come from a loaded source.
    request: RenderRequest
    #: A second template whose prompt the Diff view compares with this one's.
    compare_template: str | None = None
    #: The engine the Diff view compares against instead (True: the other engine).
    compare_engines: bool | str = False
    source: SourceRef | None = None
    #: The library template the template was loaded from (edited since, maybe); None
    #: when it was typed or comes from the source.
    library: str | None = None
    #: The output tab to open; None for the first one.
    view: str | None = None
    #: What the model generated after the prompt, for the Response view; None for none.
    completion: str | None = None
    #: The parser options per engine id (`AnswerReader.options`); missing ones default.
    parsers: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, body: Any) -> PlaygroundState:
        """The state a JSON body describes; raises `RequestError` naming the first bad field.

        Unknown keys are dropped. `now` is kept as given, in ISO 8601 as Python writes it
        (`Z` becomes `+00:00`); absent, it stays None (see `pinned`).
        """
        request = parse_render_request(body)  # rejects a non-object body first
        return cls(
            request=request,
            compare_template=optional_string(body, "compare_template"),
            compare_engines=_compare_engines(body),
            source=SourceRef.from_json(body.get("source")),
            library=optional_string(body, "library"),
            view=optional_string(body, "view"),
            completion=optional_string(body, "completion"),
            parsers=_parsers(body),
        )

    def to_json(self) -> dict[str, Any]:
        """The one JSON form: what a share stores and hashes, and a valid render body.

        Nulls are left out and so are the defaults of the fields a render body may omit
        (engine, BOS/EOS, compare engines), so that the same state always has the same
        form; render options are written out. Top-level keys come in sorted order (as
        `canonical_json` writes them); nested values keep theirs.
        """
        request = self.request
        document = {
            "add_bos_token": request.add_bos_token or None,
            "add_eos_token": request.add_eos_token or None,
            "add_generation_prompt": request.add_generation_prompt,
            "compare_engines": self.compare_engines or None,
            "compare_template": self.compare_template,
            "completion": self.completion,
            "content_format": None if request.content_format == "auto" else request.content_format,
            "continue_final_message": request.continue_final_message,
            "documents": request.documents,
            "engine": None if request.engine == DEFAULT_ENGINE else request.engine,
            "kwargs": request.kwargs,
            "library": self.library,
            "messages": request.messages,
            "now": self.now_text,
            "parsers": self.parsers or None,
            "source": None if self.source is None else self.source.to_json(),
            "special_tokens": request.special_tokens,
            "template": request.template,
            "template_kind": None if request.template_kind == "jinja" else request.template_kind,
            "tool_arguments": None
            if request.tool_arguments == "as_written"
            else request.tool_arguments,
            "tools": request.tools,
            "view": self.view,
        }
        return {key: value for key, value in document.items() if value is not None}

    @property
    def now_text(self) -> str | None:
        """The clock in ISO 8601, as the JSON form writes it; None for the time of each
        render."""
        return None if self.request.now is None else self.request.now.isoformat()

    def asking(self, **changes: Any) -> PlaygroundState:
        """This state with those fields of its render request changed."""
        return replace(self, request=replace(self.request, **changes))

    def compared_engine(self) -> str | None:
        """The engine the Diff view renders beside this one's, if it compares engines."""
        if self.compare_engines is True:
            return counterpart(self.request.engine or DEFAULT_ENGINE)
        return self.compare_engines or None

    def pinned(self, now: datetime | None = None) -> PlaygroundState:
        """This state with a clock: its own `now`, else `now` (default: the current time).

        A share pins the moment it was made, so its link renders the same prompt forever.
        """
        if self.request.now is not None:
            return self
        return self.asking(now=now or datetime.now())

    def render_request(
        self, template: str | None = None, engine: str | None = None
    ) -> RenderRequest:
        """The render this state asks for, with a clock (without one, the time of this
        render); `template` and `engine` replace its own (the compare template, the other
        engine)."""
        request = self.pinned().request
        if template is not None:
            request = replace(request, template=template)
        if engine:
            request = replace(request, engine=engine)
        return request
