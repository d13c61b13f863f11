"""Muse Glimmer: messages to recipients, `<|eom|>`/`<|eot|>` terminators, ATEM calls.

common_chat_params_init_muse_glimmer (common/parsers/muse-glimmer.cpp, build b11434). An
assistant turn is messages `<|start|>assistant to=RECIPIENT<|message|>...`: to=self is
reasoning (ended by `<|eom|>`), to=user (or no recipient) the answer, and a call goes to
the tool:

    <|start|>assistant to=NAME<|message|><atem:function_calls><atem:invoke name="NAME">
    <atem:parameter name="KEY">value</atem:parameter></atem:invoke></atem:function_calls>

The generation prompt is always `<|start|>assistant` (the model writes its recipient).
With a response format (`json_schema`), the answer is that JSON, fenced or bare.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    foreach_function,
    function_name,
    tagged_args,
)
from app.render.engines.llamacpp.peg.peg_builder import P

START = "<|start|>assistant"
PARAM_END = "</atem:parameter>"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        preserved_tokens=(
            *("<|start|>", "<|message|>", "<|eom|>", "<|eot|>", "<atem:function_calls>"),
            *("<atem:invoke", "<atem:parameter", PARAM_END, "</atem:invoke>"),
            "</atem:function_calls>",
        ),
        generation_prompt=START,
    )
    if inputs.has_continuation():
        data.generation_prompt = START + " to=self<|message|>" + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += (
                "<|eom|><|start|>assistant to=user<|message|>" + inputs.continue_content()
            )
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _call(p: ChatBuilder, tool: dict, string_value: P) -> P:
    name = function_name(tool)
    args = tagged_args(p, tool, '<atem:parameter name="', string_value, PARAM_END)
    opener = (
        p.literal(" to=")
        + p.until("<|message|>")
        + p.literal("<|message|><atem:function_calls>")
        + p.space()
        + p.literal('<atem:invoke name="')
        + p.tool_name(p.literal(name))
        + p.literal('">')
        + p.space()
    )
    close = p.literal("</atem:invoke>") + p.space() + p.literal("</atem:function_calls>")
    call = p.tool(p.tool_open(opener) << p.tool_args(args) << p.tool_close(close))
    return p.rule(f"tool-{name}", call)


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    start = p.rule("start", p.literal(START))
    with_calls = inputs.has_tools() and inputs.tool_choice != "none"
    response_format = isinstance(inputs.json_schema, dict)
    if not inputs.extract_reasoning() and not with_calls and not response_format:
        return start + p.content(p.rest())
    tag = p.reasoning if inputs.extract_reasoning() else p.content
    p.rule("analysis", p.literal(" to=self<|message|>") + tag(p.until("<|eom|>")) + "<|eom|>")
    analysis = p.ref("analysis")
    final = p.rule(
        "final",
        p.optional(p.literal(" to=user"))
        + p.literal("<|message|>")
        + p.content(p.until_one_of(["<|eot|>", "<|eom|>"])),
    )
    if response_format:
        # The answer is the JSON the schema asks for, in a ```json fence or bare.
        answer = p.content(p.schema(p.json(), "response-format-schema", inputs.json_schema))
        fenced = p.literal("```json") + p.space() + answer + p.space() + p.literal("```")
        recipient = p.optional(p.literal(" to=user"))
        body = recipient + p.literal("<|message|>") + (fenced | answer)
        formatted = p.rule("response-format", body)
        return p.zero_or_more(start + analysis) + start + formatted
    if not with_calls:
        return p.zero_or_more(start + analysis) + start + final
    string_value = p.ac(
        p.tool_arg_string_value(p.until(PARAM_END)) + p.tool_arg_close(p.literal(PARAM_END)),
        PARAM_END,
    )
    tool_choice = p.choice()
    for tool in foreach_function(inputs.tools):
        tool_choice |= _call(p, tool, string_value)
    if inputs.parallel_tool_calls:
        more = p.zero_or_more(p.literal("<|eom|>") + start + tool_choice)
        calls = p.trigger_rule("tool-call", tool_choice + more)
    else:
        calls = p.trigger_rule("tool-call", tool_choice)
    if inputs.tool_choice == "required":
        return p.zero_or_more(start + analysis) + start + calls
    trailing = p.optional(p.literal("<|eom|>") + start + calls)
    return p.zero_or_more(start + analysis) + start + (calls | (final + trailing))
