"""Gemma 4: `<|channel>thought` reasoning and `<|tool_call>call:NAME{...}<tool_call|>` calls.

common_chat_params_init_gemma4 (common/parsers/gemma4.cpp, build b11434), with its own format
(peg-gemma4), whose mapper (chat_peg_mappers.Gemma4Mapper) turns Gemma's argument
syntax (bare keys, strings between `<|"|>` quotes) into JSON. The completion follows an
optional `<|turn>model\\n`; messages are an optional thought channel and content; extra
empty channels and a stray `<channel|>` are swallowed.
"""

from __future__ import annotations

from app.render.engines.llamacpp import hooks
from app.render.engines.llamacpp.apply.types import PEG_GEMMA4, ChatParams, ParseInputs
from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.families.common import (
    copied,
    foreach_function,
    function_name,
)
from app.render.engines.llamacpp.peg.peg_builder import P

QUOTE = '<|"|>'


def params(source: str, inputs: ParseInputs) -> ChatParams:
    """The format, the generation prompt and the PEG parser for this request."""
    messages = inputs.messages
    if "{#- OpenAI Chat Completions:" not in source:
        # Older Gemma 4 templates want tool results inside the assistant turn.
        messages = hooks.gemma4_prepare(source, copied(messages), [])
    data = ChatParams(
        format=PEG_GEMMA4,
        supports_thinking=True,
        thinking_start_tag="<|channel>thought",
        thinking_end_tags=("<channel|>",),
        preserved_tokens=("<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|turn>"),
        generation_prompt=inputs.template.generation_prompt(inputs, messages=messages),
    )
    closed_turn = False
    if inputs.add_generation_prompt or inputs.has_continuation():
        data.prompt = inputs.template.apply(inputs, messages=messages)
        closed_turn = data.prompt.endswith("<turn|>\n")
    if inputs.add_generation_prompt and closed_turn:
        # The template closed the model's turn (content beside a call): llama.cpp opens
        # the next one itself.
        data.generation_prompt = "<|turn>model\n"
        data.prompt += data.generation_prompt
    if inputs.has_continuation():
        opened = data.prompt.endswith("<turn|>\n")
        data.generation_prompt = "<|turn>model\n" if opened else ""
        data.generation_prompt += "<|channel>thought\n" + inputs.continue_reasoning()
        if inputs.continue_final_message == "content":
            data.generation_prompt += "<channel|>" + inputs.continue_content()
    data.parser = build_chat_peg_parser(lambda p: _grammar(p, inputs))
    return data


def _grammar(p: ChatBuilder, inputs: ParseInputs) -> P:
    start = p.rule("start", p.optional(p.literal("<|turn>model\n")))
    head = p.literal("<|channel>thought") + p.space()
    if inputs.extract_reasoning():
        p.rule("thought", head + p.reasoning(p.until("<channel|>")) + p.literal("<channel|>"))
    else:
        p.rule("thought", p.content(head + p.until("<channel|>") + p.literal("<channel|>")))
    empty_channels = p.gbnf(
        p.zero_or_more(p.literal("<|channel>") + p.negate(p.literal("thought"))), ""
    )
    thought = (p.peek(p.literal("<|channel>")) + empty_channels + p.ref("thought")) | p.negate(
        p.literal("<|channel>")
    )
    if isinstance(inputs.json_schema, dict):
        body = p.content(p.schema(p.json(), "response-format-schema", inputs.json_schema))
        return start + p.optional(thought) + (p.literal("```json") << body << p.literal("```"))
    if inputs.has_tools() and inputs.tool_choice != "none":
        _value_rules(p)
        tool_choice = p.choice()
        for tool in foreach_function(inputs.tools):
            name = function_name(tool)
            opener = p.tool_open(p.tool_name(p.literal(name)) + p.peek(p.literal("{")))
            call = p.tool(p.sequence(opener, p.tool_args(p.ref("gemma4-dict"))))
            tool_choice |= p.rule(f"tool-{name}", call)
        least = 1 if inputs.tool_choice == "required" else 0
        most = -1 if inputs.parallel_tool_calls else 1
        calls = p.trigger_rule(
            "tool-call", p.repeat("<|tool_call>call:" + tool_choice + "<tool_call|>", least, most)
        )
        if inputs.tool_choice == "required":
            return start + thought + calls  # no content before the calls (b11434)
        scan = p.rule("scan-to-toolcall", p.until("<|tool_call>"))
        stops = ["<|channel>", "<channel|>", "<|tool_call>"]
        content = p.rule("content", p.content(p.until_one_of(stops)))
        message = p.rule("message", thought + content)
        return start + p.zero_or_more(message) + scan + calls
    # Gemma 4 may end with an empty thought channel or a lone <channel|>: every complete
    # thought is consumed, and content stops at the first unmatched marker.
    content = p.rule("content", p.content(p.until_one_of(["<|channel>", "<channel|>"])))
    message = p.rule("message", thought + content)
    return start + p.one_or_more(message)


def _value_rules(p: ChatBuilder) -> None:
    """Gemma's argument syntax: strings between <|"|>, bare keys, JSON scalars."""
    p.rule("gemma4-string-content", p.until(QUOTE))
    p.rule("gemma4-string", p.literal(QUOTE) + p.ref("gemma4-string-content") + p.literal(QUOTE))
    p.rule("gemma4-bool", p.json_bool())
    p.rule("gemma4-null", p.json_null())
    p.rule("gemma4-number", p.json_number())
    key = p.rule("gemma4-dict-key-name", p.chars("[^:}]", 1, -1)) + p.literal(":")
    p.rule("gemma4-dict-key", key)
    p.rule("gemma4-dict-kv", p.ref("gemma4-dict-key") + p.space() + p.ref("gemma4-value"))

    def container(open_: str, item: str, close: str):
        def build():
            ws = p.space()
            element = p.ref(item)
            items = p.sequence(element, p.zero_or_more(p.sequence(p.literal(","), ws, element)))
            body = p.choice(p.literal(close), p.sequence(items, ws, p.literal(close)))
            return p.sequence(p.literal(open_), ws, body)

        return build

    p.rule("gemma4-dict", container("{", "gemma4-dict-kv", "}"))
    p.rule("gemma4-array", container("[", "gemma4-value", "]"))
    kinds = ("string", "dict", "array", "number", "bool", "null")
    p.rule("gemma4-value", lambda: p.choice(*(p.ref(f"gemma4-{kind}") for kind in kinds)))
