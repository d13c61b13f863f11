"""Command lines that run a model with the template shown in the playground.

Each engine writes its own (`Engine.command_lines`, in `command_rank` order); this module
puts them together with those of runtimes the playground has no engine for (mistral.rs),
and learns in a sandbox worker what they need to know of the template
(`Engine.command_facts`). Every entry is `{"engine", "form", "command", "files"}`, where
`files` maps the file names the command reads (in the current directory) to their
contents; the quoting rules are `app.render.command_line`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.problems import TemplateProblem
from app.render.command_line import (
    DEFAULT_SERVER_URL,
    EXAMPLE_MESSAGES,
    TEMPLATE_FILE,
    CommandContext,
    CommandLine,
    join,
)
from app.render.core import RenderRequest, render_with
from app.render.engines import ENGINES, REFERENCE_ENGINE, get_engine
from app.render.limits import RenderLimits, check_template_size


def _mistral_rs(context: CommandContext) -> list[CommandLine]:
    """mistral.rs's server (its `docs/CHAT_TOK.md`): `--jinja-explicit` names a Jinja file
    that replaces the model's template (its older `--chat-template` wants a JSON file)."""
    words = ["mistralrs", "serve", "--jinja-explicit", TEMPLATE_FILE, "-m", context.hf_id]
    return [CommandLine("mistral.rs", "serve", join(words), {TEMPLATE_FILE: context.template})]


#: Runtimes without an engine, with the rank their command lines take among the engines'.
OTHER_RUNTIMES: list[tuple[int, Callable[[CommandContext], list[CommandLine]]]] = [
    (30, _mistral_rs),
]


def _writers() -> list[Callable[[CommandContext], list[CommandLine]]]:
    """Every engine's and runtime's command-line writer, in the order the page lists them."""
    ranked = [(engine.command_rank, engine.command_lines) for engine in ENGINES.values()]
    return [write for _, write in sorted([*ranked, *OTHER_RUNTIMES], key=lambda pair: pair[0])]


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
    **facts: Any,
) -> list[CommandLine]:
    """Every command that runs a model with `template`, `kwargs` and the conversation.

    `model` is a GGUF file (for llama.cpp and gguf-py) or a Hugging Face id (for vLLM and
    transformers); a placeholder stands in for the kind not given. `facts` are what
    `template_facts` learnt (the content format vLLM is told, the name of a llama.cpp
    built-in format that renders like the template, the parsers that fit it).
    `special_tokens` are the BOS/EOS texts TGI's tokenizer_config.json carries; `parsers`
    the parser options chosen per engine (the Response view's), which their flags carry.
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
        facts={"content_format": "string", "builtin": None, **facts},
        parsers=parsers or {},
    )
    return [line for write in _writers() for line in write(context)]


def first_command(template: str, model: str | None) -> str:
    """The first command line the Command view lists, before it asks for the rest."""
    write = _writers()[0]
    return write(CommandContext.for_model(model, template=template, kwargs={}))[0].command


def without_commands() -> list[str]:
    """Why the engines without command lines have none, as the page says it."""
    return [engine.no_command for engine in ENGINES.values() if engine.no_command]


def template_facts(
    template: str, kwargs: dict, special_tokens: dict[str, str], limits: RenderLimits
) -> dict[str, Any]:
    """What the command lines depend on, learnt by rendering within `limits` (runs in a
    sandbox worker): every engine's `command_facts`."""
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
        facts.update(engine.command_facts(template, special_tokens, render))
    return facts
