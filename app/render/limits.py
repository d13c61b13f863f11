"""Per-render limits: untrusted templates get bounded time, memory and output."""

from __future__ import annotations

from dataclasses import dataclass

from app.problems import limit_exceeded


@dataclass(frozen=True)
class RenderLimits:
    """Bounds on one render; every field has a `PLAYGROUND_*` setting of the same meaning."""

    #: Seconds a render may run in its worker before the worker is killed and replaced.
    cpu_seconds: float = 2.0
    #: Address space a worker may add on top of what it uses at start, in bytes.
    memory_bytes: int = 512 * 1024 * 1024
    #: Characters of rendered output.
    output_chars: int = 2_000_000
    #: Size of the template source, in bytes of UTF-8.
    template_bytes: int = 256 * 1024


#: Limits for callers that give none (tests, benches); the app passes its settings.
DEFAULT_LIMITS = RenderLimits()


def check_template_size(template: str, limits: RenderLimits) -> None:
    """Refuse a template over `limits.template_bytes` before anything compiles it."""
    size = len(template.encode("utf-8", "surrogatepass"))
    if size > limits.template_bytes:
        raise limit_exceeded(
            "template_bytes",
            f"The template is {size:,} bytes; the limit is {limits.template_bytes:,}.",
        )
