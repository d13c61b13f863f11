"""MiniMax-M3: `<mm:think>` reasoning and namespaced XML tool calls.

common_chat_params_init_minimax_m3 (common/parsers/minimax-m3.cpp, build b11434), format
peg-minimax-m3 (its own mapper: `chat_peg_mappers.MinimaxM3Mapper`). Every tool tag
carries the namespace token `]<]minimax[>[`:

    ]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="NAME">
    ]<]minimax[>[<KEY>value]<]minimax[>[</KEY>
    ]<]minimax[>[</invoke>]<]minimax[>[</tool_call>

and values nest as the template's to_xml() writes them: objects as member tags, arrays
as `<item>` tags, strings as text, anything else as JSON.
"""

from __future__ import annotations

from app.render.engines.llamacpp.apply.types import PEG_MINIMAX_M3, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.chat_peg.chat_peg_mappers import (
    TOOL_ARG_ARRAY,
    TOOL_ARG_ITEM,
    TOOL_ARG_OBJECT,
)
from app.render.engines.llamacpp.families.common import (
    foreach_function,
    function_name,
    function_parameters,
)
from app.render.engines.llamacpp.peg.peg_builder import P
from app.render.engines.llamacpp.peg.schema import Node, document

NS = "]<]minimax[>["
THINK_START, THINK_END = "<mm:think>", "</mm:think>"
FC_START, FC_END = NS + "<tool_call>", NS + "</tool_call>"
INVOKE_END = NS + "</invoke>"


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    gen_prompt = inputs.template.generation_prompt(inputs)
    data = ChatParams(
        format=PEG_MINIMAX_M3,
        supports_thinking=True,
        thinking_start_tag=THINK_START,
        thinking_end_tags=(THINK_END,),
        preserved_tokens=(NS, "<tool_call>", "</tool_call>", THINK_START, THINK_END),
        generation_prompt=gen_prompt,
    )
    if inputs.has_continuation():
        data.generation_prompt = gen_prompt + THINK_START + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += THINK_END + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs, gen_prompt))
    return data


class _Values:
    """The value grammars of one tool (value_of / members_of / element_of in minimax-m3.cpp),
    over the tree llama.cpp builds from the tool's parameters."""

    def __init__(self, p: ChatBuilder) -> None:
        self.p = p

    def element(self, tag: str, schema: Node, rule_name: str) -> P:
        p, close = self.p, f"{NS}</{tag}>"
        opener = p.tool_arg_open(p.literal(NS + "<") + p.tool_arg_name(p.literal(tag)) + ">")
        return p.rule(rule_name, p.tool_arg(opener + self.value(schema, rule_name, close)))

    def value(self, schema: Node, rule_name: str, close: str) -> P:
        p = self.p
        close_tag = p.tool_arg_close(p.literal(close))
        # A string takes anything, so a union with a string branch reads as a string.
        if schema.may_be_string():
            return p.ac(p.tool_arg_string_value(p.until(close)) + close_tag, close)
        if schema.kind == "any_of":
            return p.choice(
                *(
                    self.value(alt, f"{rule_name}-{i}", close)
                    for i, alt in enumerate(schema.children)
                )
            )
        if schema.kind == "object" and schema.properties:
            return p.tag(TOOL_ARG_OBJECT, self.members(schema, rule_name)) + p.space() + close_tag
        if schema.kind == "array":
            item_close = NS + "</item>"
            inner = self.value(schema.children[0], f"{rule_name}-item", item_close)
            item = p.rule(
                f"{rule_name}-item", p.tag(TOOL_ARG_ITEM, p.literal(NS + "<item>") + inner)
            )
            return p.tag(TOOL_ARG_ARRAY, p.repeat(p.space() + item, 0, -1)) + p.space() + close_tag
        json_value = p.schema(p.json(), f"{rule_name}-schema", schema)
        return p.tool_arg_json_value(json_value) + close_tag

    def members(self, schema: Node, prefix: str) -> P:
        """Required members in schema order, then optional ones in any order."""
        p = self.p
        needed, optional = [], []
        for prop in schema.properties:
            element = self.element(prop.name, prop.schema, f"{prefix}-{prop.name}")
            (needed if prop.required else optional).append(element)
        members = p.eps()
        for i, element in enumerate(needed):
            members = members + p.space() + element if i > 0 else members + element
        if optional:
            any_optional = p.choice()
            for element in optional:
                any_optional |= element
            members = members + p.repeat(p.space() + any_optional, 0, -1)
        return members


def _grammar(p: ChatBuilder, inputs: ParseInputs, gen_prompt: str) -> P:
    generation_prompt, end = p.prefix(gen_prompt, THINK_START), p.end()
    reasoning = p.eps()
    if inputs.extract_reasoning():
        if inputs.enable_thinking:
            inner = p.ac(p.reasoning(p.until(THINK_END)) + p.literal(THINK_END), THINK_END)
            block = p.literal(THINK_START) + p.space() + inner
        else:
            block = p.literal(THINK_START) + p.ac(p.until(THINK_END) + THINK_END, THINK_END)
        # A turn without reasoning starts with a bare </mm:think> (prompt's or model's).
        reasoning = p.optional(p.choice(block, p.literal(THINK_END)))
    if isinstance(inputs.json_schema, dict):
        schema = p.schema(p.json(), "response-format-schema", inputs.json_schema)
        response = p.rule(
            "response-format",
            p.literal("```json") + p.space() + p.content(schema) + p.space() + p.literal("```"),
        )
        return generation_prompt + reasoning + response + end
    if not inputs.has_tools() or inputs.tool_choice == "none":
        return generation_prompt + reasoning + p.content(p.rest()) + end
    tool_choice = p.choice()
    for tool in foreach_function(inputs.tools):
        name, root = function_name(tool), document(function_parameters(tool)).root
        is_object = root.kind == "object"
        body = _Values(p).members(root, f"tool-{name}-arg") if is_object else p.eps()
        opener = p.literal(NS + '<invoke name="') + p.tool_name(p.literal(name)) + p.literal('">')
        call = p.tool(
            p.tool_open(opener) + p.space() + body + p.space() + p.tool_close(p.literal(INVOKE_END))
        )
        tool_choice |= p.rule(f"tool-{name}", call)
    more = p.zero_or_more(p.space() + tool_choice) if inputs.parallel_tool_calls else p.eps()
    calls = p.trigger_rule(
        "tool-call",
        p.literal(FC_START) + p.space() + tool_choice + more + p.space() + p.literal(FC_END),
    )
    if inputs.tool_choice != "required":
        calls = p.optional(calls)
    return generation_prompt + reasoning + p.content(p.until(FC_START)) + calls + end
