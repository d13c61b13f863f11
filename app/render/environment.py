"""The sandboxed Jinja environment that chat templates run in.

It reproduces, point by point, the environment Hugging Face transformers builds in
`transformers.utils.chat_template_utils._cached_compile_jinja_template`: the same
sandbox class and options, the same extensions, filters and globals. A difference
here is a difference in the prompt, so the conformance tests compare every detail
against the real library.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.parser
import jinja2.runtime
import jinja2.utils
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

#: The clock `strftime_now` reads; None means the real current time.
_pinned_now: ContextVar[datetime | None] = ContextVar("pinned_now", default=None)

#: Compiled templates kept per process, keyed by the SHA-256 of their source.
COMPILED_CACHE_SIZE = 128


class GenerationTracker(jinja2.ext.Extension):
    """The `{% generation %}...{% endgeneration %}` tag: records the spans of assistant text.

    Like transformers' AssistantTracker, a span starts at the length of the top-level
    output produced so far, so templates that nest the tag inside a macro or a captured
    block get the same (imprecise) spans as in transformers.
    """

    tags = {"generation"}  # noqa: RUF012 - Jinja reads this class attribute

    def __init__(self, environment: jinja2.Environment) -> None:
        super().__init__(environment)
        self._output_length: list[int] | None = None
        self._spans: list[tuple[int, int]] | None = None
        environment.extend(track_generation=self.track)

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.CallBlock:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_generation_support")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _generation_support(self, caller: jinja2.runtime.Macro) -> str:
        text = caller()
        if self._spans is not None and self._output_length is not None:
            start = self._output_length[0]
            self._spans.append((start, start + len(text)))
        return text

    @contextmanager
    def track(self, output_length: list[int], spans: list[tuple[int, int]]) -> Iterator[None]:
        """Record spans while the caller keeps `output_length[0]` equal to the output so far."""
        self._output_length, self._spans = output_length, spans
        try:
            yield
        finally:
            self._output_length = self._spans = None


def raise_exception(message: str) -> None:
    """Let a template refuse its input, as transformers' `raise_exception` global does."""
    raise TemplateError(message)


def tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """Plain `json.dumps`: unlike Jinja's own filter, no HTML escaping."""
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def strftime_now(format: str) -> str:
    """Today's date as the template asks for it, from the pinned clock when there is one."""
    return (_pinned_now.get() or datetime.now()).strftime(format)


@contextmanager
def pinned_clock(now: datetime | None) -> Iterator[None]:
    """Make `strftime_now` read `now` for the duration of one render."""
    token = _pinned_now.set(now)
    try:
        yield
    finally:
        _pinned_now.reset(token)


class TemplateDict:
    """The `dict` global: a callable that builds dicts without exposing the type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(jinja2.utils.Namespace):
    """`namespace()` refusing underscore-prefixed names, which could reach CPython internals."""

    # `self` travels in *args (as in Jinja's Namespace) so that `namespace(self=...)` works.
    def __init__(*args: Any, **kwargs: Any) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                "Chat templates cannot store underscore-prefixed attributes on a namespace, "
                f"but got {name!r}. Please rename the attribute."
            )


def build_environment() -> ImmutableSandboxedEnvironment:
    """A fresh environment with transformers' options, filters and globals."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTracker, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


@lru_cache(maxsize=1)
def shared_environment() -> ImmutableSandboxedEnvironment:
    """One environment per process; built on first use, never at import."""
    return build_environment()


def template_hash(source: str) -> str:
    """The content hash that identifies a template in caches and share links."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def compile_cache(
    environment: Callable[[], jinja2.Environment], size: int = COMPILED_CACHE_SIZE
) -> Callable[[str], jinja2.Template]:
    """A compile function for one environment, caching per process by content hash."""

    @lru_cache(maxsize=size)
    def by_hash(digest: str, source: str) -> jinja2.Template:
        return environment().from_string(source)

    def compile_source(source: str) -> jinja2.Template:
        return by_hash(template_hash(source), source)

    return compile_source


#: Compile once per process; the cache is keyed by content hash, not object identity.
compile_template = compile_cache(shared_environment)
