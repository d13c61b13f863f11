"""The TGI engine against the minijinja package run directly, over every template and
conversation of the corpus.

The reference takes the request TGI's router builds (`shape_request`, checked by TGI's own
tests in test_tgi_engine.py), applies TGI's template rewrites, and renders with a bare
`minijinja.Environment` (pycompat on, TGI's two functions), passing the inputs as Python
values. The engine must give the same prompt, or fail where the reference fails, for
every pair but those of `PYTHON_VALUE_TEMPLATES`: there the binding's Python objects
behave unlike the MiniJinja values TGI renders, and the engine is the one that does as
TGI does (see the tests at the end).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import minijinja
import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest, render_with
from app.render.engines.tgi import TgiEngine
from app.render.engines.tgi.router import shape_request
from tests.support.corpus import PINNED_NOW, case_request, load_conversations
from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()

#: Templates whose render depends on what the binding's Python values do differently:
#: a Python dict answers `.get(key, default)` (TGI's pycompat, MiniJinja 2.8, takes one
#: argument) and prints as a Python repr (a MiniJinja map prints as JSON-like text).
PYTHON_VALUE_TEMPLATES = {
    "Apriel-1.6-15b-Thinker-fixed.jinja": "message.get('content', '')",
    "Kimi-K2-Instruct.jinja": "message.get('name', 'unknown')",
    "Reka-Edge.jinja": 'msg.get("content", "")',
    "meetkai-functionary-medium-v3.2.jinja": "function.get('description', '')",
    "unsloth-Apriel-1.5.jinja": "{{ tool }} prints a map",
}

#: TGI's rewrites of the template text, as the reference applies them.
TGI_PATCHES = {
    "messages[0]['content'][0]['text']": "messages[0]['content']",
    "[::-1]": "|reverse",
    "{% generation %}": "",
    "{% endgeneration %}": "",
}


def _fail(text: str) -> None:
    raise ValueError(text)


def reference(template: str, case: dict[str, Any]) -> tuple[str, ...]:
    """("ok", prompt) from minijinja run directly on TGI's inputs, or ("error",)."""
    for old, new in TGI_PATCHES.items():
        template = template.replace(old, new)
    env = minijinja.Environment()
    env.pycompat = True
    env.add_function("raise_exception", _fail)
    env.add_function("strftime_now", PINNED_NOW.strftime)
    tokens = case["special_tokens"]
    try:
        reads_tools = "tools" in env.undeclared_variables_in_str(template, nested=True)
        shaped = shape_request(case["messages"], case["tools"], case["kwargs"], reads_tools)
        prompt = env.render_str(
            template,
            messages=shaped.messages,
            tools=shaped.tools,
            bos_token=tokens.get("bos_token"),
            eos_token=tokens.get("eos_token"),
            add_generation_prompt=True,
        )
    except Exception:
        return ("error",)
    final = shaped.messages[-1]
    if final["role"] == "assistant" and (at := prompt.rfind(final["content"])) >= 0:
        prompt = prompt[: at + len(final["content"])].rstrip()
    return ("ok", prompt)


def ours(template: str, case: dict[str, Any]) -> tuple[str, ...]:
    request = replace(case_request(case, template), engine="tgi")
    try:
        return ("ok", render_with(TgiEngine(), request).prompt)
    except TemplateProblem:
        return ("error",)


@cache
def differing_pairs() -> dict[str, list[str]]:
    """Conversation names per template where the engine and the reference differ."""
    found: dict[str, list[str]] = {}
    cases = load_conversations()
    for path in sorted(TEMPLATES_DIR.glob("*.jinja")):
        template = path.read_text(encoding="utf-8")
        for case in cases:
            if ours(template, case) != reference(template, case):
                found.setdefault(path.name, []).append(case["name"])
    return found


def test_the_engine_renders_as_minijinja_does_over_the_corpus() -> None:
    unexplained = {
        name: cases
        for name, cases in differing_pairs().items()
        if name not in PYTHON_VALUE_TEMPLATES
    }
    assert unexplained == {}


@pytest.mark.parametrize("template_name", sorted(PYTHON_VALUE_TEMPLATES))
def test_python_value_templates_still_differ(template_name: str) -> None:
    assert template_name in differing_pairs(), "no difference left: remove it from the list"


def _render(template: str, messages: list[dict[str, Any]], **fields: Any):
    return render_with(TgiEngine(), RenderRequest(template, messages, engine="tgi", **fields))


def test_map_get_takes_one_argument_as_in_tgi() -> None:
    with pytest.raises(TemplateProblem) as raised:
        _render("{{ messages[0].get('content', '') }}", [{"role": "user", "content": "hi"}])
    assert raised.value.type == "UnknownMethod"
    assert _render(
        "{{ messages[0].get('content') }}", [{"role": "user", "content": "hi"}]
    ).prompt == ("hi")


def test_a_map_prints_as_minijinja_prints_it() -> None:
    rendered = _render("{{ messages[0] }}", [{"role": "user", "content": "hi"}])
    assert rendered.prompt == '{"content": "hi", "role": "user"}'
