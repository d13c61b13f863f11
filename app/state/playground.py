"""The playground state: everything a prompt depends on, plus what the page shows again.

A state is the `/api/render` body (template, messages, tools, documents, options,
special tokens, kwargs, clock, engine) plus what a share needs to open the same view (a
template to compare, the loaded source, the open tab). It is validated once, in
`PlaygroundState.from_json`, whether it comes from the API, the page's form or a stored
share; `to_json` is its one JSON form, which shares store and hash.

Key order inside messages, tools, documents and kwargs is part of the input (`tojson`
writes it into the prompt), so it is kept exactly as given; only the top-level fields
have a fixed order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from app.render.core import RenderRequest
from app.render.engines import DEFAULT_ENGINE, ENGINES, counterpart
from app.render.request import RequestError, parse_render_request

# The engine a state renders with unless it names another (`DEFAULT_ENGINE`) is left out
# of the JSON form, so that a body spelling it out gets the same share id as one that
# does not.

#: The kinds of source a state can point at.
SOURCE_KINDS = ("gguf", "hf")

#: Fields a state shares with `RenderRequest`, passed over as they are both ways.
_RENDER_FIELDS = (
    "messages",
    "tools",
    "documents",
    "add_generation_prompt",
    "continue_final_message",
    "special_tokens",
    "kwargs",
    "add_bos_token",
    "add_eos_token",
    "content_format",
    "tool_arguments",
)


def _kind(value: Any) -> str:
    """A JSON type name for error messages."""
    if value is None:
        return "null"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), "a number")


def _optional_string(body: dict, name: str, path: str | None = None) -> str | None:
    """A string or null (absent) field; `path` is how an error names it."""
    value = body.get(name)
    if value is not None and type(value) is not str:
        where = path or name
        raise RequestError(where, f"'{where}' must be a string or null, not {_kind(value)}.")
    return value


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
        raise RequestError("parsers", f"'parsers' must be an object, not {_kind(value)}.")
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
    """The loaded source a state shows: its id and kind, and which file and template."""

    id: str
    kind: str
    file_name: str | None = None
    template_name: str | None = None
    #: Where a remote source was read: `type` ("hub" or "url"), `repo`, `revision`, the
    #: commit `sha`, `file`, `url` (each a string or null); None for an upload.
    origin: dict[str, str | None] | None = None

    @classmethod
    def from_json(cls, value: Any) -> SourceRef | None:
        """Validate `source`; unknown keys are dropped, as `/api/render` ignores them."""
        if value is None:
            return None
        if type(value) is not dict:
            raise RequestError("source", f"'source' must be an object or null, not {_kind(value)}.")
        source_id = value.get("id")
        if type(source_id) is not str:
            message = f"'source.id' must be a string, not {_kind(source_id)}."
            raise RequestError("source.id", message)
        kind = value.get("kind")
        if type(kind) is not str or kind not in SOURCE_KINDS:
            shown = repr(kind) if type(kind) is str else _kind(kind)
            message = f"'source.kind' must be 'gguf' or 'hf', not {shown}."
            raise RequestError("source.kind", message)
        return cls(
            id=source_id,
            kind=kind,
            file_name=_optional_string(value, "file_name", "source.file_name"),
            template_name=_optional_string(value, "template_name", "source.template_name"),
            origin=_origin(value.get("origin")),
        )

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
        message = f"'source.origin' must be an object or null, not {_kind(value)}."
        raise RequestError("source.origin", message)
    return {name: _optional_string(value, name, f"source.origin.{name}") for name in ORIGIN_FIELDS}


@dataclass(frozen=True)
class PlaygroundState:
    """What the user set up: one validated value for the page, the API and shares."""

    template: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    documents: list[Any] | None = None
    add_generation_prompt: bool = False
    continue_final_message: bool | str = False
    special_tokens: dict[str, str] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: The ISO 8601 time `strftime_now` reads; None for the time of each render.
    now: str | None = None
    engine: str = DEFAULT_ENGINE
    #: Whether the vocabulary adds BOS/EOS itself (a loaded source may say so too).
    add_bos_token: bool = False
    add_eos_token: bool = False
    #: vLLM's `--chat-template-content-format` for the vllm engine.
    content_format: str = "auto"
    #: How a client sends the conversation's tool-call arguments (`app.render.client`).
    tool_arguments: str = "as_written"
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
        render = parse_render_request(body)  # rejects a non-object body first
        return cls(
            **{name: getattr(render, name) for name in _RENDER_FIELDS},
            template=render.template,
            now=None if body.get("now") is None or render.now is None else render.now.isoformat(),
            engine=render.engine,
            compare_template=_optional_string(body, "compare_template"),
            compare_engines=_compare_engines(body),
            source=SourceRef.from_json(body.get("source")),
            library=_optional_string(body, "library"),
            view=_optional_string(body, "view"),
            completion=_optional_string(body, "completion"),
            parsers=_parsers(body),
        )

    def to_json(self) -> dict[str, Any]:
        """The one JSON form: what a share stores and hashes, and a valid render body.

        Nulls are left out and so are the defaults of the fields a render body may omit
        (engine, BOS/EOS, compare engines), so that the same state always has the same
        form; render options are written out. Top-level keys come in sorted order (as
        `canonical_json` writes them); nested values keep theirs.
        """
        document = {
            "add_bos_token": self.add_bos_token or None,
            "add_eos_token": self.add_eos_token or None,
            "add_generation_prompt": self.add_generation_prompt,
            "compare_engines": self.compare_engines or None,
            "compare_template": self.compare_template,
            "completion": self.completion,
            "content_format": None if self.content_format == "auto" else self.content_format,
            "continue_final_message": self.continue_final_message,
            "documents": self.documents,
            "engine": None if self.engine == DEFAULT_ENGINE else self.engine,
            "kwargs": self.kwargs,
            "library": self.library,
            "messages": self.messages,
            "now": self.now,
            "parsers": self.parsers or None,
            "source": None if self.source is None else self.source.to_json(),
            "special_tokens": self.special_tokens,
            "template": self.template,
            "tool_arguments": None if self.tool_arguments == "as_written" else self.tool_arguments,
            "tools": self.tools,
            "view": self.view,
        }
        return {key: value for key, value in document.items() if value is not None}

    def compared_engine(self) -> str | None:
        """The engine the Diff view renders beside this one's, if it compares engines."""
        if self.compare_engines is True:
            return counterpart(self.engine)
        return self.compare_engines or None

    def pinned(self, now: datetime | None = None) -> PlaygroundState:
        """This state with a clock: its own `now`, else `now` (default: the current time).

        A share pins the moment it was made, so its link renders the same prompt forever.
        """
        if self.now is not None:
            return self
        return replace(self, now=(now or datetime.now()).isoformat())

    def render_request(
        self, template: str | None = None, engine: str | None = None
    ) -> RenderRequest:
        """The render this state asks for; `template` and `engine` replace its own (the
        compare template, the other engine)."""
        return RenderRequest(
            **{name: getattr(self, name) for name in _RENDER_FIELDS},
            template=self.template if template is None else template,
            # Validated by `from_json`, so it parses; without one, the time of this render.
            now=datetime.fromisoformat(self.now) if self.now else datetime.now(),
            engine=engine or self.engine,
        )
