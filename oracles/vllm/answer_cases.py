"""The cases `oracles.vllm.record_answers` runs through vLLM's parsers, besides vLLM's own
tests and the Completion menu: the tokenizer's marker tokens, broken variants per
parser, and the requests of the `serve:` recordings (whole chat answers).
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import REPO

#: The tokenizer's tokens: every marker one of the reproduced parsers looks for.
TOKENS = (
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<|tool_call|>", "[TOOL_CALLS]",
    "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", "<|python_tag|>", "<|python_start|>",
    "<|python_end|>", "<|eom_id|>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_end|>",
    "<|tool_call_argument_begin|>", "<minimax:tool_call>", "</minimax:tool_call>",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<|im_start|>", "<|im_end|>",
    "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>",
    "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", '<|"|>', "<|turn>",
    "<turn|>", "<|tool_response>", "<tool_response|>",
    "<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>",
)  # fmt: skip

W = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
T = '{"name": "get_time", "arguments": {}}'
Q = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call>"
)
TYPED_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
        "metric": {"type": "boolean"}, "ratio": {"type": "number"}, "tags": {"type": "array"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]  # fmt: skip


def _cases(pairs: dict[str, str], tools: list[dict] | None = None) -> dict[str, dict[str, Any]]:
    return {label: {"text": text, "tools": tools} for label, text in pairs.items()}


_HERMES = {
    "text_after": f"Sure.<tool_call>{W}</tool_call> Done.",
    "text_between": f"<tool_call>{W}</tool_call> and <tool_call>{T}</tool_call>",
    "unclosed_last": f"<tool_call>{W}</tool_call><tool_call>{T}",
    "broken_json": '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>',
    "one_of_two_broken": f"<tool_call>{W}</tool_call><tool_call>{{</tool_call>",
    "no_arguments": '<tool_call>{"name": "get_weather"}</tool_call>',
    "parameters_not_arguments": '<tool_call>{"name": "f", "parameters": {}}</tool_call>',
    "name_not_string": '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
    "list_not_object": "<tool_call>[1, 2]</tool_call>",
    "empty_block": "<tool_call></tool_call>",
    "arguments_string": '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
    "unicode_arguments": '<tool_call>{"name": "f", "arguments": {"city": "Zürich"}}</tool_call>',
    "nested_opener": f"<tool_call>x<tool_call>{W}</tool_call>",
    "close_only": f"{W}</tool_call>",
    "whitespace_before": f"\n\n<tool_call>\n{W}\n</tool_call>",
    "pretty_json": '<tool_call>\n{\n  "name": "f",\n  "arguments": {"b": 2, "a": 1}\n}\n'
    "</tool_call>",
    "nan": '<tool_call>{"name": "f", "arguments": {"x": NaN}}</tool_call>',
    "think_then_call": f"<think>hmm</think><tool_call>{W}</tool_call>",
}
_LLAMA = {
    "python_tag": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "two_semicolon": '{"name": "a", "parameters": {}}; {"name": "b", "arguments": {"x": 1}}',
    "adjacent": '{"name": "a", "parameters": {}}{"name": "b", "parameters": {}}',
    "text_before": 'Here: {"name": "a", "parameters": {"q": "x"}}',
    "text_after": '{"name": "a", "parameters": {"q": "x"}} hope that helps',
    "brace_in_text": "Use {curly} braces.",
    "no_name": '{"parameters": {}}',
    "no_parameters": '{"name": "a"}',
    "nested_braces": '{"name": "a", "parameters": {"o": {"p": [1, {"q": 2}]}}}',
    "broken_second": '{"name": "a", "parameters": {}}; {"name": ',
    "name_not_string": '{"name": ["a"], "parameters": {}}',
    "plain": "The capital of France is Paris.",
    "unicode": '{"name": "a", "parameters": {"city": "Zürich"}}',
}
_PYTHONIC = {
    "one": '[get_weather(city="Paris")]',
    "two": '[get_weather(city="Paris", days=3), get_time()]',
    "no_space_sep": "[a(x=1),b()]",
    "literals": "[f(a=None, b=True, c=null, d=true, e=[1, (2, 3)], f={'k': -1.5}, g={1})]",
    "text_before": 'Sure: [get_weather(city="Paris")]',
    "text_after": '[get_weather(city="Paris")] done',
    "positional": '[get_weather("Paris")]',
    "dotted": "[tools.weather.get(city='Paris')]",
    "not_literal": "[f(x=y)]",
    "fstring": "[f(x=f'hi')]",
    "bytes": "[f(x=b'hi')]",
    "syntax_error": "[f(x=1]",
    "empty_list": "[]",
    "not_call": "[1, 2]",
    "trailing_comma": "[f(),]",
    "python_tags": '<|python_start|>[get_weather(city="Paris")]<|python_end|>',
    "python_tags_text": "<|python_start|>no calls<|python_end|>",
    "kwargs_splat": "[f(**{'a': 1})]",
    "unary_not": "[f(x=-True)]",
}
_QWEN3 = {
    "text_before": "Let me check.\n\n" + Q,
    "text_after": Q + "\nDone.",
    "two_calls": Q + "\n" + Q.replace("get_weather", "get_time").replace("city", "zone"),
    "typed": "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n"
    "<parameter=metric>\ntrue\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n"
    '<parameter=tags>\n["a"]\n</parameter>\n</function>\n</tool_call>',
    "unknown_tool": Q.replace("get_weather", "launch"),
    "unclosed_call": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis",
    "unclosed_parameter": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
    "<parameter=days>\n2\n</function>\n</tool_call>",
    "no_tool_call_tag": "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>",
    "spaces_in_tags": "<tool_call>\n<function=get_weather>\n< parameter = city >\nParis\n"
    "< / parameter >\n</function>\n</tool_call>",
    "repeated_key": "<tool_call>\n<function=get_weather>\n<parameter=city>\nA\n</parameter>\n"
    "<parameter=days>\n1\n</parameter>\n<parameter=city>\nB\n</parameter>\n</function>\n</tool_call>",
    "json_inside": "<tool_call>\n" + W + "\n</tool_call>",
    "think_before": "<think>\nhmm\n</think>\n\n" + Q,
    "empty_function": "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
    "unnamed": "<tool_call>\n<function=>\n</function>\n</tool_call>",
}

G = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_GRANITE = {
    "one": f"<|tool_call|>[{G}]",
    "two": f'<|tool_call|>[{G}, {{"name": "get_time", "arguments": {{}}}}]',
    "plain_marker": f"<tool_call>[{G}]",
    "text_before": f"Sure.\n<|tool_call|>[{G}]",
    "text_after": f"<|tool_call|>[{G}] Done.",
    "no_array": f"<|tool_call|>{G}",
    "bad_between": f"<|tool_call|>[{G} x {G}]",
    "unclosed_array": f"<|tool_call|>[{G}",
    "unclosed_element": '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Pa',
    "no_name": '<|tool_call|>[{"arguments": {"city": "Paris"}}]',
    "no_arguments": '<|tool_call|>[{"name": "get_time"}]',
    "arguments_not_object": '<|tool_call|>[{"name": "get_weather", "arguments": "Paris"}]',
    "nested_name": '<|tool_call|>[{"arguments": {"name": "x"}, "name": "get_time"}]',
    "typed": '<|tool_call|>[{"name": "get_weather", "arguments": {"days": "3", "metric": "true"}}]',
    "spacing_kept": '<|tool_call|>[{"name": "get_weather", "arguments": {  "city" :"Paris" }}]',
    "braces_in_string": '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "}{]["}}]',
    "marker_inside": f"<|tool_call|>[{G}, <|tool_call|>[{G}]]",
    "two_regions": f"<|tool_call|>[{G}] and <tool_call>[{G}]",
    "empty_array": "<|tool_call|>[]",
    "marker_only": "<|tool_call|>",
    "unknown_tool": '<|tool_call|>[{"name": "launch", "arguments": {}}]',
}

M = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
_MISTRAL = {
    "one": M,
    "two": M + "[TOOL_CALLS]get_time[ARGS]{}",
    "brace_form": '[TOOL_CALLS]get_weather{"city": "Paris"}',
    "text_before": "Sure.\n" + M,
    "text_after_json": M + " Done.",
    "broken_json": '[TOOL_CALLS]get_weather[ARGS]{"city": ',
    "no_args": "[TOOL_CALLS]get_time",
    "empty_name": '[TOOL_CALLS][ARGS]{"city": "Paris"}',
    "name_in_args": '[TOOL_CALLS][ARGS]{"name": "get_weather"}',
    "typed": '[TOOL_CALLS]get_weather[ARGS]{"days": "3"}',
    "think_then_call": "[THINK]hmm[/THINK]" + M,
    "think_unclosed_call": "[THINK]hmm" + M,
    "legacy_list": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "spaced_name": '[TOOL_CALLS] get_weather [ARGS]{"city": "Paris"}',
    "unknown_tool": "[TOOL_CALLS]launch[ARGS]{}",
    "plain": "The capital of France is Paris.",
    "braces_in_content": "Use {curly} braces.",
}

#: Broken and unusual answers per parser, by label (recorded as `malformed/<label>`).
MALFORMED: dict[str, dict[str, dict[str, Any]]] = {
    "tool:hermes": _cases(_HERMES, TYPED_TOOLS),
    "tool:llama3_json": _cases(_LLAMA, TYPED_TOOLS),
    "tool:pythonic": _cases(_PYTHONIC, TYPED_TOOLS),
    "tool:llama4_pythonic": _cases(_PYTHONIC, TYPED_TOOLS),
    "tool:qwen3_coder": {
        **_cases(_QWEN3, TYPED_TOOLS),
        **{
            f"{label}/no_reasoning_parser": {
                "text": text,
                "tools": TYPED_TOOLS,
                "no_reasoning_parser": True,
            }
            for label, text in _QWEN3.items()
            if "think" in label or label == "text_before"
        },
    },
}
MALFORMED["tool:qwen3_xml"] = MALFORMED["tool:qwen3_coder"]
MALFORMED["tool:granite"] = _cases(_GRANITE, TYPED_TOOLS)
MALFORMED["tool:mistral"] = {
    **_cases(_MISTRAL, TYPED_TOOLS),
    **{
        f"{label}/no_reasoning_parser": {
            "text": text,
            "tools": TYPED_TOOLS,
            "no_reasoning_parser": True,
        }
        for label, text in _MISTRAL.items()
        if "think" in label
    },
}


def suggest_for_templates() -> dict[str, tuple[str, str]]:
    """The pair `suggest` picks for each shared template, by template name."""
    from tests.support.shared_data import template_files

    return suggest_each({path.stem: path.read_text(encoding="utf-8") for path in template_files()})


def serve_cases(pair: str) -> list[dict[str, Any]]:
    """Whole chat requests for `serve:TOOL+REASONING`: the menu's completions of the
    templates suggested this pair, with the menu's tools and without tools, and with
    thinking switched off in the kwargs."""
    path = REPO / "tests" / "support" / "answers" / "completions.json"
    if not path.exists():
        return []
    menu = json.loads(path.read_text(encoding="utf-8"))
    wanted = {t for t, p in suggest_for_templates().items() if "+".join(p) == pair}
    cases = []
    for entry in menu["entries"]:
        template = entry["template"].removesuffix(".jinja")
        if template not in wanted or "completion" not in entry:
            continue
        base = f"menu/{template}/{entry['kind']}"
        text = entry["completion"]
        cases.append({"name": base, "text": text, "tools": menu["tools"]})
        cases.append({"name": f"{base}/no_tools", "text": text, "tools": None})
        cases.append({
            "name": f"{base}/thinking_off", "text": text, "tools": menu["tools"],
            "kwargs": {"enable_thinking": False, "thinking": False},
        })  # fmt: skip
    return cases


def suggest_each(templates: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The (tool, reasoning) pair `suggest` picks for each template by name, among the
    registered parsers (the table oracles/vllm/answers/suggestions.json records)."""
    # Imported here: the recorder reads the cases above in vLLM's environment.
    from app.render.engines.vllm.answers.registry import REASONING_PARSERS, TOOL_PARSERS
    from app.render.engines.vllm.answers.suggest import suggest

    tools, reasonings = set(TOOL_PARSERS), set(REASONING_PARSERS)
    pairs = {}
    for name, text in templates.items():
        found = suggest(text, tools, reasonings)
        pairs[name] = (found.tool, found.reasoning)
    return pairs
