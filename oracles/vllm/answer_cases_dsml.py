"""Broken and unusual DSML answers (DeepSeek V3.2 and V4) for vLLM's `deepseek_v32` and
`deepseek_v4` tool parsers and the `deepseek_v3`/`deepseek_v4` reasoning parsers, recorded
by `oracles.vllm.record_answers` beside vLLM's own tests (through
`oracles.vllm.answer_cases_serve`).
"""

from __future__ import annotations

from typing import Any

from oracles.vllm.answer_cases import TYPED_TOOLS

D = "｜DSML｜"
INV, INV_END = f'<{D}invoke name="', f"</{D}invoke>"
PAR_END = f"</{D}parameter>"
#: The V3.2 wrapper and the V4 one.
WRAPPERS = {
    "deepseek_v32": (f"<{D}function_calls>", f"</{D}function_calls>"),
    "deepseek_v4": (f"<{D}tool_calls>", f"</{D}tool_calls>"),
}
WRAPPED_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
]  # fmt: skip
#: The same text under other request settings, by the suffix of the case's name.
SWITCHES: dict[str, dict[str, Any]] = {
    "no_tools": {"tools": None},
    "tool_choice_none": {"tool_choice": "none"},
    "no_reasoning_parser": {"no_reasoning_parser": True},
    "thinking_off": {"kwargs": {"thinking": False}},
    "thinking_on": {"kwargs": {"enable_thinking": True}},
    "schema": {"tools": WRAPPED_TOOLS},
}


def variants(
    texts: dict[str, str], labels: tuple[str, ...], switches: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """The texts of `labels` read with each of `switches` (`SWITCHES`), with TYPED_TOOLS
    unless the switch says otherwise."""
    return {
        f"{label}/{switch}": {"text": texts[label], "tools": TYPED_TOOLS} | SWITCHES[switch]
        for label in labels
        for switch in switches
    }


def _p(key: str, value: str, string: str | None = "true") -> str:
    attr = f' string="{string}"' if string is not None else ""
    return f'<{D}parameter name="{key}"{attr}>{value}{PAR_END}'


def _inv(name: str, *params: str) -> str:
    return f'{INV}{name}">\n' + "".join(p + "\n" for p in params) + INV_END + "\n"


def dsml(parser: str) -> dict[str, str]:
    """Answers in the DSML of `parser` ("deepseek_v32" or "deepseek_v4"), by label."""
    start, end = WRAPPERS[parser]
    city = _inv("get_weather", _p("city", "Paris"))

    def block(*invokes: str) -> str:
        return f"{start}\n" + "".join(invokes) + end

    return {
        "one": block(city),
        "two": block(city, _inv("get_time")),
        "text_before": "Let me look.\n\n" + block(city),
        "text_after": block(city) + "\nDone.",
        "typed": block(
            _inv(
                "get_weather",
                _p("days", "3", "false"),
                _p("metric", "true", "false"),
                _p("ratio", "0.5", "false"),
                _p("tags", '["a"]', "false"),
            )
        ),
        "typed_as_strings": block(_inv("get_weather", _p("days", "3"), _p("metric", "true"))),
        "no_string_attribute": block(
            _inv("get_weather", _p("city", "Paris", None), _p("days", "2", None))
        ),
        "invalid_json_value": block(_inv("get_weather", _p("tags", "[1, 2", "false"))),
        "unclosed_parameter": block(
            f'{INV}get_weather">\n<{D}parameter name="city" string="true">Paris\n'
            f"{_p('days', '2', 'false')}\n{INV_END}\n"
        ),
        "unclosed_invoke": f'{start}\n{INV}get_weather">\n{_p("city", "Paris")}\n{end}',
        "unclosed_block": f"{start}\n{city}",
        "cut_in_name": f"{start}\n{INV}get_wea",
        "empty_name": block(_inv("", _p("city", "Paris"))),
        "spaced_name": block(_inv(" get_weather ", _p("city", "Paris"))),
        "unknown_tool": block(_inv("launch", _p("target", "moon"))),
        "invoke_without_block": city,
        "repeated_key": block(
            _inv("get_weather", _p("city", "A"), _p("days", "1", "false"), _p("city", "B"))
        ),
        "arguments_wrapper": block(
            _inv("get_weather", _p("arguments", '{"city": "Paris"}', "false"))
        ),
        "input_wrapper_string": block(_inv("get_weather", _p("input", '{"city": "Paris"}'))),
        "wrapper_with_other_key": block(_inv("get_weather", _p("arguments", '{"x": 1}', "false"))),
        "same_arguments_two_names": block(
            _inv("get_time", _p("arguments", '{"city": "Paris"}', "false")),
            _inv("get_weather", _p("arguments", '{"city": "Paris"}', "false")),
        ),
        "marker_in_value": block(_inv("get_weather", _p("city", 'a">b<c'))),
        "two_blocks": block(city) + "\nand\n" + block(_inv("get_time")),
        "other_wrapper": city.join(
            WRAPPERS["deepseek_v4" if parser != "deepseek_v4" else "deepseek_v32"]
        ),
        "think_then_call": "<think>Hmm.</think>\n\n" + block(city),
        "close_think_then_call": "Hmm.</think>\n\n" + block(city),
        "plain": "The capital of France is Paris.",
        "nested_value": block(_inv("get_weather", _p("tags", '{"a": [1, {"b": null}]}', "false"))),
    }


def dsml_cases(parser: str) -> dict[str, dict[str, Any]]:
    """The broken and unusual answers for the tool parser `parser`."""
    texts = dsml(parser)
    cases: dict[str, dict[str, Any]] = {
        label: {"text": text, "tools": TYPED_TOOLS} for label, text in texts.items()
    }
    wrapped = ("arguments_wrapper", "input_wrapper_string", "wrapper_with_other_key",
               "same_arguments_two_names")  # fmt: skip
    cases |= variants(texts, wrapped, ("schema",))
    cases |= variants(texts, ("one", "typed", "think_then_call"), ("no_tools", "tool_choice_none"))
    cases |= variants(
        texts,
        ("think_then_call", "close_think_then_call", "text_before"),
        ("no_reasoning_parser", "thinking_off"),
    )
    if parser == "deepseek_v4":
        for variant in (f"<{D}toolcalls>", f"<{D}tool>"):
            cases[f"variant_opener/{variant[len(D) + 1 : -1]}"] = {
                "text": texts["one"].replace(WRAPPERS[parser][0], variant),
                "tools": TYPED_TOOLS,
            }
    return cases


def reasoning_texts(open_: str, close: str) -> dict[str, str]:
    """Answers around one pair of thinking markers, by label."""
    return {
        "closed": f"Hmm.{close}Paris.",
        "opened_and_closed": f"{open_}Hmm.{close}Paris.",
        "open_only": f"{open_}Hmm.",
        "plain": "Paris.",
        "empty_reasoning": f"{open_}{close}Paris.",
        "two_closes": f"a{close}b{close}c",
        "trailing_space_reasoning": f"{open_}Hmm.  \n{close}\n\nParis.",
    }


def reasoning_cases(open_: str, close: str, switches: list[dict]) -> dict[str, dict[str, Any]]:
    """`reasoning_texts`, each read with every chat_template_kwargs of `switches`."""
    cases = {}
    for label, text in reasoning_texts(open_, close).items():
        for kwargs in switches:
            suffix = "/" + ",".join(f"{k}={v}" for k, v in kwargs.items()) if kwargs else ""
            cases[label + suffix] = {"text": text, "tools": None, "kwargs": kwargs}
    return cases


def deepseek_reasoning(parser: str) -> dict[str, dict[str, Any]]:
    """The answers for the reasoning parser `parser` (deepseek_v3 or deepseek_v4)."""
    cases = reasoning_cases(
        "<think>",
        "</think>",
        [{}, {"thinking": True}, {"enable_thinking": True}, {"thinking": False}],
    )
    call = dsml("deepseek_v4")["one"]
    cases["call_in_reasoning"] = {"text": f"Let me search.\n\n{call}", "tools": None}
    cases["call_in_reasoning/v32"] = {"text": "Hmm." + dsml("deepseek_v32")["one"], "tools": None}
    if parser == "deepseek_v4":
        cases["reasoning_effort_none"] = {
            "text": "Hmm.</think>Paris.",
            "tools": None,
            "kwargs": {"reasoning_effort": "none"},
        }
    return cases
