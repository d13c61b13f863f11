"""The texts `oracles.edge_llm.record` runs through Edge-LLM's own parser, besides
Edge-LLM's test inputs (`oracles/edge_llm/parser_cases.json`) and the Completion
menu's texts: one or more per path of its generic tool parser and reasoning parsers,
broken markup, and texts on which its parser raises.

A case is `{"name", "text", "tools", "tool_choice", "model", "reasoning_parser"}`:
`tools` names a tool set of `TOOLS`; `model` is the checkpoint folder's name (its `auto`
picks by it); `reasoning_parser` is the one in force (what `--reasoning-parser` names
when the request sets enable_thinking, else "none").
"""

from __future__ import annotations

from typing import Any

from app.answers.menu import EXAMPLE_TOOLS

_TYPED = {
    "type": "object",
    "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "ratio": {"type": "number"},
        "metric": {"type": "boolean"}, "tags": {"type": "array"}, "where": {"type": "object"},
    },
}  # fmt: skip
#: The tool sets a case names.
TOOLS: dict[str, list[dict[str, Any]]] = {
    "menu": EXAMPLE_TOOLS,
    "typed": [
        {"type": "function", "function": {"name": "get_weather", "parameters": _TYPED}},
        {"type": "function", "function": {"name": "get_time"}},
    ],
}

W = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
T = '{"name": "get_time", "arguments": {}}'
X = "<function=get_weather><parameter=city>Paris</parameter></function>"
A = (
    '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
    '<atem:parameter name="city"> Paris </atem:parameter>\n</atem:invoke>\n'
    "</atem:function_calls>"
)

_TOOL_TEXTS = {
    "hermes_pair_with_text": f"Sure.<tool_call>{W}</tool_call> and <tool_call>{T}</tool_call> done",
    "unclosed_last": f"<tool_call>{W}</tool_call><tool_call>{T}",
    "unclosed_only": f"<tool_call>{W}",
    "broken_json": '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>',
    "python_literal": "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Paris'}}"
    "</tool_call>",
    "json_null": "<tool_call>null</tool_call>",
    "list_of_calls": f"<tool_calls>[{W}, {T}]</tool_calls>",
    "tool_calls_key": f'<tool_call>{{"tool_calls": [{W}]}}</tool_call>',
    "function_key": '<tool_call>{"id": "c1", "function": {"name": "get_time", "arguments": "{}"}}'
    "</tool_call>",
    "parameters_key": '<tool_call>{"name": "get_weather", "parameters": {"city": "Rome"}}'
    "</tool_call>",
    "arguments_null": '<tool_call>{"name": "get_time", "arguments": null}</tool_call>',
    "arguments_zero": '<tool_call>{"name": "get_time", "arguments": 0}</tool_call>',
    "arguments_json_text": '<tool_call>{"name": "get_weather", '
    '"arguments": "{\\"city\\":\\"Oslo\\"}"}</tool_call>',
    "arguments_plain_text": '<tool_call>{"name": "get_weather", "arguments": "Oslo"}</tool_call>',
    "arguments_nan": '<tool_call>{"name": "get_weather", "arguments": {"x": NaN}}</tool_call>',
    "arguments_unicode": '<tool_call>{"name": "get_weather", "arguments": {"city": "Zürich"}}'
    "</tool_call>",
    "arguments_spacing": '<tool_call>{"name":"get_weather","arguments":{"b":2,"a":1}}</tool_call>',
    "id_not_string": '<tool_call>{"id": 5, "name": "get_time", "arguments": {}}</tool_call>',
    "id_empty": '<tool_call>{"id": "", "name": "get_time", "arguments": {}}</tool_call>',
    "unknown_function": '<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>',
    "one_known_one_not": f'<tool_calls>[{W}, {{"name": "nope", "arguments": {{}}}}]</tool_calls>',
    "name_not_string": '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
    "scalar_payload": "<tool_call>42</tool_call>",
    "empty_block": "<tool_call></tool_call>",
    "nested_opener": f"<tool_call>x<tool_call>{W}</tool_call>",
    "close_only": f"{W}</tool_call>",
    "families": f"<toolcall>{W}</toolcall><toolcalls>{T}</toolcalls>"
    f"<function_call>{W}</function_call><function_calls>[{T}]</function_calls>",
    "mistral_open_ended": f"[TOOL_CALLS]{W}",
    "mistral_final_newline": f"[TOOL_CALLS] [{W}]\n",
    "mistral_closed": f"a [TOOL_CALL]{W}[/TOOL_CALL] b [TOOL_CALLS][{T}][/TOOL_CALLS] c",
    "mistral_two_opens": f"[TOOL_CALLS]{W}[TOOL_CALLS]{T}",
    "qwen_xml": f"<tool_call>\n{X}\n</tool_call>",
    "qwen_xml_bare": f"Let me see. {X} ok",
    "qwen_xml_typed": "<function=get_weather><parameter=days> 3 </parameter>"
    "<parameter=ratio>2.0</parameter><parameter=metric>Yes</parameter>"
    '<parameter=tags>["a", 1]</parameter><parameter=where>{"x": 1}</parameter>'
    "<parameter=city> Oslo </parameter></function>",
    "qwen_xml_bad_types": "<function=get_weather><parameter=days>three</parameter>"
    "<parameter=ratio>1e999</parameter><parameter=tags>[1,</parameter></function>",
    "qwen_xml_repeated_key": "<function=get_weather><parameter=city>A</parameter>"
    "<parameter=days>1</parameter><parameter=city>B</parameter></function>",
    "qwen_xml_empty_name": "<function=>x</function> <function= get_time >y</function>",
    "qwen_xml_unclosed_parameter": "<function=get_weather><parameter=city>Paris</function>",
    "qwen_xml_unknown": "<function=nope><parameter=a>1</parameter></function>",
    "atem": A,
    "atem_typed": '<atem:function_calls><atem:invoke  name="get_weather">'
    '<atem:parameter name="days"> 7 </atem:parameter></atem:invoke></atem:function_calls>',
    "atem_bad_head": '<atem:function_calls><atem:invoke name="get_weather" x>'
    "</atem:invoke></atem:function_calls>",
    "atem_bare": 'Here <atem:invoke\nname="get_time"></atem:invoke> there',
    "pythonic": 'get_weather(city="Paris", days=3)\nget_time()',
    "pythonic_with_prose": 'I will call it now.\n  get_weather(city="Paris"),  \nThanks',
    "pythonic_block": "<tool_call>get_weather(city='Rome', where={'a': [1, 2]})</tool_call>",
    "pythonic_not_literal": "<tool_call>get_weather(city=name.upper(), days=1 + 2)</tool_call>",
    "pythonic_positional_and_kwargs": "<tool_call>get_weather('x', **extra, city='y')</tool_call>",
    "pythonic_syntax_error": "<tool_call>get_weather(city='unclosed)</tool_call>",
    "pythonic_not_call": "<tool_call>get_weather(1) + (2)</tool_call>",
    "pythonic_tail": "<tool_call>get_weather(city='a') ,x</tool_call>",
    "pythonic_set_value": "<tool_call>get_weather(tags={1, 2})</tool_call>",
    "pythonic_unhashable": "<tool_call>get_weather(where={[1]: 2})</tool_call>",
    "fenced_json": f"```json\n{W}\n```",
    "fenced_plain": f"```\n[{W}, {T}]\n```",
    "fenced_in_block": f"<tool_call>```json\n{W}\n```</tool_call>",
    "bare_json": f"  {W}  ",
    "bare_json_with_prose": f"Calling: {W}",
    "set_payload": "<tool_call>{'name': 'get_weather', 'arguments': {1, 2}}</tool_call>",
    "deep_json": "<tool_call>" + "[" * 3000 + "]" * 3000 + "</tool_call>",
    "deep_literal": "<tool_call>" + "-" * 5000 + "1</tool_call>",
    "deep_unclosed_json": "<tool_call>" + "[" * 5000 + "</tool_call>",
    "repeated_bracket_openers": "[TOOL_CALL]" * 3000,
    "big_integer": '<tool_call>{"name": "get_weather", "arguments": {"n": '
    + "9" * 5000
    + "}}</tool_call>",
    "im_end": f"Done.<|im_end|><tool_call>{W}</tool_call>",
    "im_end_plain": "Hello<|im_end|>",
    "angle_noise": "a < b > c <tool_call no",
    "empty": "",
}  # fmt: skip

_REASONING_TEXTS = {
    "think": "<think>\nplan\n</think>\n\nThe answer.",
    "think_no_start": "plan</think>The answer.",
    "think_no_end": "<think>still thinking",
    "think_no_markers": "Just an answer.",
    "think_text_before": "Hi <think>plan</think>answer",
    "think_twice": "<think>a</think>b<think>c</think>d",
    "think_empty": "<think></think>",
    "think_then_call": f"<think>plan</think>ok <tool_call>{W}</tool_call>",
    "call_then_think_end": f"<tool_call>{W}</tool_call>later</think>tail",
    "think_around_call": f"<think>a <tool_call>{W}</tool_call> b</think>c",
    "think_im_end": "<think>x</think>y<|im_end|>",
}


def _case(name: str, text: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "text": text,
        "tools": fields.get("tools", "typed"),
        "tool_choice": fields.get("tool_choice"),
        "model": fields.get("model", "model"),
        "reasoning_parser": fields.get("reasoning_parser", "none"),
    }


def crafted_cases() -> list[dict[str, Any]]:
    """Every crafted text, with and without tools and reasoning parsers where it matters."""
    cases = [_case(f"tools/{name}", text) for name, text in _TOOL_TEXTS.items()]
    forced = {"type": "function", "function": {"name": "get_weather"}}
    cases += [
        _case("forced/other", f"<tool_call>{T}</tool_call>", tool_choice=forced),
        _case("forced/same", f"<tool_call>{W}</tool_call>{X}", tool_choice=forced),
        _case("tool_choice_none", f"<think>x</think><tool_call>{W}</tool_call>",
              tool_choice="none", reasoning_parser="qwen3"),
        _case("no_tools", f"<tool_call>{W}</tool_call>", tools=None),
        _case("required", f"<tool_call>{W}</tool_call>", tool_choice="required"),
    ]  # fmt: skip
    for parser in ("qwen3", "auto"):
        for tools in ("typed", None):
            cases += [
                _case(
                    f"reasoning/{parser}/{'tools' if tools else 'no_tools'}/{name}", text,
                    tools=tools, reasoning_parser=parser, model="Qwen3-8B",
                )
                for name, text in _REASONING_TEXTS.items()
            ]  # fmt: skip
    muse = {
        "muse_full": " to=self<|message|>plan<|eom|><|start|>assistant to=user<|message|>Hi<|eot|>",
        "muse_no_reasoning": " to=user<|message|>Hello<|eot|>",
        "muse_plain": "Hello",
        "muse_unfinished": " to=self<|message|>still",
        "muse_with_call": " to=self<|message|>p<|eom|><|start|>assistant to=functions"
        f"<|message|>{A}",
    }
    for tools in ("typed", None):
        cases += [
            _case(f"muse/{'tools' if tools else 'no_tools'}/{name}", text, tools=tools,
                  reasoning_parser="auto", model="muse_glimmer-8b")
            for name, text in muse.items()
        ]  # fmt: skip
    models = ("Qwen3-Coder-30B", "Qwen2.5-7B", "NVIDIA-Nemotron-Nano", "gpt-oss-20b",
              "DeepSeek-R1-Distill", "Llama-3.1-8B")  # fmt: skip
    cases += [
        _case(f"auto/{model}", "<think>a</think>b", tools=None, reasoning_parser="auto",
              model=model)
        for model in models
    ]  # fmt: skip
    return cases
