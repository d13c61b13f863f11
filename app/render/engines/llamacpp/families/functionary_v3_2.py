"""Functionary v3.2: every message is `>>>RECIPIENT\\n`, `all` for text, a name for a call.

common_chat_params_init_functionary_v3_2 (common/parsers/functionary-v3-2.cpp, build
b11434). The generation prompt ends with `>>>`, so the completion starts with the
recipient: `all\\n` and content (to the next `>>>` when tools are on), or a declared
function's name, a newline and its JSON arguments, with nothing left over.
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

#: The header the parser reads before the recipient.
HEADER = "<|start_header_id|>assistant<|end_header_id|>\n\n>>>"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        preserved_tokens=(">>>all",),
        generation_prompt=inputs.template.generation_prompt(inputs),
    )
    if inputs.has_continuation():
        data.generation_prompt = HEADER + "all\n" + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    content_until_tool = p.literal("all\n") + p.content(p.until(">>>"))
    content_until_end = p.literal("all\n") + p.content(p.rest())
    header = p.literal(HEADER)
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return header + content_until_end + p.end()
    tool_choice = p.choice()
    for tool in foreach_function(inputs.tools):
        name = function_name(tool)
        schema = function_parameters(tool)
        call = p.tool(
            p.tool_open(p.tool_name(p.literal(name)) + p.literal("\n"))
            + p.tool_args(p.schema(p.json(), f"tool-{name}-schema", schema))
        )
        tool_choice |= p.rule(f"tool-{name}", call)
    tools_only = p.trigger_rule("tools", p.one_or_more(tool_choice))
    content_and_tools = content_until_tool + tools_only
    if inputs.tool_choice == "required":
        if inputs.parallel_tool_calls:
            body = p.choice(content_and_tools, tools_only)
        else:
            body = p.choice(content_until_tool + tool_choice, tools_only)
    elif inputs.parallel_tool_calls:
        body = p.choice(content_and_tools, content_until_end, tools_only)
    else:
        body = p.choice(content_until_tool + tool_choice, content_until_end, tool_choice)
    return header + body + p.end()
