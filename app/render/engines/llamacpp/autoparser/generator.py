"""The autoparser's parser generator: a PEG parser built from the analysis.

common/chat-auto-parser-generator.cpp (`peg_generator::generate_parser` and the
`build_parser` methods) turns the markers the analysis found into a chat PEG grammar:
the generation prompt up to the reasoning start, optional reasoning between its tags,
then either plain content, wrapped content, or content up to the tool section followed
by the tool calls in the format found (JSON, tags around JSON, tags around each
argument). The format is always `peg-native`.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.autoparser.analysis import (
    JSON_NATIVE,
    NONE,
    TAG_WITH_JSON,
    TAG_WITH_TAGGED,
    Analysis,
    ToolAnalysis,
)
from app.render.engines.llamacpp.autoparser.diffing import trim
from app.render.engines.llamacpp.autoparser.generator_tools import tag_json, tag_tagged
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.peg.peg_builder import P


def generate_params(inputs: ParseInputs, analysis: Analysis) -> ChatParams:
    """peg_generator::generate_parser: the generation prompt and the parser."""
    template = inputs.template
    params = ChatParams(format=PEG_NATIVE)
    params.generation_prompt = template.generation_prompt(inputs)
    params.preserved_tokens = tuple(analysis.preserved_tokens)
    params.additional_stops = tuple(analysis.additional_stops)
    parser_prompt = params.generation_prompt
    if inputs.has_continuation():
        params.generation_prompt = continuation_prompt(
            params.generation_prompt,
            analysis,
            inputs.continue_reasoning(),
            inputs.continue_content() if inputs.continue_final_message == "content" else None,
        )
    params.parser = build_chat_peg_parser(lambda p: _root(p, inputs, analysis, parser_prompt))
    params.supports_thinking = analysis.reasoning_mode != NONE
    if params.supports_thinking:
        params.thinking_start_tag = trim(analysis.reasoning_start)
        end = trim(analysis.reasoning_end)
        params.thinking_end_tags = (end,) if end else ()
    return params


def continuation_prompt(
    generation_prompt: str, reasoning: Analysis, reasoning_text: str, content: str | None
) -> str:
    """generate_parser's prefill of a continued final message: the generation prompt up
    to the reasoning start tag, the tag and the reasoning, then — when the content is
    continued (`content` not None) — the end tag and the content. The render writes the
    same text after the prompt."""
    text = generation_prompt
    start = reasoning.reasoning_start
    if start:
        cut = text.find(start)
        text = (text if cut < 0 else text[:cut]) + start + reasoning_text
        if content is not None:
            text += reasoning.reasoning_end
    if content is not None:
        text += content
    return text


def _root(p: ChatBuilder, inputs: ParseInputs, analysis: Analysis, prompt: str) -> P:
    """autoparser::build_parser."""
    extracting = inputs.extract_reasoning() and analysis.reasoning_mode != NONE
    reasoning = _reasoning(p, analysis) if extracting else p.eps()
    has_tools = inputs.has_tools()
    schema = inputs.json_schema
    pure_content = analysis.reasoning_mode == NONE
    if isinstance(schema, dict) and schema:
        response = p.rule(
            "response-format", p.content(p.schema(p.json(), "response-format-schema", schema))
        )
        parser = (
            reasoning
            + p.space()
            + p.choice(
                p.literal("```json") + p.space() + response + p.space() + p.literal("```"),
                p.space() + response + p.space(),
            )
            + p.end()
        )
        pure_content = False
    elif has_tools and inputs.tool_choice != "none" and analysis.caps.get("supports_tool_calls"):
        parser = _tools(p, inputs, analysis, reasoning)
        pure_content = False
    else:
        parser = _content(p, analysis, reasoning, extracting)
    start = p.prefix(prompt, trim(analysis.reasoning_start))
    return start + parser if pure_content else start << parser


def _reasoning(p: ChatBuilder, analysis: Analysis) -> P:
    """analyze_reasoning::build_parser (called only when reasoning is extracted)."""
    start, end = analysis.reasoning_start, analysis.reasoning_end
    if not end:
        return p.eps()
    body = p.reasoning(p.until(trim(end))) + p.optspace(end)
    return p.optional(p.optspace(start) + body if start else body)


def _content(p: ChatBuilder, analysis: Analysis, reasoning: P, extracting: bool) -> P:
    """analyze_content::build_parser."""
    if analysis.content_always_wrapped():
        start, end = analysis.content_start, analysis.content_end
        if extracting:
            return reasoning + start + p.content(p.until(end)) + end + p.end()
        return p.content(p.until(start)) + start + p.content(p.until(end)) + end + p.end()
    return reasoning + p.content(p.rest()) + p.end()


def _optional_wrapped(p: ChatBuilder, analysis: Analysis) -> P:
    """analyze_content::build_optional_wrapped."""
    if analysis.content_always_wrapped():
        start, end = analysis.content_start, analysis.content_end
        return p.optional(start + p.content(p.until(end)) + end)
    return p.eps()


def _tools(p: ChatBuilder, inputs: ParseInputs, analysis: Analysis, reasoning: P) -> P:
    """analyze_tools::build_parser, by format."""
    tools = analysis.tools
    if tools.mode == JSON_NATIVE:
        return _json_native(p, inputs, analysis, reasoning)
    if tools.mode == TAG_WITH_JSON:
        return tag_json(p, inputs, tools, reasoning)
    if tools.mode == TAG_WITH_TAGGED:
        return tag_tagged(p, inputs, tools, reasoning)
    # llama.cpp logs an error and parses nothing at all (eps) in this case.
    return p.eps()


def _json_native(p: ChatBuilder, inputs: ParseInputs, analysis: Analysis, reasoning: P) -> P:
    """build_tool_parser_json_native."""
    tools: ToolAnalysis = analysis.tools
    name_field, args_field = tools.name_field, tools.args_field
    if tools.function_field and tools.function_field != "function" and "." not in name_field:
        name_field = f"{tools.function_field}.{name_field}"
        args_field = f"{tools.function_field}.{args_field}"
    force = inputs.tool_choice == "required"

    def standard(start: str, end: str) -> P:
        arguments: dict[str, Any] = {
            "name_key": name_field,
            "args_key": args_field,
            "array_wrapped": tools.tools_array_wrapped,
            "function_is_key": tools.fun_name_is_key,
            "call_id_key": tools.id_field,
            "gen_call_id_key": tools.gen_id_field,
            "parameters_order": tools.parameter_order,
            "accept_openai_wrapper": tools.openai_wrapper_trigger,
        }
        return p.standard_json_tools(
            start, end, inputs.tools, inputs.parallel_tool_calls, force, **arguments
        )

    if not tools.section_start and tools.per_call_start:
        single = standard(tools.per_call_start, tools.per_call_end)
        calls = p.trigger_rule("tool-calls", p.one_or_more(single + p.space()))
    else:
        calls = standard(tools.section_start, tools.section_end)
    if analysis.content_always_wrapped():
        return reasoning + _optional_wrapped(p, analysis) + calls + p.end()
    tool_start = tools.section_start or tools.per_call_start or "{"
    return reasoning + p.optional(p.content(p.until(tool_start))) + calls + p.end()
