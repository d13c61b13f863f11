"""The runner of Ollama's renderer tests written as statements (record_renders.py):
cohere_test.go's Render calls and their checks."""

from __future__ import annotations

from typing import Any

from oracles.ollama.case import Case, NotBuilt

#: The test's renderer type -> the engine's renderer name.
RENDERER_TYPES = {"CohereRenderer": "cohere"}


def statements(case: Case) -> tuple[Any, Any]:
    """A Render call and its checks: the whole prompt, its end, the parts it holds."""
    from app.render.engines.ollama.renderers import RENDERERS

    fields = case.fields
    name = RENDERER_TYPES.get(fields["renderer"] or "")
    if name not in RENDERERS:
        raise NotBuilt(f"the renderer {fields['renderer']!r} is not reproduced yet")
    prompt = RENDERERS[name](fields["messages"] or [], fields["tools"], fields["think"])
    checks = fields["checks"]
    got: dict[str, Any] = {}
    if "equal" in checks:
        got["equal"] = prompt
    if "suffix" in checks:
        got["suffix"] = prompt[len(prompt) - len(checks["suffix"]) :]
    if "contains" in checks:
        # A part the prompt holds is itself; one it does not is shown as the prompt.
        got["contains"] = [part if part in prompt else prompt for part in checks["contains"]]
    return got, checks
