"""Load and render a chat template as TensorRT Edge-LLM's patched Inja does.

Why an interpreter of our own: Edge-LLM renders with a C++ Inja 3.5.0 that NVIDIA
extended; no Python library speaks that dialect (Jinja2 accepts much more and treats a
missing variable as undefined, where Inja fails). `load` fails where Edge-LLM's model
loading fails, with Inja's message; `render` returns Edge-LLM's prompt, or raises the
exception text Edge-LLM's request would fail with.
"""

from __future__ import annotations

from typing import Any

from app.problems import TemplateProblem
from app.render.engines.edge_llm.inja.builtins import StdError
from app.render.engines.edge_llm.inja.evaluate import InjaError
from app.render.engines.edge_llm.inja.jsonvalue import CallbackFailure, JsonError
from app.render.engines.edge_llm.inja.nodes import Template
from app.render.engines.edge_llm.inja.parser import LoadError, parse
from app.render.engines.edge_llm.inja.statements import Renderer
from app.render.limits import RenderLimits

__all__ = ["LoadError", "RenderError", "Template", "load", "render"]


class RenderError(Exception):
    """A render that fails in Edge-LLM: `message` is the exception's `what()` text and
    `line` the template line it concerns (for nlohmann and callback errors, which carry
    no position, the line of the statement being rendered)."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def load(source: str) -> Template:
    """Parse `source` as Edge-LLM's `InjaRenderer::load` does; raises LoadError."""
    return parse(source)


def render(
    template: Template, context: dict[str, Any], limits: RenderLimits, now: float | None = None
) -> str:
    """Render `template` with the JSON `context` (what Edge-LLM's chat template passes to
    Inja); raises RenderError as Edge-LLM's renderer would fail, or the output limit.
    `now` pins the clock `strftime_now()` reads (seconds since the epoch, local time)."""
    renderer = Renderer(template, context, limits.output_chars, now)
    try:
        renderer.run(template.body)
    except InjaError as error:
        line, column = template.location(error.pos)
        raise RenderError(
            f"[inja.exception.render_error] (at {line}:{column}) {error.message}", line
        ) from None
    except (JsonError, CallbackFailure, StdError) as error:
        raise RenderError(str(error), template.location(renderer.pos)[0]) from None
    except TemplateProblem:
        raise
    except RecursionError:
        raise RenderError(
            "The template nests too deeply for this renderer (Edge-LLM would likely crash).",
            template.location(renderer.pos)[0],
        ) from None
    except (OverflowError, MemoryError, ValueError) as error:
        raise RenderError(
            f"The render failed in a way Edge-LLM leaves undefined: {error}",
            template.location(renderer.pos)[0],
        ) from None
    return _as_utf8("".join(renderer.out))


def _as_utf8(text: str) -> str:
    """Inja works on bytes: a loop or slice over a string can split a character. Join the
    pieces back as bytes and replace what is left invalid, as a UTF-8 reader would."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # an unpaired surrogate that came in with the request
        return text.encode("utf-8", "replace").decode("utf-8", "replace")
