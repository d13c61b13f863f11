"""The sandbox: render workers that run untrusted templates under time, memory and output limits.

The web process never compiles or renders a user template itself: every render goes to
a `SandboxPool` worker (see `app.pool` for the limits every worker runs under).
"""

from __future__ import annotations

from collections.abc import Callable

from app.pool import WorkerPool
from app.render.engines.llamacpp.render import render_llamacpp
from app.render.engines.transformers.chat import Rendered, RenderRequest, render_chat
from app.render.environment import shared_environment
from app.render.limits import RenderLimits


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

    def render(self, request: RenderRequest) -> Rendered:
        """Render in a worker; raises `TemplateProblem` for anything that goes wrong."""
        return self.run(render_in_worker, request, self.limits)


def warm_up() -> None:
    """Build the shared Jinja environment once per worker, before its memory cap."""
    shared_environment()


def render_in_worker(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """A render with the engine the request names (worker side)."""
    if request.engine == "llama.cpp":
        rendered = render_llamacpp(
            request,
            add_bos_token=request.add_bos_token,
            add_eos_token=request.add_eos_token,
            limits=limits,
        )
        return Rendered(rendered.prompt, [], rendered.rewrites)
    return render_chat(request, limits)
