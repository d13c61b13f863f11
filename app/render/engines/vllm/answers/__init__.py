"""vLLM 0.33.0's answer parsers, by the names its server flags take, and the chat API's
way of running them on a completion.

`vllm serve --enable-auto-tool-choice --tool-call-parser T --reasoning-parser R` answers a
non-streaming chat request by composing the two parsers (`ParserManager.get_parser`, a
`DelegatingParser`): the reasoning parser splits off the reasoning, then the tool parser
reads calls out of what is left, and `assemble_chat_message_fields` keeps the calls only
when the request's tool_choice lets it. A request without tools has tool_choice "none":
the tool parser is then skipped (legacy parsers) or run only to drop its markup (parsers
on vLLM's parser engine, when both parsers are). Each parser is a module `tool_<name>` or
`reasoning_<name>` of this package; `suggest` picks the pair that fits a template.
"""

from __future__ import annotations

import importlib
import inspect
from functools import cache
from types import ModuleType
from typing import Any

from app.render.answer import AnswerRequest, ParsedAnswer, ParserOption, ToolCall
from app.render.core import RenderRequest
from app.render.engines.vllm.answers.suggest import suggest
from app.render.engines.vllm.render import render
from app.render.limits import RenderLimits, check_template_size

#: The modules by vLLM's registered name (`-` spelled `_` in module names); a module that
#: is not there is simply left out of the menus.
TOOL_MODULES = (
    "deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "gemma4", "glm45",
    "granite", "hermes", "kimi_k2", "kimi_k3", "llama3_json", "llama4_pythonic",
    "minimax_m2", "mistral", "openai", "pythonic", "qwen3_coder", "qwen3_xml",
)  # fmt: skip
REASONING_MODULES = (
    "deepseek_r1", "deepseek_v3", "deepseek_v4", "gemma4", "glm45", "granite", "kimi_k3",
    "openai_gptoss", "qwen3",
)  # fmt: skip

#: Parsers built on vLLM 0.33.0's parser engine (`engine_based_streaming`): with both of a
#: pair on it, a skipped or empty tool reading still removes the tool markup.
ENGINE_BASED = frozenset(
    {"tool:deepseek_v32", "tool:deepseek_v4", "tool:gemma4", "tool:glm45", "tool:granite",
     "tool:kimi_k2", "tool:minimax_m2", "tool:mistral", "tool:qwen3_coder", "tool:qwen3_xml",
     "reasoning:deepseek_v4", "reasoning:gemma4", "reasoning:glm45", "reasoning:qwen3"}
)  # fmt: skip
#: Tool parsers whose server composition (vLLM's `KimiK3Parser`) takes the content from
#: the tool parser as an engine-based pair does, whatever the reasoning parser.
CONTENT_FROM_TOOL_PARSER = frozenset({"kimi_k3"})


def _load(prefix: str, names: tuple[str, ...]) -> dict[str, ModuleType]:
    found = {}
    for name in names:
        try:
            module = importlib.import_module(f"{__name__}.{prefix}_{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{prefix}_{name}":
                raise
            continue
        found[module.NAME] = module
    return found


@cache
def tool_parsers() -> dict[str, ModuleType]:
    """Every tool parser reproduced here, by vLLM's name."""
    return _load("tool", TOOL_MODULES)


@cache
def reasoning_parsers() -> dict[str, ModuleType]:
    """Every reasoning parser reproduced here, by vLLM's name."""
    return _load("reasoning", REASONING_MODULES)


def parser_options(request: RenderRequest) -> tuple[ParserOption, ...]:
    """`--tool-call-parser` and `--reasoning-parser`, defaulting to the pair that fits
    the request's template."""
    tools, reasonings = tool_parsers(), reasoning_parsers()
    pick = suggest(request.template, set(tools), set(reasonings))
    return (
        ParserOption(
            "tool_call_parser", "--tool-call-parser", ("none", *sorted(tools)), pick.tool,
            pick.tool_why,
        ),
        ParserOption(
            "reasoning_parser", "--reasoning-parser", ("none", *sorted(reasonings)),
            pick.reasoning, pick.reasoning_why,
        ),
    )  # fmt: skip


def _call(function: Any, *args: Any, **optional: Any) -> Any:
    """`function(*args, ...)` with those of `optional` its signature takes."""
    accepted = inspect.signature(function).parameters
    return function(*args, **{k: v for k, v in optional.items() if k in accepted})


def _prompt(answer: AnswerRequest, limits: RenderLimits) -> str | None:
    """The prompt vLLM renders for the request (None when it does not render)."""
    try:
        check_template_size(answer.render.template, limits)
        return render(answer.render, limits).prompt
    except Exception:  # any failure, as `render_with` names it: vLLM renders no prompt
        return None


def _label(tool: str, reasoning: str) -> str:
    named = [name for name in (tool, reasoning) if name != "none"]
    return " + ".join(named) or "none"


def _harmony(answer: AnswerRequest, tool: str, reasoning: str) -> ParsedAnswer | None:
    """gpt-oss: vLLM reads Harmony with one parser for both flags (`tool_openai`)."""
    modules = [tool_parsers().get(tool), reasoning_parsers().get(reasoning)]
    if not any(getattr(module, "HARMONY", False) for module in modules):
        return None
    openai = tool_parsers().get("openai")
    if openai is None:
        return None
    reading = openai.read_pair(
        answer.completion, reasoning_parser=reasoning != "none", tool_parser=tool != "none"
    )
    calls = tuple(reading.tool_calls) if tool != "none" and answer.render.tools else ()
    return ParsedAnswer(
        parser=_label(tool, reasoning),
        content=reading.content,
        reasoning_content=reading.reasoning,
        tool_calls=calls,
        notes=tuple(reading.notes),
    )


def _skipped_note(module: ModuleType, name: str, content: str, tools: Any) -> tuple[str, ...]:
    """A sentence when a skipped tool parser would have found calls in `content`."""
    found = _call(module.extract, content, tools)
    if not found.tools_called:
        return ()
    return (
        f'The request declares no tools, so its tool_choice is "none" and vLLM does not '
        f"return the {len(found.tool_calls)} tool call(s) the {name} parser reads here.",
    )


def read_answer(answer: AnswerRequest, limits: RenderLimits) -> ParsedAnswer:
    """The assistant message vLLM's chat API returns for `answer.completion` with the
    chosen parsers (a non-streaming request with the render request's tools and kwargs)."""
    options = parser_options(answer.render)
    tool = answer.option(options, "tool_call_parser")
    reasoning = answer.option(options, "reasoning_parser")
    if (harmony := _harmony(answer, tool, reasoning)) is not None:
        return harmony
    kwargs = dict(answer.render.kwargs)
    tools = answer.render.tools or None
    special = tuple(answer.render.special_tokens.values())
    notes: list[str] = []

    said: str | None = None
    content: str | None = answer.completion
    if reasoning != "none":
        extract = reasoning_parsers()[reasoning].extract
        # vLLM hands the prompt to the parsers that ask whether it closed the thinking.
        prompt = (
            _prompt(answer, limits) if "prompt" in inspect.signature(extract).parameters else None
        )
        split = _call(
            extract, answer.completion, kwargs, special_tokens=special, prompt=prompt,
            tools=tools, tool_choice_none=tools is None,
        )  # fmt: skip
        said, content = split.reasoning, split.content
        notes += split.notes

    calls: tuple[ToolCall, ...] = ()
    if tool != "none":
        module = tool_parsers()[tool]
        engine = tool in CONTENT_FROM_TOOL_PARSER or (
            f"tool:{tool}" in ENGINE_BASED
            and (reasoning == "none" or f"reasoning:{reasoning}" in ENGINE_BASED)
        )
        optional = {
            "kwargs": kwargs,
            "with_reasoning_parser": reasoning != "none",
            "special_tokens": special,
        }
        if tools is None:  # tool_choice "none"
            if engine:  # the calls are read, then dropped: only their markup goes
                content = _call(module.extract, content or "", tools, **optional).content
            elif content:
                notes += _skipped_note(module, tool, content, tools)
        else:
            found = _call(module.extract, content if content is not None else "", tools, **optional)
            notes += found.notes
            if found.tools_called:
                calls = tuple(found.tool_calls)
                content = found.content
                if content is not None and not content.strip():
                    content = None
            elif engine:
                content = found.content or None
    return ParsedAnswer(
        parser=_label(tool, reasoning),
        content=content,
        reasoning_content=said,
        tool_calls=calls,
        notes=tuple(notes),
    )
