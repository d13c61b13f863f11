"""The sandbox: render workers that run untrusted templates under time, memory and output limits.

The web process never compiles or renders a user template itself: every render goes to
a `SandboxPool` worker (see `app.pool` for the limits every worker runs under). Each
task gets the pool's `RenderLimits` as its last argument, so the output and template
limits in force bound analysis probes and command checks as they bound renders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from app.pool import WorkerPool
from app.render import engines
from app.render.answer import AnswerRequest, Reading
from app.render.core import Rendered, RenderRequest, read_with
from app.render.environment import shared_environment
from app.render.limits import RenderLimits

T = TypeVar("T")


class SandboxPool(WorkerPool):
    """Render workers; size it to the number of request threads of the web process, so a
    request never waits for a worker that a slow template holds."""

    def __init__(
        self,
        limits: RenderLimits,
        workers: int,
        on_cpu: Callable[[float], None] | None = None,
    ) -> None:
        super().__init__(
            cpu_seconds=limits.cpu_seconds,
            memory_bytes=limits.memory_bytes,
            workers=workers,
            noun="The template",
            warm_up="app.render.pool:warm_up",
            preload=("app.render.pool",),
            on_cpu=on_cpu,
        )
        self.limits = limits

    def run(self, function: Callable[..., T], *args: Any, ahead: int = 0) -> T:
        """Run `function(*args, limits)` in a worker: every task gets the limits in force."""
        return super().run(function, *args, self.limits, ahead=ahead)

    def render(self, request: RenderRequest) -> Rendered:
        """Render in a worker, as the engine's callers send the request; raises
        `TemplateProblem` for anything that goes wrong."""
        return self.run(render_in_worker, request)

    def render_exactly(self, request: RenderRequest) -> Rendered:
        """Render in a worker with the tool-call arguments exactly as given."""
        return self.run(render_exactly_in_worker, request)


def warm_up() -> None:
    """Build the shared Jinja environment once per worker, before its memory cap."""
    shared_environment()


def render_in_worker(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """A render with the engine the request names (worker side)."""
    return engines.render(request, limits)


def render_exactly_in_worker(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """A render of the request exactly as given (worker side)."""
    return engines.render_exactly(request, limits)


def read_in_worker(answer: AnswerRequest, limits: RenderLimits) -> Reading:
    """The parser options and the reading of a completion by the engine its request names
    (worker side: a completion is untrusted text, parsed under the same limits)."""
    return read_with(engines.get_engine(answer.render.engine), answer, limits)
