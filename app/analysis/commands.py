"""Command lines that run a model with the template shown in the playground.

Each engine writes its own (its `commands`, a `CommandWriter`), and so does each runtime the
playground has no engine for, in the order `app.render.engines.command_writers` gives;
this module puts them together and learns in a sandbox worker what they need to know of
the template (`CommandWriter.facts`). Every entry is `{"engine", "form", "command",
"files"}`, where `files` maps the file names the command reads (in the current directory)
to their contents; the quoting rules are `app.render.command_line`'s.
"""

from __future__ import annotations

from typing import Any

from app.problems import TemplateProblem
from app.render.command_line import (
    DEFAULT_SERVER_URL,
    EXAMPLE_MESSAGES,
    CommandContext,
    CommandLine,
)
from app.render.core import ModelFiles, RenderRequest, render_with
from app.render.engines import ENGINES, REFERENCE_ENGINE, command_writers, get_engine
from app.render.limits import RenderLimits, check_template_size


def build_command_lines(
    template: str,
    kwargs: dict,
    model: str | None = None,
    *,
    messages: list | None = None,
    tools: list | None = None,
    add_generation_prompt: bool = True,
    server_url: str = DEFAULT_SERVER_URL,
    special_tokens: dict[str, str] | None = None,
    parsers: dict[str, dict[str, str]] | None = None,
    engine: str | None = None,
    **facts: Any,
) -> list[CommandLine]:
    """Every command that runs a model with `template`, `kwargs` and the conversation.

    `model` is a GGUF file or a Hugging Face id, whichever the engine's program loads; a
    placeholder stands in for the kind not given. `facts` are what `template_facts`
    learnt (each engine's own). `special_tokens` are the BOS/EOS texts a program may be
    given beside the template; `parsers` the parser options chosen per engine (the
    Response view's), which their flags carry; `engine` the engine chosen, whose
    commands come first.
    """
    context = CommandContext.for_model(
        model,
        template=template,
        kwargs=kwargs or {},
        messages=EXAMPLE_MESSAGES if messages is None else messages,
        tools=tools,
        add_generation_prompt=add_generation_prompt,
        special_tokens=special_tokens or {},
        server_url=server_url,
        facts=facts,
        parsers=parsers or {},
    )
    return [line for writer in command_writers(engine) for line in writer.lines(context)]


def first_command(template: str, model: str | None) -> CommandLine:
    """The first command line the Command view lists, before it asks for the rest."""
    first = command_writers()[0]
    return first.lines(CommandContext.for_model(model, template=template, kwargs={}))[0]


def without_commands() -> list[str]:
    """Why the engines without command lines have none, as the page says it."""
    helps = [engine.info.help for engine in ENGINES.values()]
    return [said.no_command for said in helps if said.no_command]


def template_facts(
    template: str,
    kwargs: dict,
    special_tokens: dict[str, str],
    model: ModelFiles | None,
    limits: RenderLimits,
) -> dict[str, Any]:
    """What the command lines depend on, learnt by rendering within `limits` (runs in a
    sandbox worker, which passes the limits last): every engine's `CommandWriter.facts`,
    with what the loaded `model` (None: none) changes in them (`CommandWriter.model_facts`)."""
    check_template_size(template, limits)
    reference = get_engine(REFERENCE_ENGINE)

    def render(messages: list[dict], add_generation_prompt: bool) -> str | None:
        request = RenderRequest(
            template=template,
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            special_tokens=special_tokens,
            kwargs=kwargs,
        )
        try:
            return render_with(reference, request, limits).prompt
        except TemplateProblem:
            return None

    facts: dict[str, Any] = {}
    for engine in ENGINES.values():
        if engine.commands is not None:
            learnt = engine.commands.facts(template, special_tokens, render)
            if model is not None:
                learnt |= engine.commands.model_facts(template, learnt, model)
            facts.update(learnt)
    return facts
