"""How TensorRT Edge-LLM's OpenAI server (`tensorrt-edgellm-serve`, experimental/server at
83f5f76 of guswns531/TensorRT-Edge-LLM) reads the model's answer into a message.

The server is started with `--tool-call-parser` (auto, generic, hermes, qwen3_xml,
nemotron, openai: every one the same generic parser at this commit) and
`--reasoning-parser` (auto, none, qwen3, deepseek_r1, nemotron: one `<think>` parser;
muse_glimmer), both `auto` by default, which picks by the model (`reasoning`). For a
request (`OpenAIServingChat.prepare_request`), the reasoning parser runs only when the
request sets enable_thinking (Muse-Glimmer's always runs); tool calls are read only when
the request offers tools and tool_choice is not "none". `parse_assistant_output` reads the
text (`parse`); the response's message (`create_chat_completion`) has the content with
`<|im_end|>` removed (null when it is empty beside tool calls), `reasoning_content`, and
`tool_calls` with ids `call_` + 24 hex digits (random: a stable stand-in here) and the
arguments as JSON text; the response is written without its null fields.

Edge-LLM's parsers import nothing of vLLM's (only Python's standard library): the vllm
engine's parsers, which drop text between calls and refuse what they cannot read, are
not reused.
"""

from __future__ import annotations

from app.render.answer import (
    ParsedAnswer,
    ParserOption,
    ReadContext,
    ToolCall,
    stable_digest,
)
from app.render.engines.edge_llm.answers.calls import Call, ServerFailure, tools_of
from app.render.engines.edge_llm.answers.notes import IM_END, Setting, notes
from app.render.engines.edge_llm.answers.parse import parse
from app.render.engines.edge_llm.answers.reasoning import (
    PARSERS,
    REASONING_CHOICES,
    TOOL_CHOICES,
    auto_reasoning,
    auto_tool,
)
from app.render.engines.edge_llm.server import check_request, check_tools

OPTIONS = (
    ParserOption(
        "tool_call_parser",
        "--tool-call-parser",
        TOOL_CHOICES,
        "auto",
        "Edge-LLM's default; at this commit every name, auto's pick included, is the same "
        "generic parser",
    ),
    ParserOption(
        "reasoning_parser",
        "--reasoning-parser",
        REASONING_CHOICES,
        "auto",
        "Edge-LLM's default: it picks by the model (qwen3, deepseek, nemotron: <think>; "
        "otherwise none) and runs it only for requests with enable_thinking",
    ),
)


def call_id(index: int, name: str) -> str:
    """A stand-in for the random id Edge-LLM gives a call (`call_` and 24 hex digits of a
    uuid4): the same shape, the same for the same call, so pages and shares reproduce."""
    return "call_" + stable_digest(index, name)[:24]


def read_answer(completion: str, context: ReadContext) -> ParsedAnswer:
    """The message Edge-LLM's server returns for `completion` (non-streaming), with the
    context's parser flags; raises the server's refusal (`TemplateProblem`) for a
    request it refuses."""
    request = context.request
    check_request(request)
    mode, forced = check_tools(request)
    names = context.answer.model_names
    tool_choice = context.options["tool_call_parser"]
    reasoning_choice = context.options["reasoning_parser"]
    configured = auto_reasoning(names) if reasoning_choice == "auto" else reasoning_choice
    parser = PARSERS[configured]
    thinking = request.kwargs.get("enable_thinking") is True
    applied = parser if parser is not None and (thinking or parser.always) else None
    no_tools = None
    if not request.tools:
        no_tools = "The request offers no tools"
    elif mode == "none":
        no_tools = 'The request\'s tool_choice is "none"'
    tools = tools_of(request.tools or [], forced) if no_tools is None else None
    label = [auto_tool(names) if tool_choice == "auto" else tool_choice] if tools else []
    label += [configured] if applied is not None else []
    parser_label = " + ".join(label) or "none"
    try:
        parsed = parse(completion, tools, applied)
    except ServerFailure as failure:
        return ParsedAnswer(parser=parser_label, error=_failure(failure))
    setting = Setting(reasoning_choice, configured, parser, thinking, no_tools, forced, names)
    calls = tuple(_tool_call(index, call) for index, call in enumerate(parsed.calls))
    text = parsed.content.replace(IM_END, "")
    return ParsedAnswer(
        parser=parser_label,
        content=(text or None) if calls else text,
        reasoning_content=parsed.reasoning or None,
        tool_calls=calls,
        notes=tuple(notes(completion, parsed, setting)),
        omits_null=True,
    )


def _tool_call(index: int, call: Call) -> ToolCall:
    return ToolCall(
        call.name, call.arguments, call.id if call.id is not None else call_id(index, call.name)
    )


def _failure(failure: ServerFailure) -> str:
    """What the server answers when its parser raises."""
    if failure.client_error:
        status = "HTTP 400 (invalid_request_error)"
    else:
        status = "an engine error (EngineError, HTTP 500)"
    return (
        f"{status}: {failure} (its parser raised {failure.kind} reading the completion, "
        "which the server does not catch)"
    )
