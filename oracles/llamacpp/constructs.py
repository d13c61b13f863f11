"""How llama.cpp treats single constructs and requests: `oracles/llamacpp/constructs.json`.

The llama.cpp engine renders with Python's Jinja and reproduces where llama.cpp's engine
(`common/jinja/`) differs: what it refuses ("NotImplemented: ..."), what it renders its
own way. Those differences move from build to build, so they are recorded, not written
down: each construct below is a one-line template rendered by the harness
(`oracles/llamacpp/harness/`) with llama-server's steps, and the fixture keeps the prompt or
the error text the build answers; so are a few conversations whose request llama-server
rewrites or refuses, and tool schemas its parsers read their own way (`schemas`: a call
read with each, or the error). The tests render and read the same with the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oracles.llamacpp import build as build_mod
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR

OUT = REPO / "oracles" / "llamacpp" / "constructs.json"

#: What every construct's template may read besides the conversation (chat_template_kwargs).
KWARGS = {"items": [{"n": 2, "s": "b"}, {"n": 1, "s": "A"}], "pairs": [[1, "x"], [0, "y"]]}

#: name: template. Each prints one value, or fails; the names say what they probe.
CONSTRUCTS: dict[str, str] = {
    # Tests llama.cpp registers, and whether it implements them.
    "sameas test on none": "{{ none is sameas none }}",
    "sameas test on equal strings": "{{ 'a' is sameas 'a' }}",
    "sameas test on small integers": "{{ 3 is sameas 3 }}",
    "filter test": "{{ 'upper' is filter }}",
    "escaped test": "{{ 'foo'|safe is escaped }}",
    "test with an argument, no parentheses": "{{ 3 is eq 3 }}",
    "iterable test on a mapping": "{{ {'a': 1} is iterable }}",
    "sequence test on a mapping": "{{ {'a': 1} is sequence }}",
    # String builtins.
    "replace filter": "{{ 'a-a-a' | replace('-', '+') }}",
    "replace filter with a count": "{{ 'a-a-a' | replace('-', '+', 1) }}",
    "replace method with a count": "{{ 'a-a-a'.replace('-', '+', 2) }}",
    "format with plain placeholders": "{{ '<a{}b{}>'.format(1, 'x') }}",
    "format of an integer": "{{ '{}'.format(1) }}",
    "format of none": "{{ '{}'.format(none) }}",
    "format with too few arguments": "{{ '{}{}'.format('a') }}",
    "format with a numbered field": "{{ '{0}'.format('x') }}",
    "format with a named field": "{{ '{name}'.format(name='x') }}",
    "format with a format spec": "{{ '{:>5}'.format(1) }}",
    "format filter with percent": "{{ '%s' | format(1) }}",
    "split without a separator": "{{ 'a  b'.split() | tojson }}",
    # Filters over lists.
    "map by attribute": "{{ items | map(attribute='n') | list }}",
    "map by a digit string on lists": "{{ pairs | map(attribute='1') | list }}",
    "map through a filter": "{{ ['1', '2'] | map('int') | list }}",
    "min of values": "{{ [3, 1, 2] | min }}",
    "max of values": "{{ [3, 1, 2] | max }}",
    "min by attribute": "{{ (items | min(attribute='n')).n }}",
    "max by attribute": "{{ (items | max(attribute='n')).n }}",
    "min of strings": "{{ ['b', 'A', 'a'] | min }}",
    "selectattr over mixed items": "{{ [{'a': 1}, 2] | selectattr('a') | list | length }}",
    "join by attribute": "{{ items | join(',', attribute='n') }}",
    "sort by attribute": "{{ items | sort(attribute='n') | map(attribute='n') | list }}",
    # Values and operators.
    "none in a mapping": "{{ none in {'low': 1} }}",
    "unary plus": "{{ +1 }}",
    "minus binds before a filter": "{{ -3 | abs }}",
    "index by a boolean": "{{ ['x', 'y'][true] }}",
    "member of undefined": "{{ missing.field.deeper }}|",
    "undefined plus text": "{{ missing + 'a' }}",
    "none plus text": "{{ none + 'a' }}",
    "default on none": "{{ none | default('d') }}",
    # How values print: llama.cpp writes a list's items one after another, a mapping,
    # none and undefined as nothing, a float with its trailing zeros trimmed.
    "printing a list": "{{ [1, 'a', [2.5, none, true]] }}",
    "printing a mapping": "{{ {'a': 1} }}|{{ items }}",
    "printing none": "{{ none }}|",
    "printing booleans and numbers": "{{ true }}|{{ false }}|{{ 1.0 }}|{{ 2.50 }}|{{ -3 }}",
    "string filter of a list": "{{ [1, 'a'] | string }}",
    "concatenating a list": "{{ 'x' ~ [1, 2] }}",
    "tojson": "{{ {'b': 1, 'a': [1, 'é']} | tojson }}",
    "tojson sorting keys": "{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}",
    "tojson ensuring ASCII": "{{ 'é' | tojson(ensure_ascii=true) }}",
    "dict global": "{{ dict(a=1) | tojson }}",
    "namespace from a mapping": "{% set ns = namespace({'a': 1}) %}{{ ns.a }}",
    "array append": "{% set xs = [1] %}{% set _ = xs.append(2) %}{{ xs | tojson }}",
    "raise_exception": "{{ raise_exception('stop') }}",
}


#: The template the request probes render: each message's role and content.
PLAIN = (
    "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}"
)
_CALL = {"type": "function", "id": "call_1", "function": {"name": "f", "arguments": "{}"}}
_HI = {"role": "user", "content": "Hi"}

#: name: (messages, chat_template_kwargs). What llama-server's request parsing does
#: with each conversation: it renders it, rewritten, or refuses it (HTTP 400).
REQUESTS: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "a developer message": ([{"role": "developer", "content": "Be brief."}, _HI], {}),
    "a final assistant message": ([_HI, {"role": "assistant", "content": "Hel"}], {}),
    "two final assistant messages": (
        [_HI, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}],
        {},
    ),
    "a final assistant message with a tool call": (
        [_HI, {"role": "assistant", "content": "", "tool_calls": [_CALL]}],
        {},
    ),
    "a user message without content": ([{"role": "user"}], {}),
    "enable_thinking as a string": ([_HI], {"enable_thinking": "yes"}),
}


#: Templates of our own that carry a handler's markers (llama.cpp picks the handler by
#: strings in the source): name: (template, messages). The final assistant message is
#: continued (a prefill), which each handler writes its own way.
_PREFILL = [_HI, {"role": "assistant", "content": "Hel", "reasoning_content": "Think"}]
HANDLER_REQUESTS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "LLM-jp Harmony prefill": (
        "{#- chat_format=llm-jp-harmony-v1 -#}{% for m in messages %}<|start|>{{ m.role }}"
        "{% if m.thinking %}<|channel|>analysis<|message|>{{ m.thinking }}<|end|>"
        "<|start|>{{ m.role }}{% endif %}<|channel|>final<|message|>{{ m.content }}"
        "{% if loop.last and m.role == 'assistant' %}<|return|>{% else %}<|end|>{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}<|start|>assistant{% endif %}",
        _PREFILL,
    ),
    "Ling 3 prefill": (
        "{#- <arg_key> -#}{% for m in messages %}<role>{{ m.role | upper }}</role>\n"
        "{{ m.content }}<|role_end|>{% endfor %}"
        "{% if add_generation_prompt %}<role>ASSISTANT</role>\n<think>{% endif %}",
        _PREFILL,
    ),
}


#: Tool parameters that llama.cpp's schema tree (common/json-schema.cpp) reads its own way:
#: refused ("JSON schema error at ..."), or typed so that a value reads as JSON or text.
SCHEMAS: dict[str, dict[str, Any]] = {
    "an unknown type": {"type": "object", "properties": {"x": {"type": "str"}}},
    "a format no string has": {
        "type": "object",
        "properties": {"x": {"format": "email"}},
        "required": ["x"],
    },
    "an empty enum": {"type": "object", "properties": {"x": {"enum": []}}},
    "a reference to another document": {
        "type": "object",
        "properties": {"x": {"$ref": "http://x/y"}},
    },
    "a string or null": {
        "type": "object",
        "properties": {"x": {"type": ["string", "null"]}},
        "required": ["x"],
    },
}
#: A shared template of each parser family, and a call of `f` with `x` that it writes.
SCHEMA_CALLS: dict[str, str] = {
    "Qwen3-Coder.jinja": (
        "<tool_call>\n<function=f>\n<parameter=x>\nnull\n</parameter>\n</function>\n</tool_call>"
    ),
    "Qwen-Qwen3-0.6B.jinja": '<tool_call>\n{"name": "f", "arguments": {"x": "a@b"}}\n</tool_call>',
    "MiniMax-M3.jinja": (
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<x>null'
        "]<]minimax[>[</x>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>"
    ),
    "GLM-4.7-Flash.jinja": (
        "<tool_call>f<arg_key>x</arg_key><arg_value>null</arg_value></tool_call>"
    ),
}


def schema_lines() -> list[dict[str, Any]]:
    """One chat completion per template and schema: the call read with `f(x)` declared."""
    lines = []
    for template, call in SCHEMA_CALLS.items():
        source = (TEMPLATES_DIR / template).read_text(encoding="utf-8")
        for name, parameters in SCHEMAS.items():
            function = {"name": "f", "description": "d", "parameters": parameters}
            lines.append(
                {
                    "id": f"{template} | {name}",
                    "template": source,
                    "messages": [{"role": "user", "content": "Hi"}],
                    "tools": [{"type": "function", "function": function}],
                    "completions": [call],
                }
            )
    return lines


def _reading(answer: dict[str, Any]) -> dict[str, Any]:
    """The tool calls read, or the error (the template's, or the parse's)."""
    result = (answer.get("results") or [{}])[0]
    if "error" in answer or "error" in result:
        return {"error": answer.get("error") or result["error"]}
    return {"tool_calls": result["result"]["tool_calls"]}


def harness_line(name: str, template: str) -> dict[str, Any]:
    """The /apply-template request that renders one construct."""
    return {
        "id": name,
        "template": template,
        "messages": [{"role": "user", "content": "Hi"}],
        "chat_template_kwargs": KWARGS,
        "server_checks": True,
    }


def request_line(name: str) -> dict[str, Any]:
    """The /apply-template request of one request probe (its template: PLAIN, or its
    handler's)."""
    if name in HANDLER_REQUESTS:
        template, messages = HANDLER_REQUESTS[name]
        return {"id": name, "template": template, "messages": messages, "server_checks": True}
    messages, kwargs = REQUESTS[name]
    line = {"id": name, "template": PLAIN, "messages": messages, "server_checks": True}
    if kwargs:
        line["chat_template_kwargs"] = kwargs
    return line


def _probes() -> dict[str, dict[str, Any]]:
    """Every request probe: its template (PLAIN unless a handler's), messages, kwargs."""
    probes = {
        name: {"messages": messages, "kwargs": kwargs}
        for name, (messages, kwargs) in REQUESTS.items()
    }
    for name, (template, messages) in HANDLER_REQUESTS.items():
        probes[name] = {"template": template, "messages": messages, "kwargs": {}}
    return probes


def _outcome(answer: dict[str, Any]) -> dict[str, Any]:
    """The prompt, or the error text."""
    return {"error": answer["error"]} if "error" in answer else {"prompt": answer["prompt"]}


def record(build: Path, llama_cpp: Path, identity: dict[str, str]) -> dict[str, Any]:
    """Render every construct with the built harness; the fixture document."""
    program = build_mod.ensure_harness(build, llama_cpp)
    lines = [harness_line(name, template) for name, template in CONSTRUCTS.items()]
    probes = _probes()
    lines += [request_line(name) for name in probes]
    checked = schema_lines()
    lines += checked
    answers = build_mod.run_harness(program, lines, build / "constructs-stderr.log")
    schemas = {
        line["id"]: {
            "template": line["id"].split(" | ")[0],
            "parameters": line["tools"][0]["function"]["parameters"],
            "completion": line["completions"][0],
            **_reading(answer),
        }
        for line, answer in zip(checked, answers[-len(checked) :], strict=True)
    }
    constructs = {
        name: {"template": template, **_outcome(answer)}
        for (name, template), answer in zip(CONSTRUCTS.items(), answers, strict=False)
    }
    requests = {
        name: {**probe, **_outcome(answer)}
        for (name, probe), answer in zip(
            probes.items(), answers[len(CONSTRUCTS) : len(CONSTRUCTS) + len(probes)], strict=True
        )
    }
    return {
        **identity,
        "recorded_by": "python -m oracles.llamacpp.record",
        "about": (
            "One-line templates (`constructs`), and conversations rendered with a plain template "
            "or a handler's (`requests`), through llama.cpp's own common library with "
            "llama-server's /apply-template steps (oracles/llamacpp/harness): the prompt, or the "
            "error text; and (`schemas`) a tool call read as a chat completion with tool "
            "parameters its schema tree reads its own way: the calls, or the error."
        ),
        "kwargs": KWARGS,
        "constructs": constructs,
        "request_template": PLAIN,
        "requests": requests,
        "schemas": schemas,
    }


def write(document: dict[str, Any]) -> str:
    """Write the fixture; a one-line summary."""
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("error" in c for c in document["constructs"].values())
    refused = sum("error" in c for c in document["requests"].values())
    counts = f"{len(document['constructs'])} constructs ({errors} refused)"
    counts += f", {len(document['requests'])} requests ({refused} refused)"
    return f"{OUT}: {counts}, {len(document['schemas'])} schema readings"
