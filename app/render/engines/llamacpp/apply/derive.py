"""The last step of common_chat_templates_apply_jinja: who derives the chat params.

`templates_apply` prepares the request into `autoparser::generation_params` (`ParseInputs`); then
a specialized handler (`families`), or the differential autoparser (`autoparser`:
`analyzer` + `generator`), derives the format, the generation prompt and the parser.
"""

from __future__ import annotations

from app.problems import TemplateProblem, problem_from_exception
from app.render.core import RenderRequest
from app.render.engines.llamacpp.apply.autoparser_cache import analysis_for
from app.render.engines.llamacpp.apply.types import ChatParams, ChatTemplate, ParseInputs
from app.render.engines.llamacpp.autoparser.generator import generate_params
from app.render.engines.llamacpp.families import family_of
from app.render.engines.llamacpp.templates_init import patched_source, template_capabilities
from app.render.limits import RenderLimits

#: How llama.cpp words any failure of the autoparser (the error's text follows).
AUTOPARSER_FAILED = (
    "Unable to generate parser for this template. Automatic parser generation failed: "
)


class HandlerMissing(Exception):
    """llama.cpp has a specialized handler for the template that is not reproduced here."""


class HandlerFailed(Exception):
    """A specialized handler failed (its render of the template, mostly): llama.cpp lets
    that error through as it is, where it wraps the autoparser's in a sentence."""

    def __init__(self, handler: str, error: Exception) -> None:
        # A problem's own message, without the "Type: ... (line N)" its str() adds.
        super().__init__(error.message if isinstance(error, TemplateProblem) else str(error))
        self.handler, self.error = handler, error

    def notes(self) -> tuple[str, ...]:
        """What the page says about it."""
        line = problem_from_exception(self.error).line
        where = f" (line {line} of the template)" if line else ""
        return (
            f"llama.cpp's {self.handler} handler renders the prompt itself, and the "
            f"template failed{where}: llama-server refuses the request with the template's "
            'error, which it prefixes with where the template failed ("While executing '
            '... at line ..., column ... in source").',
        )


def chat_template(request: RenderRequest, limits: RenderLimits) -> ChatTemplate:
    """common_chat_template: the patched source, its tokens and its capabilities."""
    source = patched_source(request.template)
    return ChatTemplate(
        source=source,
        bos=request.special_tokens.get("bos_token", ""),
        eos=request.special_tokens.get("eos_token", ""),
        caps=template_capabilities(source, limits),
        limits=limits,
        now=request.now,
    )


def derive_params(inputs: ParseInputs) -> tuple[ChatParams, str]:
    """The params and who derived them (a family's key, or "autoparser")."""
    family = family_of(inputs.source)
    if family is None:
        return generate_params(inputs, analysis_for(inputs.template)), "autoparser"
    if family.params is None:
        raise HandlerMissing(family.name)
    try:
        return family.params(inputs.source, inputs), family.key
    except TemplateProblem as problem:
        if problem.limit:
            raise  # the playground's own limit, not llama.cpp's answer
        raise HandlerFailed(family.key, problem) from problem
    except Exception as error:
        raise HandlerFailed(family.key, error) from error
