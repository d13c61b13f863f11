"""TensorRT Edge-LLM as it really loads and renders: its OpenAI server, its chat template
code (`experimental/server/` and `cpp/chatTemplate/`, commit 83f5f768 of the public fork)
and its patched Inja 3.5.0.

Edge-LLM renders the provider's `chat_template.jinja` unchanged with a C++ Inja that NVIDIA
extended, and a construct that Inja does not parse fails model loading. So this engine
loads the template first (`inja.load`: a refusal is a `LoadError` problem with Inja's
message, line and column), takes the request as Edge-LLM's OpenAI server
(`tensorrt-edgellm-serve`) does (`server.py`: its refusals, its runtime request), builds
the JSON context `ChatTemplate::apply` hands to Inja (`context.edge_context`: its message
shaping, its fixed keys), and renders with Inja's semantics (`inja.render`), so its errors
are Edge-LLM's errors. The loader, the context and the render are checked against
Edge-LLM's own code, recorded on the 68 shared templates
(`oracles/edge_llm/recorded.json`, made by running it once, outside the
repository: see docs/engines/edge-llm.md); the server's part against its source.
Its server's reading of the model's answer (tool calls, reasoning) is `answers`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from app.problems import TemplateProblem
from app.render.answer import AnswerReader, ParsedAnswer, ParserOption, ReadContext
from app.render.core import Engine, EngineInfo, ModelFiles, Rendered, RenderRequest
from app.render.engines.edge_llm import answers
from app.render.engines.edge_llm import commands as edge_commands
from app.render.engines.edge_llm.context import edge_context
from app.render.engines.edge_llm.inja.render import (
    RenderError,
    render,
)
from app.render.engines.edge_llm.loading import check_loads, loaded
from app.render.limits import RenderLimits

#: What Edge-LLM's loader says of a model folder with `additional_chat_templates/`
#: (chatTemplate.cpp, `ChatTemplate::Impl::load`, before it reads chat_template.jinja).
NAMED_TEMPLATES_REFUSED = (
    "named provider chat templates are unsupported; the model must provide chat_template.jinja"
)


class EdgeLlmReader(AnswerReader):
    """Its server's parsers on a finished completion (`answers`)."""

    def options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        """Its server's `--tool-call-parser` and `--reasoning-parser`, `auto` by default."""
        return answers.OPTIONS

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The message its server returns: tool calls read first, then reasoning. With a
        template Edge-LLM would not load its server never answers: the reading says so
        first (it is still how the parser reads the text)."""
        parsed = answers.read_answer(completion, context)
        try:
            check_loads(context.request.template, context.limits)
        except TemplateProblem as problem:
            said = (
                f"{problem.message.rstrip('.')}, so its server would not start with this "
                "template; with one it loads, its parser reads the completion as shown."
            )
            return replace(parsed, notes=(said, *parsed.notes))
        return parsed


class EdgeLlmEngine(Engine):
    """TensorRT Edge-LLM's chat template: load with its Inja, shape, render."""

    info = EngineInfo(
        id=edge_commands.ENGINE_ID,
        name="TensorRT Edge-LLM",
        #: The public fork's commit whose cpp/chatTemplate/ and vendored Inja this follows.
        version="83f5f76 (Inja 3.5.0 patched)",
        description=(
            "What TensorRT Edge-LLM's OpenAI server (tensorrt-edgellm-serve) renders: its "
            "request checks, its chat template code (cpp/chatTemplate/ at 83f5f76) and its "
            "patched C++ Inja 3.5.0, reproduced in Python: a template Inja cannot parse fails "
            "at load, and renders follow Inja's semantics (a missing variable is an error, "
            "values are JSON, loops over null fail)."
        ),
        checks_at_load=True,
        #: Its server takes OpenAI chat requests: clients send tool-call arguments as JSON text.
        openai_server=True,
    )
    reader = EdgeLlmReader()
    commands = edge_commands.WRITER

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Load the template, shape the request and render, as Edge-LLM does."""
        template = loaded(request.template, limits)
        context, rewrites = edge_context(request)
        # The playground's clock is a wall time without a zone; Edge-LLM's servers run in UTC.
        now = _utc(request.now).timestamp() if request.now else None
        try:
            prompt = render(template, context, limits, now=now)
        except RenderError as error:
            raise TemplateProblem("RenderError", error.message, error.line) from None
        return Rendered(prompt, [], rewrites)

    def model_refusal(self, model: ModelFiles) -> str | None:
        """Edge-LLM loads one default template: its loader and engine builder refuse
        `additional_chat_templates/`, and its export that folder and a `chat_template`
        list with other names than "default". A list beside a `chat_template.json` (which
        the playground's reader keeps only when no named template files are there) never
        comes to it: its export takes that file's template first."""
        if not model.named_templates or model.json_template:
            return None
        return (
            f"Edge-LLM would not load this model: {NAMED_TEMPLATES_REFUSED} (it ships the "
            f"named templates {', '.join(model.named_templates)}: save the one to use as "
            "chat_template.jinja and delete any additional_chat_templates/ folder)"
        )


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=moment.tzinfo or UTC)
