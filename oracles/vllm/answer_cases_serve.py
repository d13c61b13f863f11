"""Broken and unusual answers for vLLM's newest parsers (Gemma 4 and Kimi K3 here, DeepSeek's
DSML in `oracles.vllm.answer_cases_dsml`), and whole chat answers of our own for their
`serve:` pairs, recorded by `oracles.vllm.record_answers` beside vLLM's own tests and the
Completion menu's texts.
"""

from __future__ import annotations

from typing import Any

from oracles.vllm.answer_cases import TYPED_TOOLS
from oracles.vllm.answer_cases_dsml import (
    deepseek_reasoning,
    dsml,
    dsml_cases,
    reasoning_cases,
    variants,
)

S = '<|"|>'


def _g(body: str) -> str:
    return f"<|tool_call>call:{body}<tool_call|>"


_GEMMA_ARGS = {
    "string_with_comma": f"location:{S}Paris, France{S}",
    "integer": "count:42",
    "float": "score:3.14",
    "booleans": "flag:true,other:false",
    "null": "param:null",
    "mixed": f"name:{S}test{S},count:42,active:true,score:3.14",
    "nested_object": f"nested:{{inner:{S}value{S}}}",
    "delimited_key": f"record_map:{{{S}3{S}:{S}new text{S}}}",
    "nested_delimited_key": f"outer:{{inner:{{{S}3{S}:{S}new text{S}}}}}",
    "array_of_strings": f"items:[{S}a{S},{S}b{S}]",
    "unterminated_string": f"key:{S}unterminated",
    "empty_value": "key:",
    "trailing_dot_float": "left:108.,right:22.8",
    "malformed_partial_array": ":[t:[]",
    "array_bare_values": "items:[42,true,3.14]",
    "array_closing_bracket_in_string": f"items:[[{S}a]b{S},{S}c{S}],{S}tail{S}]",
    "array_stray_bracket": "items:[42,]trailing]",
    "spaces": f" city : {S}Paris{S} , days : 3 ",
    "brace_in_string": f"city:{S}}}{{{S}",
    "typed_for_schema": "days:3,metric:true,ratio:0.5,tags:[1]",
    "typed_strings_for_schema": f"days:{S}3{S},metric:{S}true{S}",
}


def _gemma4() -> dict[str, dict[str, Any]]:
    city = _g(f"get_weather{{city:{S}Paris{S}}}")
    texts = {
        **{f"args_{label}": _g("get_weather{" + args + "}") for label, args in _GEMMA_ARGS.items()},
        "one": city,
        "two": city + _g(f"get_time{{city:{S}Paris{S}}}"),
        "text_before": "Let me check.\n" + city,
        "text_after": city + "Done.",
        "text_between": city + " and " + _g("get_time{}"),
        "paren_form": _g(f"get_weather(city:{S}Paris{S})"),
        "bare_colon": f"<|tool_call>:get_weather{{city:{S}Paris{S}}}<tool_call|>",
        "no_call_prefix": f"<|tool_call>get_weather{{city:{S}Paris{S}}}<tool_call|>",
        "no_name": _g(f"{{city:{S}Paris{S}}}"),
        "no_arguments": _g("get_time"),
        "unclosed_call": f"<|tool_call>call:get_weather{{city:{S}Paris{S}}}",
        "unclosed_string_value": _g(f"get_weather{{city:{S}Paris}}"),
        "unknown_tool": _g(f"launch{{target:{S}moon{S}}}"),
        "spaced_name": _g(f" get_weather {{city:{S}Paris{S}}}"),
        "reasoning_then_call": f"<|channel>thought\nLet me check.<channel|>{city}",
        "thought_then_call": f"thought\nLet me check.{city}",
        "channel_close_in_content": f"Sure.<channel|>{city}",
        "close_without_open": f"reasoning<channel|>{city}",
        "call_then_channel": f"{city}<|channel>thought\nmore",
        "delimiter_in_content": f"Use {S} quotes.",
        "colon_braces_in_content": "Ratio 3:4 {a} (b) call:x",
        "plain": "The capital of France is Paris.",
        "turn_end": f"{city}<turn|>",
    }
    cases: dict[str, dict[str, Any]] = {
        label: {"text": text, "tools": None} for label, text in texts.items()
    }
    for label in ("typed_for_schema", "typed_strings_for_schema", "integer", "booleans", "null",
                  "nested_object"):  # fmt: skip
        cases[f"args_{label}/schema"] = {"text": texts[f"args_{label}"], "tools": TYPED_TOOLS}
    cases |= variants(
        texts,
        ("one", "reasoning_then_call", "thought_then_call", "close_without_open"),
        ("no_reasoning_parser", "tool_choice_none", "thinking_on"),
    )
    return cases


OP, CL, SP = "<|open|>", "<|close|>", "<|sep|>"


def _k3_call(tool: str, *args: tuple[str, str, str], index: int = 1) -> str:
    body = "".join(f'{OP}argument key="{k}" type="{t}"{SP}{v}{CL}argument{SP}' for k, t, v in args)
    return f'{OP}call tool="{tool}" index="{index}"{SP}{body}{CL}call{SP}'


def _kimi_k3() -> dict[str, str]:
    city = _k3_call("get_weather", ("city", "string", "Paris"))
    tools = f"{OP}tools{SP}{city}{CL}tools{SP}"
    response = f"{OP}response{SP}Let me check.{CL}response{SP}"
    end = f"{CL}message{SP}"
    return {
        "one": f"{response}{tools}{end}",
        "no_response": f"{tools}{end}",
        "text_before_tools": f"Let me check.{tools}",
        "response_open_consumed": f"Sure.{CL}response{SP}{tools}{end}",
        "two": f"{OP}tools{SP}{city}{_k3_call('get_time', index=2)}{CL}tools{SP}",
        "typed": f"{OP}tools{SP}"
        + _k3_call(
            "get_weather",
            ("days", "number", "3"),
            ("metric", "boolean", "true"),
            ("tags", "array", '["a"]'),
            ("opts", "object", '{"a": 1}'),
            ("none", "null", "null"),
            ("bad", "number", "3 apples"),
        )
        + f"{CL}tools{SP}",
        "typed_as_strings_for_schema": f"{OP}tools{SP}"
        + _k3_call("get_weather", ("days", "string", "3"), ("metric", "string", "true"))
        + f"{CL}tools{SP}",
        "escaped_attributes": f'{OP}tools{SP}{OP}call tool="a&amp;b&quot;c" index="1"{SP}'
        f'{OP}argument key="k&quot;" type="string"{SP}v{CL}argument{SP}{CL}call{SP}{CL}tools{SP}',
        "no_tool_attribute": f'{OP}tools{SP}{OP}call index="1"{SP}{CL}call{SP}{CL}tools{SP}',
        "argument_without_key_or_type": f'{OP}tools{SP}{OP}call tool="f"{SP}{OP}argument x="1"{SP}'
        f"v{CL}argument{SP}{CL}call{SP}{CL}tools{SP}",
        "json_block": f'{OP}tools{SP}{OP}call tool="f" index="1"{SP}{OP}json type="object"{SP}'
        f'{{"a": 1}}{CL}json{SP}{CL}call{SP}{CL}tools{SP}',
        "unclosed_tools": f"{OP}tools{SP}{city}",
        "unclosed_call": f'{OP}tools{SP}{OP}call tool="f"{SP}'
        f'{OP}argument key="a" type="string"{SP}v',
        "spaced_markers": f'{OP} tools {SP}{OP} call tool="f"{SP}{CL} call {SP}{CL} tools {SP}',
        "think_response_tools": f"{OP}think{SP}Hmm.{CL}think{SP}{response}{tools}{end}",
        "closed_think_response": f"Hmm.{CL}think{SP}{OP}response{SP}Paris.{CL}response{SP}{end}",
        "plain": "The capital of France is Paris.",
        "message_close_only": f"Hello{end}",
        "two_tools_channels": f"{tools}{OP}tools{SP}{_k3_call('get_time')}{CL}tools{SP}",
        "value_with_close_marker": f"{OP}tools{SP}"
        + _k3_call("f", ("a", "string", f"x{CL}argument{SP}y"))
        + f"{CL}tools{SP}",
    }


def _k3_cases(kind: str) -> dict[str, dict[str, Any]]:
    texts = _kimi_k3()
    cases: dict[str, dict[str, Any]] = {
        label: {"text": text, "tools": TYPED_TOOLS} for label, text in texts.items()
    }
    cases |= variants(
        texts,
        ("one", "think_response_tools", "closed_think_response", "plain"),
        ("no_tools", "tool_choice_none", "thinking_off"),
    )
    if kind == "reasoning":
        cases["enable_thinking_off"] = {
            "text": texts["think_response_tools"], "tools": None,
            "kwargs": {"enable_thinking": False},
        }  # fmt: skip
        cases["two_think_blocks"] = {
            "text": f"{OP}think{SP}a{CL}think{SP}{OP}think{SP}b{CL}think{SP}{OP}response{SP}c",
            "tools": None,
        }
    return cases


def _gemma4_reasoning() -> dict[str, dict[str, Any]]:
    cases = reasoning_cases("<|channel>", "<channel|>", [{}, {"enable_thinking": True}])
    for label, text in {
        "thought_prefix": "<|channel>thought\nHmm.<channel|>Paris.",
        "thought_only": "thought",
        "thought_newline_only": "thought\n",
        "thought_no_markers": "thought\nHmm. Paris.",
        "call_after_reasoning": "<|channel>thought\nHmm.<channel|>" + _g("f{}"),
        "call_in_reasoning": "<|channel>thought\nHmm." + _g("f{}"),
        "call_first": _g("f{}") + "Paris.",
        "turn_markers": "<|channel>thought\nHmm.<channel|>Paris.<turn|>",
    }.items():
        cases[label] = {"text": text, "tools": None}
    return cases


MALFORMED_B: dict[str, dict[str, dict[str, Any]]] = {
    "tool:deepseek_v32": dsml_cases("deepseek_v32"),
    "tool:deepseek_v4": dsml_cases("deepseek_v4"),
    "tool:gemma4": _gemma4(),
    "tool:kimi_k3": _k3_cases("tool"),
    "reasoning:kimi_k3": _k3_cases("reasoning"),
    "reasoning:deepseek_v3": deepseek_reasoning("deepseek_v3"),
    "reasoning:deepseek_v4": deepseek_reasoning("deepseek_v4"),
    "reasoning:gemma4": _gemma4_reasoning(),
}


MENU_TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}}
    for name in ("get_weather", "get_local_time")
]  # fmt: skip
_V32 = dsml("deepseek_v32")["one"]
_V4 = dsml("deepseek_v4")["one"]
_K3_CALL = f"{OP}tools{SP}{_k3_call('get_weather', ('city', 'string', 'Paris'))}{CL}tools{SP}"

#: Whole answers a model writes with thinking on, for the `serve:` pairs, by pair.
SERVE_EXTRA: dict[str, list[dict[str, Any]]] = {
    "gemma4+gemma4": [
        {
            "name": "extra/reasoning_then_call",
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "find",
                        "parameters": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                        },
                    },
                }
            ],
            "kwargs": {"enable_thinking": True},
            "text": "<|channel>thought\nI need to find files<channel|>"
            + _g("find{path:" + S + "research" + S + "}"),
        },
        {
            "name": "extra/reasoning_only",
            "tools": MENU_TOOLS,
            "kwargs": {"enable_thinking": True},
            "text": "<|channel>thought\nLet me think<channel|>The answer is 42",
        },
        {
            "name": "extra/weather_with_unit",
            "tools": MENU_TOOLS,
            "kwargs": {},
            "text": _g(f"get_weather{{city:{S}Paris{S},unit:{S}celsius{S}}}"),
        },
    ],
    "kimi_k3+kimi_k3": [
        {
            "name": "extra/thinking_then_call",
            "tools": MENU_TOOLS,
            "kwargs": {},
            "text": f"The user wants the weather.{CL}think{SP}{OP}response{SP}Let me check."
            f"{CL}response{SP}{_K3_CALL}{CL}message{SP}<|end_of_msg|>",
        },
        {
            "name": "extra/instruct_answer",
            "tools": MENU_TOOLS,
            "kwargs": {"thinking": False},
            "text": f"Paris.{CL}response{SP}{CL}message{SP}<|end_of_msg|>",
        },
    ],
    "none+kimi_k3": [
        {
            "name": "extra/xtml_tags",
            "tools": None,
            "kwargs": {},
            "text": f"{OP}think{SP}step{CL}think{SP}{OP}response{SP}answer",
        },
    ],
    "deepseek_v32+deepseek_v3": [
        {
            "name": "extra/thinking_then_call",
            "tools": MENU_TOOLS,
            "kwargs": {"thinking": True},
            "text": f"The user wants the weather.</think>\n\n{_V32}",
        },
        {
            "name": "extra/thinking_answer",
            "tools": MENU_TOOLS,
            "kwargs": {"thinking": True},
            "text": "The capital is Paris.</think>The capital of France is Paris.",
        },
    ],
    "deepseek_v4+deepseek_v4": [
        {
            "name": "extra/thinking_then_call",
            "tools": MENU_TOOLS,
            "kwargs": {},
            "text": f"The user wants the weather.</think>\n\n{_V4}",
        },
        {
            "name": "extra/call_inside_thinking",
            "tools": MENU_TOOLS,
            "kwargs": {},
            "text": f"Let me search.\n\n{_V4}",
        },
        {
            "name": "extra/thinking_off",
            "tools": MENU_TOOLS,
            "kwargs": {"thinking": False},
            "text": f"Sure.\n\n{_V4}",
        },
    ],
}
