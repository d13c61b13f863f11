"""What vLLM 0.33.0's engine-based tool parsers return: the events made into tool calls.

This follows `ParserEngine.extract_tool_calls_from_content` (the path vLLM's chat API
takes after the reasoning parser): the engine starts in content, each call gets a name
(from its header, or failing that from a `"name": "..."` in its arguments), its raw
arguments are made JSON by the format's converter and retyped from the tool schema,
and the content is what came before the first call (text after the calls is dropped
when a call was named), whitespace-trimmed as the format says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from app.render.answer import ToolCall
from app.render.engines.vllm.answers._schema_types import fix_arguments
from app.render.engines.vllm.answers._state_machine import (
    CALL_ARGS,
    CALL_END,
    CALL_NAME,
    CALL_START,
    TEXT,
    Grammar,
    State,
    run,
)
from app.render.engines.vllm.answers.base import (
    FailsInVllm,
    ParserInput,
    ToolExtraction,
    tool_call_id,
)

#: What vLLM looks for in a call's arguments when its header gives no name.
NAME_IN_ARGS = re.compile(r'"name"\s*:\s*"([^"]*)"')


@dataclass
class _Call:
    header: str = ""
    args: list[str] = field(default_factory=list)
    id: str = ""
    #: The name vLLM settled on ("" while it has none).
    name: str = ""
    named: bool = False
    ended: bool = False

    @property
    def raw_args(self) -> str:
        return "".join(self.args)


def _name_in_args(raw: str) -> str | None:
    match = NAME_IN_ARGS.search(raw)
    return match.group(1) if match and match.group(1) else None


def _settle_header_name(grammar: Grammar, call: _Call, tools: list[dict] | None) -> None:
    """Kimi K2: the name and id come from a header `functions.NAME:N`; a header that is
    not one is blanked, and a `"name"` in the arguments is read as a header instead."""
    read = grammar.read_header
    assert read is not None
    call.name = call.header
    if call.args:
        for candidate in (call.header, _name_in_args(call.raw_args)):
            if not candidate:
                continue
            parsed = read(candidate)
            if parsed and grammar.accepts(parsed[1], tools):
                call.id, call.name, call.named = parsed[0], parsed[1], True
                return
            call.name = ""
    elif call.ended and (parsed := read(call.header)) is not None and parsed[1]:
        call.id, call.name = parsed
    if call.ended:
        fallback = call.name or _name_in_args(call.raw_args) or ""
        if grammar.accepts(fallback, tools):
            call.name, call.named = fallback, True


def _settle_name(grammar: Grammar, call: _Call, tools: list[dict] | None) -> None:
    """The name from the text between the call's markers, else from its arguments."""
    call.name = call.header
    if call.args:
        candidate = call.header or _name_in_args(call.raw_args)
        if candidate is not None:
            cleaned = grammar.clean_name(candidate)
            if grammar.accepts(cleaned, tools):
                call.name, call.named = cleaned, True
                return
    if call.ended:
        call.name = grammar.clean_name(call.name)
        fallback = call.name or _name_in_args(call.raw_args) or ""
        if grammar.accepts(fallback, tools):
            call.name, call.named = fallback, True


def _name_and_args(raw: str) -> tuple[object, str]:
    """A body that is one JSON object `{"name": ..., "arguments": ...}`."""
    raw = raw.strip()
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return "", raw
    if not isinstance(parsed, dict):
        return "", raw
    name = parsed.get("name", "")
    for key in ("arguments", "parameters"):
        if key in parsed:
            value = parsed[key]
            return name, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    rest = {k: v for k, v in parsed.items() if k != "name"}
    return name, json.dumps(rest, ensure_ascii=False)


@dataclass
class _Context:
    """What converting one call's arguments may look at, and where its notes go."""

    tools: list[dict] | None
    #: Raw arguments -> the name of the first call that has them (vLLM looks it up so).
    first_name: dict[str, str]
    notes: list[str]


def _arguments(grammar: Grammar, call: _Call, name: str, context: _Context) -> tuple[object, str]:
    raw = call.raw_args
    if not raw.strip():
        return name, "{}"
    if not name:
        return _name_and_args(raw)
    if grammar.convert_args is not None:
        try:
            converted = grammar.convert_args(raw)
        except FailsInVllm as failure:
            context.notes.append(failure.note)
            converted = failure.arguments
        if grammar.after_convert is not None:
            converted = grammar.after_convert(converted, context.tools, context.first_name.get(raw))
        return name, converted
    if grammar.read_header is not None:
        return name, raw.strip()
    return name, _name_and_args(raw)[1]


def read_tools(
    grammar: Grammar,
    text: str,
    tools: list[dict] | None,
    *,
    skip_reasoning: bool = False,
    suppress: bool = False,
    special_tokens: Iterable[str] = (),
) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for an engine parser, on the reasoning-free content.

    `skip_reasoning`: no reasoning parser is configured, so reasoning markers stay text.
    `suppress`: the request's tool_choice is "none" (vLLM then drops the markup).
    `special_tokens`: the tokenizer's; those the format does not use are dropped."""
    dropped = frozenset(special_tokens)
    events = run(grammar, text, State.CONTENT, skip_reasoning=skip_reasoning, dropped=dropped)
    calls: dict[int, _Call] = {}
    before: list[str] = []
    after: list[str] = []
    seen_call = False
    for event in events:
        if event.kind == TEXT:
            (after if seen_call else before).append(event.value)
        elif suppress or event.kind not in (CALL_START, CALL_NAME, CALL_ARGS, CALL_END):
            continue
        else:
            seen_call = True
            call = calls.setdefault(event.call, _Call())
            if event.kind == CALL_NAME:
                call.header += event.value
            elif event.kind == CALL_ARGS:
                call.args.append(event.value)
            elif event.kind == CALL_END:
                call.ended = True

    found: list[ToolCall] = []
    notes: list[str] = []
    context = _Context(tools, {}, notes)
    named_any = False
    for index in sorted(calls):
        call = calls[index]
        settle = _settle_header_name if grammar.read_header else _settle_name
        settle(grammar, call, tools)
        named_any = named_any or call.named
        if not call.name and not call.raw_args:
            continue
        context.first_name.setdefault(call.raw_args, call.name)
        name, arguments = _arguments(grammar, call, call.name.strip(), context)
        if not grammar.accepts(name, tools):
            notes.append(_dropped(grammar, name, tools))
            continue
        assert isinstance(name, str)
        retyped = fix_arguments(arguments, tools, name)
        if retyped != arguments:
            notes.append(
                f"vLLM's {grammar.name} parser retypes the arguments of `{name}` from the "
                "tool's schema and writes them out again."
            )
        arguments = retyped
        call_id = call.id or tool_call_id(len(found), name)
        found.append(ToolCall(name=name, arguments=arguments, id=call_id))

    content = "".join(before)
    if after and not (seen_call and named_any):
        content += "".join(after)
    elif "".join(after).strip():
        notes.append(f"vLLM's {grammar.name} parser drops the text after the tool calls.")
    if content and not content.strip() and calls and grammar.drop_blank_content_with_tools:
        content = ""
    if found and grammar.strip_content_with_tools:
        content = content.strip()
    elif found and grammar.drop_blank_content_with_tools and not content.strip():
        content = ""
    return ToolExtraction(
        tools_called=bool(found),
        tool_calls=tuple(found),
        content=content or None,
        notes=tidy_notes(notes),
    )


def tidy_notes(notes: list[str], most: int = 4) -> tuple[str, ...]:
    """The notes once each, the first `most` of them (a hostile answer can make
    thousands)."""
    unique = list(dict.fromkeys(notes))
    if len(unique) <= most:
        return tuple(unique)
    return (*unique[:most], f"... and {len(unique) - most} more like these.")


def _dropped(grammar: Grammar, name: object, tools: list[dict] | None) -> str:
    """Why vLLM kept no call for a piece of tool-call markup."""
    if isinstance(name, str) and name and grammar.check_tool_names and tools:
        return (
            f"vLLM's {grammar.name} parser drops the call to `{name}`: the request declares "
            "no tool of that name."
        )
    return f"vLLM's {grammar.name} parser finds no function name in a tool call and drops it."


def read_given(grammar: Grammar, text: str, given: ParserInput) -> ToolExtraction:
    """`read_tools` with what vLLM hands an engine parser: the request's tools, its
    tool_choice, the tokenizer's special tokens and whether a reasoning parser ran."""
    return read_tools(
        grammar,
        text,
        given.tools,
        skip_reasoning=not given.with_reasoning_parser,
        suppress=given.tool_choice_none,
        special_tokens=given.special_tokens,
    )
