"""Kimi K3: XTML-tagged think, response and tools sections.

common_chat_params_init_kimi_k3 (common/parsers/kimi-k3.cpp, build b11434). Tags are
`<|open|>NAME attrs<|sep|>` and `<|close|>NAME<|sep|>`; the assistant message is
`[think] [response] [tools] <|close|>message<|sep|> <|end_of_msg|>`, every opener
optional (the generation prompt opens the think section). A call is
`<|open|>call tool="NAME" index="N"<|sep|>` with one `<|open|>argument key="K" ...<|sep|>`
tag per argument: a string in the schema is read as text, anything else as JSON.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    foreach_function,
    function_name,
    function_parameters,
)
from app.render.engines.llamacpp.peg.peg_builder import P

SEP = "<|sep|>"
MSG_START = '<|open|>message role="assistant"<|sep|>'
THINK_START, THINK_END = "<|open|>think<|sep|>", "<|close|>think<|sep|>"
RESP_START, RESP_END = "<|open|>response<|sep|>", "<|close|>response<|sep|>"
TOOLS_START, TOOLS_END = "<|open|>tools<|sep|>", "<|close|>tools<|sep|>"
CALL_START, CALL_END = '<|open|>call tool="', "<|close|>call<|sep|>"
ARG_START, ARG_END = '<|open|>argument key="', "<|close|>argument<|sep|>"
MSG_END = "<|close|>message<|sep|>"
EOM = "<|end_of_msg|>"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag=THINK_START,
        thinking_end_tags=(THINK_END,),
        preserved_tokens=("<|open|>", "<|close|>", SEP, EOM),
        generation_prompt=inputs.template.generation_prompt(inputs),
    )
    if inputs.has_continuation():
        data.generation_prompt = MSG_START + THINK_START + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += THINK_END + RESP_START + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _call(p: ChatBuilder, name: str, schema: object) -> P:
    props = schema.get("properties") if isinstance(schema, dict) else None
    args = p.eps()
    if isinstance(props, dict) and props:
        arg_choices = p.choice()
        for key, prop in props.items():
            kind = prop.get("type") if isinstance(prop, dict) else None
            kind = kind if isinstance(kind, str) else "string"
            text = p.until(ARG_END)
            value = p.tool_arg_string_value(text) if kind == "string" else p.tool_arg_value(text)
            # The type="..." attribute after the key is skipped: up to <|sep|>.
            arg = p.tool_arg(
                p.tool_arg_open(p.literal(ARG_START))
                + p.tool_arg_name(p.literal(key))
                + p.literal('"')
                + p.until(SEP)
                + p.literal(SEP)
                + value
                + p.tool_arg_close(p.literal(ARG_END))
            )
            arg_choices |= p.rule(f"kimi-k3-arg-{name}-{key}", arg)
        args = p.zero_or_more(arg_choices)
    opener = p.literal(CALL_START) + p.tool_name(p.literal(name)) + p.literal('"')
    call = p.tool(
        p.tool_open(opener + p.until(SEP) + p.literal(SEP))
        + p.tool_args(args)
        + p.tool_close(p.literal(CALL_END))
    )
    return p.rule(f"kimi-k3-tool-{name}", call)


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    end = p.end()
    start = p.optional(p.literal(MSG_START))
    # The think section is read even without reasoning extraction (as content then).
    stops = [THINK_END, RESP_START]
    text = p.until_one_of(stops)
    body = p.reasoning(text) if inputs.extract_reasoning() else p.content(text)
    reasoning = p.optional(
        p.optional(p.literal(THINK_START)) + body + p.optional(p.literal(THINK_END))
    )
    response = (
        p.optional(p.literal(RESP_START))
        + p.content(p.until_one_of([RESP_END, TOOLS_START, MSG_END]))
        + p.optional(p.literal(RESP_END))
    )
    trailer = p.optional(p.literal(MSG_END)) + p.optional(p.literal(EOM))
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return start + reasoning + response + trailer + end
    tool_choices = p.choice()
    for tool in foreach_function(inputs.tools):
        tool_choices |= _call(p, function_name(tool), function_parameters(tool))
    section = p.trigger_rule(
        "kimi-k3-tool-call",
        p.literal(TOOLS_START)
        + p.one_or_more(tool_choices)
        + p.literal(TOOLS_END)
        + p.optional(p.literal(MSG_END))
        + p.optional(p.literal(EOM)),
    )
    tools = section if inputs.tool_choice == "required" else p.optional(section)
    return start + reasoning + response + tools + trailer + end
