"""transformers' `tokenizer.parse_response` (5.23.0) on a completion, as a ParsedAnswer.

A tokenizer reads an answer only with the `response_template` its files carry (the
`response_template` key of `tokenizer_config.json`, loaded onto the tokenizer as
`tokenizer.response_template`); `parse_response(text, prefix=prompt, tools=tools)` cuts
the prompt after its last `start_anchor` and reads that rest and the completion with the
template (`response_template`). Without one it raises AttributeError. The older
`response_schema` key (JSON schema with `x-regex`, transformers 4.5x) is dropped
silently on loading by 5.23, so a tokenizer that has only that reads nothing either.
"""

from __future__ import annotations

import json
from typing import Any

from app.render.answer import AnswerReader, ParsedAnswer, ReadContext, ToolCall
from app.render.engines.transformers.response_template import (
    NeverReturns,
    ResponseTemplateError,
    parse,
)

PARSER = "parse_response"
#: transformers' error when the tokenizer has no template.
NO_TEMPLATE = "This tokenizer does not have a `response_template` for parsing chat responses!"
#: What makes a dict a 5.23 response template rather than a legacy response schema.
TEMPLATE_MARKS = ("fields", "start_anchor", "start_anchor_pattern")


#: What transformers does with a completion when the tokenizer has no response schema.
NO_RESPONSE_SCHEMA = (
    "transformers reads an answer only with the tokenizer's `response_template` "
    "(tokenizer_config.json; tokenizer.parse_response raises AttributeError without one): "
    "no loaded tokenizer files carry one, so an application gets the decoded text and "
    "reads it itself."
)


class TransformersReader(AnswerReader):
    """`tokenizer.parse_response` with the source's response template; `parse_response`
    has no switches (no options): the template decides everything."""

    def declines(self, context: ReadContext) -> str | None:
        """Without response template files, an application reads the text itself."""
        return NO_RESPONSE_SCHEMA if context.answer.response_template is None else None

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The message `tokenizer.parse_response(completion, prefix=prompt, tools=tools)`
        returns with the source's response template, or the exception it raises."""
        given = context.answer.response_template
        template = None if given is None else json.loads(given)
        if template is None or not any(mark in template for mark in TEMPLATE_MARKS):
            legacy = template is not None
            return ParsedAnswer(
                PARSER,
                error=f"AttributeError: {NO_TEMPLATE}",
                notes=(_no_template_note(legacy),),
            )
        prefix, notes = _prefix(context.prompt)
        try:
            message = parse(template, completion, prefix, context.request.tools)
        except (ValueError, KeyError, TypeError, RecursionError) as error:
            return ParsedAnswer(PARSER, error=_raised(error), notes=tuple(notes))
        return _answer(message, notes)


def _no_template_note(legacy: bool) -> str:
    if legacy:
        return (
            "The tokenizer files carry a legacy `response_schema`, which transformers 5.23 "
            "drops silently on loading: tokenizer.parse_response finds no `response_template` "
            "and raises AttributeError, so an application gets only the decoded text."
        )
    return (
        "The tokenizer files carry no `response_template` (tokenizer_config.json), so "
        "transformers has nothing to parse with: tokenizer.parse_response raises "
        "AttributeError and an application gets only the decoded text."
    )


def _prefix(prompt: str | None) -> tuple[str, list[str]]:
    """The prompt the completion continues (`prefix=`), rendered as transformers does;
    "" when it does not render, and a note saying so."""
    if prompt is not None:
        return prompt, []
    note = (
        'The prompt does not render, so the completion is read with prefix="" '
        "(as if the template had written nothing of the answer)."
    )
    return "", [note]


def _raised(error: BaseException) -> str:
    if isinstance(error, NeverReturns):
        return f"parse_response never returns: {error}"
    if isinstance(error, RecursionError):
        return "RecursionError: maximum recursion depth exceeded while decoding a JSON region"
    if isinstance(error, ResponseTemplateError):
        return f"ValueError: {error}"
    name = type(error).__name__
    return f"{name}: {error.args[0] if isinstance(error, KeyError) and error.args else error}"


def _answer(message: dict[str, Any], notes: list[str]) -> ParsedAnswer:
    """The parsed dict as a ParsedAnswer: content, reasoning, tool calls with their
    arguments as JSON text (transformers hands them over as objects)."""
    content = message.get("content")
    reasoning = message.get("reasoning_content", message.get("thinking"))
    calls: list[ToolCall] = []
    for i, raw in enumerate(message.get("tool_calls") or []):
        fn = raw.get("function", raw) if isinstance(raw, dict) else {}
        name = fn.get("name") if isinstance(fn, dict) else None
        arguments = fn.get("arguments") if isinstance(fn, dict) else None
        if not isinstance(name, str):
            notes.append(f"Tool call {i + 1} has no name in the parsed message: {raw!r}.")
            continue
        text = (
            arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        )
        calls.append(ToolCall(name, text))
    others = sorted(
        set(message) - {"role", "content", "reasoning_content", "thinking", "tool_calls"}
    )
    if others:
        notes.append(
            f"parse_response also returns {', '.join(others)}, which the message shows not."
        )
    return ParsedAnswer(
        PARSER,
        content=content if isinstance(content, str) or content is None else json.dumps(content),
        reasoning_content=reasoning
        if isinstance(reasoning, str) or reasoning is None
        else str(reasoning),
        tool_calls=tuple(calls),
        notes=tuple(notes),
    )
