"""What the engine adds to a Jinja template's render for `ollama run hf.co/USER/REPO`:
the Hub's TEMPLATE and params, the way Ollama takes with them, and the prompt that way
sends (the render answer's `ollama.hub`, and sentences for the page)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.problems import TemplateProblem
from app.render.engines.ollama.choice import GO_TEMPLATE
from app.render.engines.ollama.engine_facts import family
from app.render.engines.ollama.hub.mapper import hub_mapping
from app.render.engines.ollama.hub.route import RUN, hub_route
from app.render.engines.transformersjs.node import NodeUnavailable
from app.render.limits import RenderLimits
from app.render.render_request import RenderRequest

#: The prompt of a path: `(path, go_template)` -> the text Ollama sends that way.
PromptOf = Callable[[str, str | None], str]


def hub_shown(
    request: RenderRequest, limits: RenderLimits, prompt_of: PromptOf, main_prompt: str
) -> tuple[dict[str, Any], list[str]]:
    """The answer's `hub` object and the sentences saying the route (and its prompt,
    when it is not `main_prompt`, the one the render shows). A limit the
    mapping or its render hits is the render's; Node missing or a template the package
    or the route refuses is said in the object's `error` and a sentence."""
    tokens = request.special_tokens
    try:
        mapping = hub_mapping(
            request.template, tokens.get("bos_token"), tokens.get("eos_token"), limits
        )
    except NodeUnavailable as error:
        return {"error": str(error)}, [f"{RUN} cannot be shown: {error}"]
    except TemplateProblem as problem:
        if problem.limit is not None:
            raise
        return {"error": problem.message}, [
            f"{RUN}: the Hub refuses this chat template: {problem.message}"
        ]
    route = hub_route(request.template, mapping, family(request))
    shown: dict[str, Any] = {
        "model": mapping.model if mapping else None,
        "template": mapping.go_template if mapping else None,
        "stop": list(mapping.stop) if mapping else [],
        "params": {key: json.loads(value) for key, value in mapping.params} if mapping else {},
        "path": route.path,
    }
    go_template = mapping.go_template if mapping and route.path == GO_TEMPLATE else None
    try:
        shown["prompt"] = prompt_of(route.path, go_template)
    except TemplateProblem as problem:
        if problem.limit is not None:
            raise
        shown["error"] = problem.message
        return shown, [*route.reasons, f"So {RUN} fails: {problem.message}"]
    if shown["prompt"] == main_prompt:
        return shown, [*route.reasons, f"So {RUN} sends the prompt shown here."]
    other = json.dumps(shown["prompt"], ensure_ascii=False)
    return shown, [
        *route.reasons,
        f"So {RUN} sends another prompt than the one shown here: {other}",
    ]
