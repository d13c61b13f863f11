"""GigaChat 3: content, then at most one JSON call after a "function call" turn header.

common_chat_params_init_gigachat_v3 (common/parsers/gigachat-v3.cpp, build b11434). The parser reads
the generation prompt `assistant<|role_sep|>\\n` first; with tools, the content runs up
to `<|message_sep|>\\n\\n`, and a call is

    <|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": "NAME", "arguments": {...}}

(one at most: GigaChat has no parallel calls). No reasoning.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_NATIVE, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    function_name,
    function_parameters,
)
from app.render.engines.llamacpp.peg.peg_builder import P

ROLE_SEP = "<|role_sep|>"
MESSAGE_SEP = "<|message_sep|>"
CALL_PREFIX = "<|message_sep|>\n\nfunction call<|role_sep|>\n"
ASSISTANT = "assistant<|role_sep|>\n"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    data = ChatParams(
        format=PEG_NATIVE,
        supports_thinking=False,
        preserved_tokens=("<|message_sep|>\n\n", "<|role_sep|>\n"),
        generation_prompt=inputs.template.generation_prompt(inputs),
    )
    if inputs.has_continuation():
        data.generation_prompt = ASSISTANT + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return p.literal(ASSISTANT) + p.content(p.rest())
    tool_choice = p.choice()
    # chat.cpp walks every tool here (not only type "function") and reads its function.
    for tool in inputs.tools or ():
        name = function_name(tool)
        schema = function_parameters(tool)
        tool_name = p.json_member("name", '"' + p.tool_name(p.literal(name)) + '"')
        args = p.tool_args(p.schema(p.json(), f"tool-{name}-schema", schema))
        tool_args = p.json_member("arguments", args)
        tool_open = p.tool_open(p.literal("{") << tool_name)
        tool_choice |= p.rule(f"tool-{name}", tool_open << "," << tool_args << "}")
    least = 1 if inputs.tool_choice == "required" else 0
    call = p.rule("tool-call", p.literal(CALL_PREFIX) + tool_choice)
    calls = p.trigger_rule("tool-call-root", p.repeat(call, least, 1))
    return p.literal(ASSISTANT) + (p.content(p.until("<|message_sep|>\n\n")) << calls)
