"""Ministral 3 / Magistral / Devstral: `[THINK]` reasoning and `[TOOL_CALLS]name[ARGS]{...}`.

common_chat_params_init_ministral_3 (common/parsers/ministral3.cpp, build b11434). Reasoning is an
optional `[THINK]...[/THINK]` block, content runs to the first `[TOOL_CALLS]`, and each
call is `[TOOL_CALLS]` + a declared name + `[ARGS]` + a JSON object. Its parser reads no
generation prompt of its own (an empty `eps`), so the template's (usually empty) one is
read as content.
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


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    # The template wants system/assistant content as blocks, reasoning as a thinking block.
    adjusted = hooks.ministral_blocks(copied(inputs.messages), [])
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=True,
        thinking_start_tag="[THINK]",
        thinking_end_tags=("[/THINK]",),
        preserved_tokens=("[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]"),
        generation_prompt=inputs.template.generation_prompt(inputs, messages=adjusted),
    )
    if inputs.has_continuation():
        data.generation_prompt = "[THINK]" + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += "[/THINK]" + inputs.continue_content()

    def build(p: ChatBuilder) -> P:
        generation_prompt = p.eps()
        reasoning = p.eps()
        if inputs.extract_reasoning():
            reasoning = p.optional(
                "[THINK]" + p.reasoning(p.until("[/THINK]")) + p.literal("[/THINK]")
            )
        if isinstance(inputs.json_schema, dict) and inputs.json_schema:
            # The model writes its JSON answer inside a ```json fence.
            body = p.content(p.schema(p.json(), "response-format", inputs.json_schema))
            return generation_prompt + (reasoning << "```json" << body << "```")
        if inputs.has_tools() and inputs.tool_choice != "none":
            tool_choice = p.choice()
            for tool in foreach_function(inputs.tools):
                name = function_name(tool)
                schema = function_parameters(tool)
                opener = p.tool_open(p.tool_name(p.literal(name)) + "[ARGS]")
                args = p.tool_args(p.schema(p.json(), f"tool-{name}-schema", schema))
                tool_choice |= p.rule(f"tool-{name}", opener + args)
            least = 1 if inputs.tool_choice == "required" else 0
            most = -1 if inputs.parallel_tool_calls else 1
            calls = p.trigger_rule("tool-call", p.repeat("[TOOL_CALLS]" + tool_choice, least, most))
            return generation_prompt + (reasoning << p.content(p.until("[TOOL_CALLS]")) << calls)
        return generation_prompt + (reasoning << p.content(p.rest()))

    data.parser = build_chat_peg_parser(build)
    return data
