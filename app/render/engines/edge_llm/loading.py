"""How Edge-LLM loads a model's chat template: read and parsed by its Inja
(`InjaRenderer::load`), a refusal failing the model's loading. The engine renders only
what loads, its reader and command lines say when a template would not."""

from __future__ import annotations

from functools import lru_cache

from app.problems import LOAD_ERROR, TemplateProblem
from app.render.engines.edge_llm.inja.render import LoadError, Template, load
from app.render.limits import RenderLimits, check_template_size

#: The largest chat_template.jinja Edge-LLM reads (limits::tokenizer::
#: kChatTemplateFileSizeBytes), and what its loader says of a larger one (its path left out).
MAX_TEMPLATE_BYTES = 1024 * 1024
TOO_LARGE = "chat template exceeds size limit: ENGINE_DIR/chat_template.jinja (1 MiB)"


def loaded(source: str, limits: RenderLimits) -> Template:
    """`source` read and parsed as Edge-LLM's `InjaRenderer::load` does; a refusal is the
    `LoadError` problem Edge-LLM's model loading fails with."""
    check_template_size(source, limits)
    return _edge_load(source)


def check_loads(source: str, limits: RenderLimits) -> None:
    """Raise what `loaded` raises for `source`, without keeping the parsed template: the
    reader and the command lines only ask whether it loads, for the same template again
    and again (the outcome for the last few is kept; a problem is made anew each time,
    since a raised exception keeps its traceback)."""
    check_template_size(source, limits)
    refusal = _load_refusal(source)
    if refusal is not None:
        message, line, column = refusal
        raise TemplateProblem(LOAD_ERROR, message, line, column=column)


@lru_cache(maxsize=8)
def _load_refusal(source: str) -> tuple[str, int | None, int | None] | None:
    """(message, line, column) of the problem `_edge_load` raises, or None."""
    try:
        _edge_load(source)
    except TemplateProblem as problem:
        return problem.message, problem.line, problem.column
    return None


def _edge_load(source: str) -> Template:
    """Edge-LLM's own load of `source`, past the playground's size limit."""
    if len(source.encode("utf-8", "surrogatepass")) > MAX_TEMPLATE_BYTES:
        # The playground's own limit is lower unless an operator raised it.
        raise TemplateProblem(LOAD_ERROR, f"Edge-LLM would not load this model: {TOO_LARGE}")
    try:
        return load(source)
    except LoadError as error:
        message = f"Edge-LLM would not load this model: {error}"
        raise TemplateProblem(LOAD_ERROR, message, error.line, column=error.column) from None
