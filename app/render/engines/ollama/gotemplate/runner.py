"""A long-lived Go process that renders Ollama's Go templates, under the sandbox's limits.

Ollama renders a model's TEMPLATE with Go's text/template; so does this engine, in a small
program of our own (`main.go` and its files beside this module, standard library only),
built by the set-up (`./playground`) and the Docker image as `ollama-gotemplate` here. Each
sandbox worker keeps one child and talks to it in JSON lines, as the transformers.js
engine does with Node (`NodeRenderer`, whose watch this reuses):

- time: the child's CPU time is watched while it works, with a wall-clock deadline; past
  either it is killed and the render answers `cpu_seconds`;
- memory: the child's address space is capped at what the Go runtime reserves at start
  plus the render's memory allowance; a child that runs out dies and the render answers
  `memory`;
- output and nesting: the child stops a template past `output_chars`, and text/template
  stops one nested deeper than its own limit (100,000 calls), answering `recursion`.

A killed or dead child is replaced at the next render.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.problems import TemplateProblem
from app.render.engines.transformersjs.node import NodeRenderer, limit_child
from app.render.limits import DEFAULT_LIMITS, RenderLimits

#: The built worker (a build product: `./playground` and the Dockerfile build it).
BINARY = Path(__file__).with_name("ollama-gotemplate")
#: Address space the Go runtime reserves at start (its heap arenas, about 700 MB of
#: which little is used); the render's memory allowance comes on top.
GO_BASE_ADDRESS_SPACE = 1024 * 1024 * 1024


class GoUnavailable(RuntimeError):
    """The Go worker is not built where the engine looks for it."""


class GoRenderer(NodeRenderer):
    """One `ollama-gotemplate` child under `limits`, started on first use."""

    def render_go(self, template: str, data: dict[str, Any]) -> str:
        """The prompt for `data` (messages, tools, think, today), or a `TemplateProblem`."""
        request = {"op": "render", "template": template, "max_chars": self.limits.output_chars}
        request.update(data)
        return str(self._ask(request)["prompt"])

    def inspect(self, template: str) -> dict[str, Any]:
        """The template's variables and tool-call tag, or a `TemplateProblem` (its parse error)."""
        return self._ask({"op": "inspect", "template": template})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """One exchange with the child; its error answer raised as a `TemplateProblem`."""
        # ASCII JSON: text that is not valid Unicode (a lone surrogate) crosses as an escape.
        answer = self._exchange(json.dumps(request).encode("ascii") + b"\n")
        if "error" in answer:
            error = answer["error"]
            raise TemplateProblem(
                error["type"], error["message"], error.get("line"), error.get("limit")
            )
        return answer

    def _start(self) -> subprocess.Popen[bytes]:
        """A new child with its own limits (the built binary, or `GoUnavailable`)."""
        if not BINARY.is_file():
            raise GoUnavailable(
                "The Ollama engine's Go worker is not built: ./playground builds it with "
                "Debian's golang-go (go build in app/render/engines/ollama/gotemplate)."
            )
        address_space = GO_BASE_ADDRESS_SPACE + self.limits.memory_bytes
        return subprocess.Popen(
            [str(BINARY)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            # One OS thread for Go code: the child's CPU time is one render's.
            env={"GOMAXPROCS": "1", "GOTRACEBACK": "none", "TZ": "UTC"},
            preexec_fn=lambda: limit_child(address_space),
        )

    PROGRAM = "Go"

    def _death(self, child: subprocess.Popen[bytes]) -> Exception:
        """What a child that closed its output died of: the limit it ran into."""
        return self._limit_of(child.wait(timeout=5))


def go_renderer(limits: RenderLimits) -> GoRenderer:
    """This process's Go renderer for `limits`."""
    return GoRenderer.of(limits)


def render_go(template: str, data: dict[str, Any], limits: RenderLimits) -> str:
    """What Ollama's template package writes for `template` and `data`: `messages` and
    `tools` as Ollama's api.Message and api.Tool dicts, `think` (None, a bool or a level)
    and `today` (an ISO date for currentDate, None for the clock)."""
    return go_renderer(limits).render_go(template, data)


@lru_cache(maxsize=64)
def _inspect(
    template: str, limits: RenderLimits
) -> tuple[frozenset[str], str | None, tuple[str, str]]:
    """The template's variables, tool-call tag and thinking tags, asked once per template."""
    answer = go_renderer(limits).inspect(template)
    opening, closing = answer["thinking"]
    return frozenset(answer["vars"]), answer["tag"], (opening, closing)


def template_vars(template: str, limits: RenderLimits = DEFAULT_LIMITS) -> set[str]:
    """The names, lower-cased, of every field and variable the template mentions (Ollama's
    Template.Vars: `tools`, `messages`, `response`, ...); raises `TemplateProblem`."""
    return set(_inspect(template, limits)[0])


def tool_call_tag(template: str, limits: RenderLimits = DEFAULT_LIMITS) -> str | None:
    """The text Ollama's tools parser waits for before a tool call ("{": any JSON object),
    None when the template does not mention .Tools (Ollama says the model has no tools)."""
    names, tag, _ = _inspect(template, limits)
    return tag if "tools" in names else None


def thinking_tags(template: str, limits: RenderLimits = DEFAULT_LIMITS) -> tuple[str, str] | None:
    """The tags Ollama infers around the template's thinking (the first and last text
    around a `.Thinking` in a range over `.Messages`), None unless it finds both: a
    template with both makes the model thinking-capable."""
    opening, closing = _inspect(template, limits)[2]
    return (opening, closing) if opening and closing else None


def today(now: datetime | None) -> str | None:
    """The date `currentDate` writes for a pinned clock, None for the real one."""
    return None if now is None else now.date().isoformat()
