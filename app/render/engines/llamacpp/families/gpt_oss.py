"""gpt-oss (OpenAI Harmony): channels `analysis`, `commentary` and `final` in messages.

common_chat_params_init_gpt_oss (common/parsers/gpt-oss.cpp, build b11434). The completion follows
`<|start|>assistant` (the generation prompt) and is read as a run of messages, each
opened by `<|start|>assistant`: analysis messages are reasoning, commentary messages
(preambles) are content, and the last one is either the `final` channel (content to the
end), a call of a declared function (`to=functions.NAME`, in the role or in the channel
header, then JSON arguments) or, without tools, an unsolicited call (its text dropped).
"""

from __future__ import annotations

from app.render.engines.llamacpp import hooks
from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    copied,
    foreach_function,
    function_name,
    function_parameters,
)
from app.render.engines.llamacpp.peg.peg_builder import P

#: The template reads reasoning from `thinking`, and wants no content beside calls (the
#: prompt's adjustment too: `families.FAMILIES`).
ADJUST = hooks.copy_thinking(drop_content_beside_calls=True)


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    adjusted = ADJUST(copied(inputs.messages), [])
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag="<|channel|>analysis<|message|>",
        thinking_end_tags=("<|end|>",),
        preserved_tokens=("<|channel|>", "<|constrain|>", "<|message|>", "<|start|>", "<|end|>"),
        generation_prompt=inputs.template.generation_prompt(inputs, messages=adjusted),
    )
    if inputs.has_continuation():
        data.generation_prompt = (
            "<|start|>assistant<|channel|>analysis<|message|>" + inputs.continue_reasoning()
        )
        if inputs.continue_final_message == "content":
            data.generation_prompt += (
                "<|end|><|start|>assistant<|channel|>final<|message|>" + inputs.continue_content()
            )
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    start = p.rule("start", p.literal("<|start|>assistant"))
    end = p.rule("end", p.literal("<|end|>"))
    content = p.rule("message-content", p.until("<|end|>"))
    channel = p.literal("<|channel|>") + (p.literal("commentary") | p.literal("analysis"))
    constrain_type = p.chars("[A-Za-z0-9_-]", 1, -1)

    # gpt-oss-20b sometimes writes a stray commentary header before the real channel.
    stray = p.optional(p.literal("<|channel|>commentary") + p.optional(p.literal(" to=assistant")))
    start_analysis = stray + p.literal("<|channel|>analysis<|message|>")
    if inputs.extract_reasoning():
        p.rule("analysis", start_analysis + p.reasoning(content) + end)
    else:
        p.rule("analysis", p.content(start_analysis + content + end))
    analysis = p.ref("analysis")
    preamble = p.rule(
        "preamble", p.literal("<|channel|>commentary<|message|>") + p.content(content) + end
    )
    final = p.rule("final", stray + p.literal("<|channel|>final<|message|>") + p.content(content))
    # A call nobody declared (a built-in tool): consumed, its text left out.
    unsolicited = p.rule(
        "unsolicited", p.atomic(p.optional(channel) + p.literal(" to=") + content + end)
    )
    any_message = p.rule("any", preamble | analysis)

    if isinstance(inputs.json_schema, dict):
        constraint = p.optional(p.space() + p.optional(p.literal("<|constrain|>")) + constrain_type)
        answer = p.rule(
            "response-format",
            p.literal("<|channel|>final")
            + constraint
            + p.literal("<|message|>")
            + p.content(p.schema(p.json(), "response-format-schema", inputs.json_schema)),
        )
        return p.zero_or_more(start + analysis) + start + answer

    if inputs.has_tools() and inputs.tool_choice != "none":
        tool_choice = p.choice()
        for tool in foreach_function(inputs.tools):
            name = function_name(tool)
            func_name = p.literal(" to=functions.") + p.tool_name(p.literal(name))
            constraint = p.optional(
                p.space() + p.optional(p.literal("<|constrain|>")) + constrain_type
            )
            schema = function_parameters(tool)
            args = p.tool_args(p.schema(p.json(), f"tool-{name}-schema", schema))
            message = p.literal("<|message|>")
            # The recipient in the role header, or in the channel header.
            in_role = p.tool(p.tool_open(func_name + channel + constraint + message) + args)
            in_channel = p.tool(p.tool_open(channel + func_name + constraint + message) + args)
            tool_choice |= p.rule(f"tool-{name}", in_role | in_channel)
        tool_call = p.trigger_rule("tool-call", tool_choice)
        if inputs.tool_choice == "required":
            return p.zero_or_more(start + any_message) + start + tool_call
        return p.zero_or_more(start + any_message) + start + (tool_call | final)

    return p.zero_or_more(start + any_message) + start + (final | unsolicited)
